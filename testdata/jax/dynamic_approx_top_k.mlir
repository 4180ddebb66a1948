// jax.lax.approx_max_k(x, b) of x: f32[b + 4] with b symbolic, as JAX exported
// it for its shape-polymorphic backward-compatibility test
// (jax/_src/internal_test_util/export_back_compat_test_data/
// stablehlo_dynamic_approx_top_k.py, data_2024_05_30). Argument there:
// arange(24.); expected 23, 22, ..., 4 and the same indices
// (TestJAXExportedDynamicShapes).
#loc = loc(unknown)
#loc2 = loc("third_party/py/jax/tests/export_back_compat_test.py":718:13)
#loc3 = loc("a")
#loc9 = loc("jit(func)/jit(main)/approx_top_k[k=b reduction_dimension=-1 recall_target=0.95 is_max_k=True reduction_input_size_override=-1 aggregate_to_topk=True]"(#loc2))
module @jit_func attributes {jax.uses_shape_polymorphism = true, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<?xf32> {mhlo.layout_mode = "default"} loc(unknown)) -> (tensor<?xf32> {jax.result_info = "[0]", mhlo.layout_mode = "default"}, tensor<?xi32> {jax.result_info = "[1]", mhlo.layout_mode = "default"}) {
    %0 = stablehlo.get_dimension_size %arg0, dim = 0 : (tensor<?xf32>) -> tensor<i32> loc(#loc4)
    %1 = stablehlo.convert %0 : (tensor<i32>) -> tensor<i64> loc(#loc4)
    %2 = stablehlo.convert %1 : tensor<i64> loc(#loc5)
    %c = stablehlo.constant dense<-4> : tensor<i64> loc(#loc)
    %3 = stablehlo.add %2, %c : tensor<i64> loc(#loc6)
    %c_0 = stablehlo.constant dense<1> : tensor<i64> loc(#loc)
    %4 = stablehlo.compare  GE, %3, %c_0,  SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1> loc(#loc7)
    stablehlo.custom_call @shape_assertion(%4, %3, %1) {api_version = 2 : i32, error_message = "Input shapes do not match the polymorphic shapes specification. Expected value >= 1 for dimension variable 'b'. Using the following polymorphic shapes specifications: args[0].shape = (b + 4,). Obtained dimension variables: 'b' = {0} from specification 'b + 4' for dimension args[0].shape[0] (= {1}), . Please see https://github.com/googlexjax/blob/main/jax/experimental/jax2tf/README.md#shape-assertion-errors for more details.", has_side_effect = true} : (tensor<i1>, tensor<i64>, tensor<i64>) -> () loc(#loc8)
    %5:2 = call @_wrapped_jax_export_main(%3, %arg0) : (tensor<i64>, tensor<?xf32>) -> (tensor<?xf32>, tensor<?xi32>) loc(#loc)
    return %5#0, %5#1 : tensor<?xf32>, tensor<?xi32> loc(#loc)
  } loc(#loc)
  func.func @top_k_gt_f32_comparator(%arg0: tensor<f32> loc("jit(func)/jit(main)/approx_top_k[k=b reduction_dimension=-1 recall_target=0.95 is_max_k=True reduction_input_size_override=-1 aggregate_to_topk=True]"(#loc2)), %arg1: tensor<f32> loc("jit(func)/jit(main)/approx_top_k[k=b reduction_dimension=-1 recall_target=0.95 is_max_k=True reduction_input_size_override=-1 aggregate_to_topk=True]"(#loc2)), %arg2: tensor<i32> loc("jit(func)/jit(main)/approx_top_k[k=b reduction_dimension=-1 recall_target=0.95 is_max_k=True reduction_input_size_override=-1 aggregate_to_topk=True]"(#loc2)), %arg3: tensor<i32> loc("jit(func)/jit(main)/approx_top_k[k=b reduction_dimension=-1 recall_target=0.95 is_max_k=True reduction_input_size_override=-1 aggregate_to_topk=True]"(#loc2))) -> tensor<i1> {
    %0 = stablehlo.compare  GT, %arg0, %arg1 : (tensor<f32>, tensor<f32>) -> tensor<i1> loc(#loc9)
    return %0 : tensor<i1> loc(#loc9)
  } loc(#loc9)
  func.func private @_wrapped_jax_export_main(%arg0: tensor<i64> {jax.global_constant = "b", mhlo.layout_mode = "default"} loc(unknown), %arg1: tensor<?xf32> {mhlo.layout_mode = "default"} loc("a")) -> (tensor<?xf32> {jax.result_info = "[0]", mhlo.layout_mode = "default"}, tensor<?xi32> {jax.result_info = "[1]", mhlo.layout_mode = "default"}) {
    %0 = stablehlo.convert %arg0 : tensor<i64> loc(#loc10)
    %c = stablehlo.constant dense<4> : tensor<i64> loc(#loc9)
    %1 = stablehlo.add %0, %c : tensor<i64> loc(#loc11)
    %2 = stablehlo.convert %1 : (tensor<i64>) -> tensor<i32> loc(#loc9)
    %3 = stablehlo.reshape %2 : (tensor<i32>) -> tensor<1xi32> loc(#loc9)
    %4 = stablehlo.dynamic_iota %3, dim = 0 : (tensor<1xi32>) -> tensor<?xi32> loc(#loc9)
    %c_0 = stablehlo.constant dense<-1> : tensor<i32> loc(#loc9)
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32> loc(#loc9)
    %5 = stablehlo.convert %arg0 : (tensor<i64>) -> tensor<i32> loc(#loc9)
    %6 = stablehlo.reshape %5 : (tensor<i32>) -> tensor<1xi32> loc(#loc9)
    %7 = stablehlo.convert %arg0 : (tensor<i64>) -> tensor<i32> loc(#loc9)
    %8 = stablehlo.reshape %7 : (tensor<i32>) -> tensor<1xi32> loc(#loc9)
    %9 = stablehlo.convert %arg0 : (tensor<i64>) -> tensor<i32> loc(#loc9)
    %10:2 = stablehlo.custom_call @stablehlo.dynamic_approx_top_k(%arg1, %4, %cst, %c_0, %9, %6, %8) {called_computations = [@top_k_gt_f32_comparator], indices_of_shape_operands = dense<[5, 6]> : tensor<2xi64>, mhlo.backend_config = {aggregate_to_topk = true, is_fallback = true, recall_target = 0.949999988 : f32, reduction_dim = 0 : i64, reduction_input_size_override = -1 : i64}} : (tensor<?xf32>, tensor<?xi32>, tensor<f32>, tensor<i32>, tensor<i32>, tensor<1xi32>, tensor<1xi32>) -> (tensor<?xf32>, tensor<?xi32>) loc(#loc9)
    return %10#0, %10#1 : tensor<?xf32>, tensor<?xi32> loc(#loc)
  } loc(#loc)
} loc(#loc)
#loc1 = loc("third_party/py/jax/tests/export_back_compat_test.py":738:4)
#loc4 = loc("/dimension_size[dimension=0]"(#loc1))
#loc5 = loc("/convert_element_type[new_dtype=int64 weak_type=False]"(#loc1))
#loc6 = loc("/add"(#loc1))
#loc7 = loc("/ge"(#loc1))
#loc8 = loc("/shape_assertion[error_message=Input shapes do not match the polymorphic shapes specification. Expected value >= 1 for dimension variable 'b'. Using the following polymorphic shapes specifications: args[0].shape = (b + 4,). Obtained dimension variables: 'b' = {0} from specification 'b + 4' for dimension args[0].shape[0] (= {1}), . Please see https://github.com/googlexjax/blob/main/jax/experimental/jax2tf/README.md#shape-assertion-errors for more details.]"(#loc1))
#loc10 = loc("jit(func)/jit(main)/convert_element_type[new_dtype=int64 weak_type=False]"(#loc2))
#loc11 = loc("jit(func)/jit(main)/add"(#loc2))
