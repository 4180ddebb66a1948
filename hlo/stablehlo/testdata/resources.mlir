// Constants as MLIR prints large ones, dense_resource<key>, their bytes
// in the {-# dialect_resources #-} section after the module.
module @jit_resources {
  func.func public @main(%arg0: tensor<2x3xf32>, %arg1: tensor<3xi32>) -> (tensor<2x3xf32>, tensor<3xi32>) {
    %w = stablehlo.constant dense_resource<torch_tensor_2_3_torch.float32> : tensor<2x3xf32>
    %k = stablehlo.constant dense_resource<"quoted key"> : tensor<3xi32>
    %m = stablehlo.constant dense_resource<mask> : tensor<3xi1>
    %0 = stablehlo.multiply %arg0, %w : tensor<2x3xf32>
    %1 = stablehlo.add %arg1, %k : tensor<3xi32>
    %z = stablehlo.constant dense<0> : tensor<3xi32>
    %2 = stablehlo.select %m, %1, %z : tensor<3xi1>, tensor<3xi32>
    return %0, %2 : tensor<2x3xf32>, tensor<3xi32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      torch_tensor_2_3_torch.float32: "0x040000000000C03F000000C00000803E00004040000000BF00000041",
      "quoted key": "0x0400000007000000fdffffff64000000",
      mask: "0x01000000010001"
    }
  },
  external_resources: {
    other: { note: "ignored" }
  }
#-}
