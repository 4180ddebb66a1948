// jax.lax.top_k(x, b - 1) of x: f32[4, b] with b symbolic, as JAX exported it
// for its shape-polymorphic backward-compatibility test
// (jax/_src/internal_test_util/export_back_compat_test_data/
// stablehlo_dynamic_top_k.py, data_2023_08_11: with a shape_assertion).
// Argument there: arange(12.).reshape(4, 3); expected [[2, 1], [5, 4], [8, 7],
// [11, 10]] and indices [[2, 1]] * 4 (TestJAXExportedDynamicShapes).
#loc = loc(unknown)
module @jit_func attributes {jax.uses_shape_polymorphism = true, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x?xf32> {mhlo.sharding = "{replicated}"} loc(unknown)) -> (tensor<4x?xf32> {jax.result_info = "[0]"}, tensor<4x?xi32> {jax.result_info = "[1]"}) {
    %0 = stablehlo.get_dimension_size %arg0, dim = 1 : (tensor<4x?xf32>) -> tensor<i32> loc(#loc3)
    %1 = stablehlo.constant dense<1> : tensor<i32> loc(#loc)
    %2 = stablehlo.compare  GE, %0, %1,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1> loc(#loc4)
    stablehlo.custom_call @shape_assertion(%2, %0) {api_version = 2 : i32, error_message = "Input shapes do not match the polymorphic shapes specification. Expected value >= 1 for dimension variable 'b'. Using the following polymorphic shapes specifications: args[0].shape = (4, b). Obtained dimension variables: 'b' = {0} from specification 'b' for dimension args[0].shape[1] (= {0}), . Please see https://github.com/googlexjax/blob/main/jax/experimental/jax2tf/README.md#shape-assertion-errors for more details.", has_side_effect = true} : (tensor<i1>, tensor<i32>) -> () loc(#loc5)
    %3 = stablehlo.constant dense<> : tensor<0xi1> loc(#loc)
    %4 = stablehlo.convert %arg0 : tensor<4x?xf32> loc(#loc)
    %5:2 = call @_wrapped_jax_export_main(%0, %4) : (tensor<i32>, tensor<4x?xf32>) -> (tensor<4x?xf32>, tensor<4x?xi32>) loc(#loc)
    return %5#0, %5#1 : tensor<4x?xf32>, tensor<4x?xi32> loc(#loc)
  } loc(#loc)
  func.func private @_wrapped_jax_export_main(%arg0: tensor<i32> loc(unknown), %arg1: tensor<4x?xf32> {mhlo.sharding = "{replicated}"} loc(unknown)) -> (tensor<4x?xf32> {jax.result_info = "[0]"}, tensor<4x?xi32> {jax.result_info = "[1]"}) {
    %0 = stablehlo.convert %arg0 : tensor<i32> loc(#loc6)
    %1 = stablehlo.constant dense<-1> : tensor<i32> loc(#loc7)
    %2 = stablehlo.add %0, %1 : tensor<i32> loc(#loc8)
    %3:2 = stablehlo.custom_call @stablehlo.dynamic_top_k(%arg1, %2) {api_version = 2 : i32} : (tensor<4x?xf32>, tensor<i32>) -> (tensor<4x?xf32>, tensor<4x?xi32>) loc(#loc7)
    return %3#0, %3#1 : tensor<4x?xf32>, tensor<4x?xi32> loc(#loc)
  } loc(#loc)
} loc(#loc)
#loc1 = loc("/Users/necula/Source/jax/jax/experimental/jax2tf/tests/back_compat_test.py":698:0)
#loc2 = loc("/Users/necula/Source/jax/jax/experimental/jax2tf/tests/back_compat_test.py":684:0)
#loc3 = loc("/dimension_size[dimension=1]"(#loc1))
#loc4 = loc("/ge"(#loc1))
#loc5 = loc("/shape_assertion[error_message=Input shapes do not match the polymorphic shapes specification. Expected value >= 1 for dimension variable 'b'. Using the following polymorphic shapes specifications: args[0].shape = (4, b). Obtained dimension variables: 'b' = {0} from specification 'b' for dimension args[0].shape[1] (= {0}), . Please see https://github.com/googlexjax/blob/main/jax/experimental/jax2tf/README.md#shape-assertion-errors for more details.]"(#loc1))
#loc6 = loc("jit(func)/jit(main)/convert_element_type[new_dtype=int32 weak_type=False]"(#loc2))
#loc7 = loc("jit(func)/jit(main)/top_k[k=b + -1]"(#loc2))
#loc8 = loc("jit(func)/jit(main)/add"(#loc2))
