// graph.mlir as JAX prints it with Shardy, its partitioner, on: a mesh
// of one device, sharded arguments, the ReLU in a shard_map (a manual
// computation) and a sharding constraint. On one device none of them
// changes a value: the same inputs and expected outputs (programs.py).
module @jit_train_step attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["batch"=1]>
  func.func public @main(%arg0: tensor<64x32xf32> {mhlo.layout_mode = "default", sdy.sharding = #sdy.sharding<@mesh, [{"batch"}, {}]>}, %arg1: tensor<64x10xf32> {mhlo.layout_mode = "default", sdy.sharding = #sdy.sharding<@mesh, [{"batch"}, {}]>}, %arg2: tensor<32x64xf32> {mhlo.layout_mode = "default"}, %arg3: tensor<64xf32> {mhlo.layout_mode = "default"}, %arg4: tensor<64x10xf32> {mhlo.layout_mode = "default"}, %arg5: tensor<10xf32> {mhlo.layout_mode = "default"}) -> (tensor<f32> {jax.result_info = "[0]"}, tensor<32x64xf32> {jax.result_info = "[1]"}, tensor<64xf32> {jax.result_info = "[2]"}, tensor<64x10xf32> {jax.result_info = "[3]"}, tensor<10xf32> {jax.result_info = "[4]"}) {
    %0 = stablehlo.dot_general %arg0, %arg2, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x32xf32>, tensor<32x64xf32>) -> tensor<64x64xf32>
    %1 = stablehlo.broadcast_in_dim %arg3, dims = [1] : (tensor<64xf32>) -> tensor<64x64xf32>
    %2 = stablehlo.add %0, %1 : tensor<64x64xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %3 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<64x64xf32>
    %4m = sdy.manual_computation(%2, %3) in_shardings=[<@mesh, [{"batch"}, {}]>, <@mesh, [{}, {}]>] out_shardings=[<@mesh, [{"batch"}, {}]>] manual_axes={"batch"} (%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) {
      %r = stablehlo.maximum %a, %b : tensor<64x64xf32>
      sdy.return %r : tensor<64x64xf32>
    } : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
    %4 = sdy.sharding_constraint %4m <@mesh, [{"batch"}, {}]> : tensor<64x64xf32>
    %5 = stablehlo.dot_general %4, %arg4, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x64xf32>, tensor<64x10xf32>) -> tensor<64x10xf32>
    %6 = stablehlo.broadcast_in_dim %arg5, dims = [1] : (tensor<10xf32>) -> tensor<64x10xf32>
    %7 = stablehlo.add %5, %6 : tensor<64x10xf32>
    %cst_0 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %8 = stablehlo.reduce(%7 init: %cst_0) applies stablehlo.maximum across dimensions = [1] : (tensor<64x10xf32>, tensor<f32>) -> tensor<64xf32>
    %9 = stablehlo.broadcast_in_dim %8, dims = [0] : (tensor<64xf32>) -> tensor<64x10xf32>
    %10 = stablehlo.subtract %7, %9 : tensor<64x10xf32>
    %11 = stablehlo.exponential %10 : tensor<64x10xf32>
    %12 = stablehlo.reduce(%11 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<64x10xf32>, tensor<f32>) -> tensor<64xf32>
    %13 = stablehlo.log %12 : tensor<64xf32>
    %14 = stablehlo.broadcast_in_dim %13, dims = [0] : (tensor<64xf32>) -> tensor<64x10xf32>
    %15 = stablehlo.subtract %10, %14 : tensor<64x10xf32>
    %16 = stablehlo.multiply %arg1, %15 : tensor<64x10xf32>
    %17 = stablehlo.reduce(%16 init: %cst) applies stablehlo.add across dimensions = [0, 1] : (tensor<64x10xf32>, tensor<f32>) -> tensor<f32>
    %cst_1 = stablehlo.constant dense<-1.562500e-02> : tensor<f32>
    %18 = stablehlo.multiply %17, %cst_1 : tensor<f32>
    %19 = stablehlo.exponential %15 : tensor<64x10xf32>
    %20 = stablehlo.subtract %19, %arg1 : tensor<64x10xf32>
    %cst_2 = stablehlo.constant dense<1.562500e-02> : tensor<64x10xf32>
    %21 = stablehlo.multiply %20, %cst_2 : tensor<64x10xf32>
    %22 = stablehlo.dot_general %4, %21, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x64xf32>, tensor<64x10xf32>) -> tensor<64x10xf32>
    %23 = stablehlo.reduce(%21 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<64x10xf32>, tensor<f32>) -> tensor<10xf32>
    %24 = stablehlo.dot_general %21, %arg4, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<64x10xf32>, tensor<64x10xf32>) -> tensor<64x64xf32>
    %25 = stablehlo.compare  GT, %2, %3,  FLOAT : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xi1>
    %26 = stablehlo.select %25, %24, %3 : tensor<64x64xi1>, tensor<64x64xf32>
    %27 = stablehlo.dot_general %arg0, %26, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x32xf32>, tensor<64x64xf32>) -> tensor<32x64xf32>
    %28 = stablehlo.reduce(%26 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<64x64xf32>, tensor<f32>) -> tensor<64xf32>
    %cst_3 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %29 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<32x64xf32>
    %30 = stablehlo.multiply %29, %27 : tensor<32x64xf32>
    %31 = stablehlo.subtract %arg2, %30 : tensor<32x64xf32>
    %32 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<64xf32>
    %33 = stablehlo.multiply %32, %28 : tensor<64xf32>
    %34 = stablehlo.subtract %arg3, %33 : tensor<64xf32>
    %35 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<64x10xf32>
    %36 = stablehlo.multiply %35, %22 : tensor<64x10xf32>
    %37 = stablehlo.subtract %arg4, %36 : tensor<64x10xf32>
    %38 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<10xf32>
    %39 = stablehlo.multiply %38, %23 : tensor<10xf32>
    %40 = stablehlo.subtract %arg5, %39 : tensor<10xf32>
    return %18, %31, %34, %37, %40 : tensor<f32>, tensor<32x64xf32>, tensor<64xf32>, tensor<64x10xf32>, tensor<10xf32>
  }
}
