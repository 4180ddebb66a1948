// graph.hlo's transformer block written in StableHLO as JAX prints it,
// the layer norm a private function called twice (as a jax.jit inside
// jax.jit lowers): the same inputs and expected outputs (programs.py).
module @jit_transformer_block attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<16x32xf32>, %arg1: tensor<32xf32>, %arg2: tensor<32xf32>, %arg3: tensor<32x32xf32>, %arg4: tensor<32x32xf32>, %arg5: tensor<32x32xf32>, %arg6: tensor<32x32xf32>, %arg7: tensor<32xf32>, %arg8: tensor<32xf32>, %arg9: tensor<32x64xf32>, %arg10: tensor<64xf32>, %arg11: tensor<64x32xf32>, %arg12: tensor<32xf32>) -> (tensor<16x32xf32> {jax.result_info = ""}) {
    %0 = call @layer_norm(%arg0, %arg1, %arg2) : (tensor<16x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<16x32xf32>
    %1 = stablehlo.dot_general %0, %arg3, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<16x32xf32>, tensor<32x32xf32>) -> tensor<16x32xf32>
    %2 = stablehlo.dot_general %0, %arg4, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<16x32xf32>, tensor<32x32xf32>) -> tensor<16x32xf32>
    %3 = stablehlo.dot_general %0, %arg5, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<16x32xf32>, tensor<32x32xf32>) -> tensor<16x32xf32>
    %4 = stablehlo.dot_general %1, %2, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<16x32xf32>, tensor<16x32xf32>) -> tensor<16x16xf32>
    %cst = stablehlo.constant dense<0.176776692> : tensor<f32>
    %5 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<16x16xf32>
    %6 = stablehlo.multiply %4, %5 : tensor<16x16xf32>
    %7 = stablehlo.iota dim = 0 : tensor<16x16xi32>
    %8 = stablehlo.iota dim = 1 : tensor<16x16xi32>
    %9 = stablehlo.compare  GE, %7, %8,  SIGNED : (tensor<16x16xi32>, tensor<16x16xi32>) -> tensor<16x16xi1>
    %cst_0 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %10 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<16x16xf32>
    %11 = stablehlo.select %9, %6, %10 : tensor<16x16xi1>, tensor<16x16xf32>
    %12 = stablehlo.reduce(%11 init: %cst_0) applies stablehlo.maximum across dimensions = [1] : (tensor<16x16xf32>, tensor<f32>) -> tensor<16xf32>
    %13 = stablehlo.broadcast_in_dim %12, dims = [0] : (tensor<16xf32>) -> tensor<16x16xf32>
    %14 = stablehlo.subtract %11, %13 : tensor<16x16xf32>
    %15 = stablehlo.exponential %14 : tensor<16x16xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %16 = stablehlo.reduce(%15 init: %cst_1) applies stablehlo.add across dimensions = [1] : (tensor<16x16xf32>, tensor<f32>) -> tensor<16xf32>
    %17 = stablehlo.broadcast_in_dim %16, dims = [0] : (tensor<16xf32>) -> tensor<16x16xf32>
    %18 = stablehlo.divide %15, %17 : tensor<16x16xf32>
    %19 = stablehlo.dot_general %18, %3, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<16x16xf32>, tensor<16x32xf32>) -> tensor<16x32xf32>
    %20 = stablehlo.dot_general %19, %arg6, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<16x32xf32>, tensor<32x32xf32>) -> tensor<16x32xf32>
    %21 = stablehlo.add %arg0, %20 : tensor<16x32xf32>
    %22 = call @layer_norm(%21, %arg7, %arg8) : (tensor<16x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<16x32xf32>
    %23 = stablehlo.dot_general %22, %arg9, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<16x32xf32>, tensor<32x64xf32>) -> tensor<16x64xf32>
    %24 = stablehlo.broadcast_in_dim %arg10, dims = [1] : (tensor<64xf32>) -> tensor<16x64xf32>
    %25 = stablehlo.add %23, %24 : tensor<16x64xf32>
    %26 = stablehlo.multiply %25, %25 : tensor<16x64xf32>
    %27 = stablehlo.multiply %25, %26 : tensor<16x64xf32>
    %cst_2 = stablehlo.constant dense<4.471500e-02> : tensor<16x64xf32>
    %28 = stablehlo.multiply %cst_2, %27 : tensor<16x64xf32>
    %29 = stablehlo.add %25, %28 : tensor<16x64xf32>
    %cst_3 = stablehlo.constant dense<0.797884583> : tensor<16x64xf32>
    %30 = stablehlo.multiply %cst_3, %29 : tensor<16x64xf32>
    %31 = stablehlo.tanh %30 : tensor<16x64xf32>
    %cst_4 = stablehlo.constant dense<1.000000e+00> : tensor<16x64xf32>
    %cst_5 = stablehlo.constant dense<5.000000e-01> : tensor<16x64xf32>
    %32 = stablehlo.multiply %cst_5, %25 : tensor<16x64xf32>
    %33 = stablehlo.add %cst_4, %31 : tensor<16x64xf32>
    %34 = stablehlo.multiply %32, %33 : tensor<16x64xf32>
    %35 = stablehlo.dot_general %34, %arg11, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<16x64xf32>, tensor<64x32xf32>) -> tensor<16x32xf32>
    %36 = stablehlo.broadcast_in_dim %arg12, dims = [1] : (tensor<32xf32>) -> tensor<16x32xf32>
    %37 = stablehlo.add %35, %36 : tensor<16x32xf32>
    %38 = stablehlo.add %21, %37 : tensor<16x32xf32>
    return %38 : tensor<16x32xf32>
  }
  func.func private @layer_norm(%arg0: tensor<16x32xf32>, %arg1: tensor<32xf32>, %arg2: tensor<32xf32>) -> tensor<16x32xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<16x32xf32>, tensor<f32>) -> tensor<16xf32>
    %cst_0 = stablehlo.constant dense<3.125000e-02> : tensor<16xf32>
    %1 = stablehlo.multiply %0, %cst_0 : tensor<16xf32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [0] : (tensor<16xf32>) -> tensor<16x32xf32>
    %3 = stablehlo.subtract %arg0, %2 : tensor<16x32xf32>
    %4 = stablehlo.multiply %3, %3 : tensor<16x32xf32>
    %5 = stablehlo.reduce(%4 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<16x32xf32>, tensor<f32>) -> tensor<16xf32>
    %6 = stablehlo.multiply %5, %cst_0 : tensor<16xf32>
    %cst_1 = stablehlo.constant dense<9.99999974E-6> : tensor<16xf32>
    %7 = stablehlo.add %6, %cst_1 : tensor<16xf32>
    %8 = stablehlo.rsqrt %7 : tensor<16xf32>
    %9 = stablehlo.broadcast_in_dim %8, dims = [0] : (tensor<16xf32>) -> tensor<16x32xf32>
    %10 = stablehlo.multiply %3, %9 : tensor<16x32xf32>
    %11 = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<32xf32>) -> tensor<16x32xf32>
    %12 = stablehlo.multiply %10, %11 : tensor<16x32xf32>
    %13 = stablehlo.broadcast_in_dim %arg2, dims = [1] : (tensor<32xf32>) -> tensor<16x32xf32>
    %14 = stablehlo.add %12, %13 : tensor<16x32xf32>
    return %14 : tensor<16x32xf32>
  }
}
