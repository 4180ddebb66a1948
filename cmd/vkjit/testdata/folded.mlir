// A conformance-style module whose input is a constant, as in
// StableHLO's suite: the compiler folds its ops on the host unless
// `vkjit test --constants-as-args` passes the constants as arguments.
// The f16 exp of -17.15625 is 2^-24, the smallest subnormal.
func.func @main() -> tensor<3xf16> {
  %x = stablehlo.constant dense<[0.0, 1.0, -17.15625]> : tensor<3xf16>
  %want = stablehlo.constant dense<[1.0, 2.71875, 5.96046448E-8]> : tensor<3xf16>
  %e = stablehlo.exponential %x : tensor<3xf16>
  check.expect_eq %e, %want : tensor<3xf16>
  func.return %e : tensor<3xf16>
}
