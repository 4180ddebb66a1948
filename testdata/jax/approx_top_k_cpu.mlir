// jax.lax.approx_max_k(x, 20) of x = arange(24.) as JAX's CPU lowering
// writes it (is_fallback: XLA computes it exactly), with the static shapes
// of JAX's shape-polymorphic backward-compatibility test
// (jax/_src/internal_test_util/export_back_compat_test_data/
// stablehlo_dynamic_approx_top_k.py, data_2024_05_30, which runs it as
// stablehlo.dynamic_approx_top_k). Expected there: 23, 22, ..., 4 and the
// same indices.
module @jit_func attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<24xf32>) -> (tensor<20xf32> {jax.result_info = "[0]"}, tensor<20xi32> {jax.result_info = "[1]"}) {
    %0 = stablehlo.iota dim = 0 : tensor<24xi32>
    %c = stablehlo.constant dense<-1> : tensor<i32>
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %1:2 = stablehlo.custom_call @ApproxTopK(%arg0, %0, %cst, %c) {called_computations = [@top_k_gt_f32_comparator], mhlo.backend_config = {aggregate_to_topk = true, is_fallback = true, recall_target = 0.949999988 : f32, reduction_dim = 0 : i64, reduction_input_size_override = -1 : i64, top_k = 20 : i64}} : (tensor<24xf32>, tensor<24xi32>, tensor<f32>, tensor<i32>) -> (tensor<20xf32>, tensor<20xi32>)
    return %1#0, %1#1 : tensor<20xf32>, tensor<20xi32>
  }
  func.func @top_k_gt_f32_comparator(%arg0: tensor<f32>, %arg1: tensor<f32>, %arg2: tensor<i32>, %arg3: tensor<i32>) -> tensor<i1> {
    %0 = stablehlo.compare  GT, %arg0, %arg1 : (tensor<f32>, tensor<f32>) -> tensor<i1>
    return %0 : tensor<i1>
  }
}
