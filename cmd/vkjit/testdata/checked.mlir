// A conformance-style module with a parameter: the entry's result is
// x + 1, and a check compares its first element with 2.
func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
  %one = stablehlo.constant dense<1.0> : tensor<3xf32>
  %y = stablehlo.add %x, %one : tensor<3xf32>
  %first = stablehlo.slice %y [0:1] : (tensor<3xf32>) -> tensor<1xf32>
  check.expect_eq_const %first, dense<2.0> : tensor<1xf32>
  func.return %y : tensor<3xf32>
}
