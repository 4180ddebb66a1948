// A softmax over rows of a batch of symbolic size b, plus the row index
// (dynamic_iota), then three steps of a loop that carries the batch, in
// the form jax.export writes for symbolic shapes.
module @jit_f attributes {jax.uses_shape_polymorphism = true, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<?x8xf32>) -> (tensor<?x8xf32> {jax.result_info = ""}, tensor<?xf32>) {
    %0 = stablehlo.get_dimension_size %arg0, dim = 0 : (tensor<?x8xf32>) -> tensor<i32>
    %1 = stablehlo.convert %0 : (tensor<i32>) -> tensor<i64>
    %c = stablehlo.constant dense<1> : tensor<i64>
    %2 = stablehlo.compare GE, %1, %c, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
    stablehlo.custom_call @shape_assertion(%2, %1) {api_version = 2 : i32, error_message = "Expected value >= 1 for dimension variable 'b', got {0}", has_side_effect = true} : (tensor<i1>, tensor<i64>) -> ()
    %3:2 = call @_wrapped_jax_export_main(%1, %arg0) : (tensor<i64>, tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?xf32>)
    return %3#0, %3#1 : tensor<?x8xf32>, tensor<?xf32>
  }
  func.func private @_wrapped_jax_export_main(%arg0: tensor<i64> {jax.global_constant = "b"}, %arg1: tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?xf32>) {
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %0 = stablehlo.reduce(%arg1 init: %cst) applies stablehlo.maximum across dimensions = [1] : (tensor<?x8xf32>, tensor<f32>) -> tensor<?xf32>
    %1 = stablehlo.convert %arg0 : (tensor<i64>) -> tensor<i32>
    %2 = stablehlo.reshape %1 : (tensor<i32>) -> tensor<1xi32>
    %c = stablehlo.constant dense<8> : tensor<1xi32>
    %3 = stablehlo.concatenate %2, %c, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
    %4 = stablehlo.dynamic_broadcast_in_dim %0, %3, dims = [0] : (tensor<?xf32>, tensor<2xi32>) -> tensor<?x8xf32>
    %5 = stablehlo.subtract %arg1, %4 : tensor<?x8xf32>
    %6 = stablehlo.exponential %5 : tensor<?x8xf32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %7 = stablehlo.reduce(%6 init: %cst_0) applies stablehlo.add across dimensions = [1] : (tensor<?x8xf32>, tensor<f32>) -> tensor<?xf32>
    %8 = stablehlo.dynamic_broadcast_in_dim %7, %3, dims = [0] : (tensor<?xf32>, tensor<2xi32>) -> tensor<?x8xf32>
    %9 = stablehlo.divide %6, %8 : tensor<?x8xf32>
    %10 = stablehlo.dynamic_iota %3, dim = 0 : (tensor<2xi32>) -> tensor<?x8xf32>
    %11 = stablehlo.add %9, %10 : tensor<?x8xf32>
    %c_1 = stablehlo.constant dense<0> : tensor<i64>
    %12:2 = stablehlo.while(%iterArg = %c_1, %iterArg_2 = %11) : tensor<i64>, tensor<?x8xf32>
    cond {
      %c_3 = stablehlo.constant dense<3> : tensor<i64>
      %14 = stablehlo.compare LT, %iterArg, %c_3, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
      stablehlo.return %14 : tensor<i1>
    } do {
      %c_3 = stablehlo.constant dense<1> : tensor<i64>
      %14 = stablehlo.add %iterArg, %c_3 : tensor<i64>
      %15 = stablehlo.multiply %iterArg_2, %iterArg_2 : tensor<?x8xf32>
      stablehlo.return %14, %15 : tensor<i64>, tensor<?x8xf32>
    }
    %13 = stablehlo.reduce(%12#1 init: %cst_0) applies stablehlo.add across dimensions = [1] : (tensor<?x8xf32>, tensor<f32>) -> tensor<?xf32>
    return %12#1, %13 : tensor<?x8xf32>, tensor<?xf32>
  }
}
