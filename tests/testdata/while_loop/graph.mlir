// graph.hlo's power iteration in StableHLO, as JAX prints a
// jax.lax.fori_loop: 40 steps of v = A v / |A v| in a stablehlo.while,
// then the Rayleigh quotient v.Av. The same inputs and expected outputs
// (programs.py).
module @jit_power_iteration attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<16x16xf32>, %arg1: tensor<16xf32>) -> (tensor<16xf32> {jax.result_info = "[0]"}, tensor<f32> {jax.result_info = "[1]"}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0:3 = stablehlo.while(%iterArg = %c, %iterArg_0 = %arg1, %iterArg_1 = %arg0) : tensor<i32>, tensor<16xf32>, tensor<16x16xf32>
     cond {
      %c_2 = stablehlo.constant dense<40> : tensor<i32>
      %4 = stablehlo.compare  LT, %iterArg, %c_2,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %4 : tensor<i1>
    } do {
      %4 = stablehlo.dot_general %iterArg_1, %iterArg_0, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<16x16xf32>, tensor<16xf32>) -> tensor<16xf32>
      %5 = stablehlo.dot_general %4, %4, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<16xf32>, tensor<16xf32>) -> tensor<f32>
      %6 = stablehlo.sqrt %5 : tensor<f32>
      %7 = stablehlo.broadcast_in_dim %6, dims = [] : (tensor<f32>) -> tensor<16xf32>
      %8 = stablehlo.divide %4, %7 : tensor<16xf32>
      %c_2 = stablehlo.constant dense<1> : tensor<i32>
      %9 = stablehlo.add %iterArg, %c_2 : tensor<i32>
      stablehlo.return %9, %8, %iterArg_1 : tensor<i32>, tensor<16xf32>, tensor<16x16xf32>
    }
    %1 = stablehlo.dot_general %arg0, %0#1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<16x16xf32>, tensor<16xf32>) -> tensor<16xf32>
    %2 = stablehlo.dot_general %0#1, %1, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<16xf32>, tensor<16xf32>) -> tensor<f32>
    return %0#1, %2 : tensor<16xf32>, tensor<f32>
  }
}
