// One dense layer with a ReLU and a softmax over rows, in the pretty
// form JAX prints by default (jax.jit(f).lower(...).as_text()).
module @jit_layer attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x8xf32> {mhlo.layout_mode = "default"}, %arg1: tensor<8x3xf32>, %arg2: tensor<3xf32>) -> (tensor<4x3xf32> {jax.result_info = ""}) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
    %1 = stablehlo.broadcast_in_dim %arg2, dims = [1] : (tensor<3xf32>) -> tensor<4x3xf32>
    %2 = stablehlo.add %0, %1 : tensor<4x3xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %3 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4x3xf32>
    %4 = stablehlo.maximum %2, %3 : tensor<4x3xf32>
    %cst_0 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %5 = stablehlo.reduce(%4 init: %cst_0) applies stablehlo.maximum across dimensions = [1] : (tensor<4x3xf32>, tensor<f32>) -> tensor<4xf32>
    %6 = stablehlo.broadcast_in_dim %5, dims = [0] : (tensor<4xf32>) -> tensor<4x3xf32>
    %7 = stablehlo.subtract %4, %6 : tensor<4x3xf32>
    %8 = stablehlo.exponential %7 : tensor<4x3xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %9 = stablehlo.reduce(%8 init: %cst_1) across dimensions = [1] : (tensor<4x3xf32>, tensor<f32>) -> tensor<4xf32>
     reducer(%a: tensor<f32>, %b: tensor<f32>)  {
      %12 = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %12 : tensor<f32>
    }
    %10 = stablehlo.broadcast_in_dim %9, dims = [0] : (tensor<4xf32>) -> tensor<4x3xf32>
    %11 = stablehlo.divide %8, %10 : tensor<4x3xf32>
    return %11 : tensor<4x3xf32>
  }
}
