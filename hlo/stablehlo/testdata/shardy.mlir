// A program as JAX prints it with Shardy, the partitioner, on: meshes,
// shardings and constraints, a manual computation (shard_map) over an
// axis of one device, a named computation, global-view collectives; and
// the memory placements of jax.device_put inside jit.
module @jit_f attributes {mhlo.frontend_attributes = {xla.sdy.meshes = "{mesh = #sdy.mesh<[\22x\22=1, \22y\22=1]>}"}, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=1, "y"=1]>
  sdy.mesh @maximal_mesh_0 = <[], device_ids=[0]>
  "sdy.mesh"() <{mesh = #sdy.mesh<["z"=1]>, sym_name = "gmesh"}> : () -> ()
  func.func public @main(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg1: tensor<4xf32> {sdy.sharding = #sdy.sharding<@maximal_mesh_0, [{}]>}) -> (tensor<8x4xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
    %0 = sdy.sharding_constraint %arg0 <@mesh, [{"x"}, {"y"}]> : tensor<8x4xf32>
    %1 = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<4xf32>) -> tensor<8x4xf32>
    %2 = sdy.manual_computation(%0, %1) in_shardings=[<@mesh, [{"x"}, {}]>, <@mesh, [{}, {}]>] out_shardings=[<@mesh, [{"x"}, {}]>] manual_axes={"x"} (%arg2: tensor<8x4xf32>, %arg3: tensor<8x4xf32>) {
      %9 = stablehlo.multiply %arg2, %arg3 : tensor<8x4xf32>
      sdy.return %9 : tensor<8x4xf32>
    } : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
    %3 = sdy.reshard %2 <@mesh, [{}, {"x"}]> : tensor<8x4xf32>
    %4 = sdy.named_computation<"inner">(%3) (%arg2: tensor<8x4xf32>) {
      %c = sdy.constant dense<2.000000e+00> : tensor<8x4xf32>
      %9 = stablehlo.add %arg2, %c : tensor<8x4xf32>
      sdy.return %9 : tensor<8x4xf32>
    } : (tensor<8x4xf32>) -> tensor<8x4xf32>
    %5 = sdy.all_gather [{"x"}, {}] %4 out_sharding=<@mesh, [{}, {}]> : tensor<8x4xf32>
    %6 = sdy.all_reduce {"y"} %5 out_sharding=<@gmesh, [{}, {}]> : tensor<8x4xf32>
    %7 = sdy.propagation_barrier %6 allowed_direction=BACKWARD : tensor<8x4xf32>
    sdy.sharding_group %7 group_id=0 : tensor<8x4xf32>
    %8 = stablehlo.tanh %7 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : tensor<8x4xf32>
    %9 = stablehlo.custom_call @annotate_device_placement(%8) {has_side_effect = true, mhlo.frontend_attributes = {_xla_buffer_placement = "pinned_host"}} : (tensor<8x4xf32>) -> tensor<8x4xf32>
    %10 = stablehlo.custom_call @MoveToHost(%9) : (tensor<8x4xf32>) -> tensor<8x4xf32>
    %11 = stablehlo.custom_call @MoveToDevice(%10) : (tensor<8x4xf32>) -> tensor<8x4xf32>
    return %11 : tensor<8x4xf32>
  }
}
