// jax.lax.linalg.tridiagonal_solve of a batch of two 4x4 systems with
// three right-hand sides, complex128, as JAX exported it for its CPU
// backward-compatibility tests (jax/_src/internal_test_util/
// export_back_compat_test_data/cpu_tridiagonal_solve_lapack_gtsv.py,
// data_2025_01_09["c128"]); its inputs and LAPACK's solution are in
// tridiagonal_solve_c128.npz (dl, d, du, b, want).
#loc1 = loc("dl")
#loc2 = loc("d")
#loc3 = loc("du")
#loc4 = loc("b")
module @jit_tridiagonal_solve attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x4xcomplex<f64>> loc("dl"), %arg1: tensor<2x4xcomplex<f64>> loc("d"), %arg2: tensor<2x4xcomplex<f64>> loc("du"), %arg3: tensor<2x4x3xcomplex<f64>> loc("b")) -> (tensor<2x4x3xcomplex<f64>> {jax.result_info = ""}) {
    %cst = stablehlo.constant dense<(0x7FF8000000000000,0x7FF8000000000000)> : tensor<complex<f64>> loc(#loc)
    %c = stablehlo.constant dense<0> : tensor<i32> loc(#loc)
    %0:5 = stablehlo.custom_call @lapack_zgtsv_ffi(%arg0, %arg1, %arg2, %arg3) {mhlo.backend_config = {}, operand_layouts = [dense<[1, 0]> : tensor<2xindex>, dense<[1, 0]> : tensor<2xindex>, dense<[1, 0]> : tensor<2xindex>, dense<[1, 2, 0]> : tensor<3xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>, #stablehlo.output_operand_alias<output_tuple_indices = [1], operand_index = 1, operand_tuple_indices = []>, #stablehlo.output_operand_alias<output_tuple_indices = [2], operand_index = 2, operand_tuple_indices = []>, #stablehlo.output_operand_alias<output_tuple_indices = [3], operand_index = 3, operand_tuple_indices = []>], result_layouts = [dense<[1, 0]> : tensor<2xindex>, dense<[1, 0]> : tensor<2xindex>, dense<[1, 0]> : tensor<2xindex>, dense<[1, 2, 0]> : tensor<3xindex>, dense<0> : tensor<1xindex>]} : (tensor<2x4xcomplex<f64>>, tensor<2x4xcomplex<f64>>, tensor<2x4xcomplex<f64>>, tensor<2x4x3xcomplex<f64>>) -> (tensor<2x4xcomplex<f64>>, tensor<2x4xcomplex<f64>>, tensor<2x4xcomplex<f64>>, tensor<2x4x3xcomplex<f64>>, tensor<2xi32>) loc(#loc6)
    %1 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<2xi32> loc(#loc6)
    %2 = stablehlo.compare  EQ, %0#4, %1,  SIGNED : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi1> loc(#loc6)
    %3 = stablehlo.broadcast_in_dim %2, dims = [0] : (tensor<2xi1>) -> tensor<2x1x1xi1> loc(#loc6)
    %4 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<complex<f64>>) -> tensor<2x4x3xcomplex<f64>> loc(#loc6)
    %5 = stablehlo.broadcast_in_dim %3, dims = [0, 1, 2] : (tensor<2x1x1xi1>) -> tensor<2x4x3xi1> loc(#loc6)
    %6 = stablehlo.select %5, %0#3, %4 : tensor<2x4x3xi1>, tensor<2x4x3xcomplex<f64>> loc(#loc6)
    return %6 : tensor<2x4x3xcomplex<f64>> loc(#loc)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc5 = loc("third_party/py/jax/tests/export_back_compat_test.py":842:4)
#loc6 = loc("jit(tridiagonal_solve)/jit(main)/tridiagonal_solve"(#loc5))
