// A counted loop in the generic form (mlir-opt --mlir-print-op-generic):
// x <- x * 0.5 + i, ten times.
"builtin.module"() ({
  "func.func"() <{function_type = (tensor<5xf32>) -> tensor<5xf32>, sym_name = "main"}> ({
  ^bb0(%arg0: tensor<5xf32>):
    %0 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %1:2 = "stablehlo.while"(%0, %arg0) ({
    ^bb0(%i: tensor<i32>, %x: tensor<5xf32>):
      %2 = "stablehlo.constant"() <{value = dense<10> : tensor<i32>}> : () -> tensor<i32>
      %3 = "stablehlo.compare"(%i, %2) <{comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      "stablehlo.return"(%3) : (tensor<i1>) -> ()
    }, {
    ^bb0(%i: tensor<i32>, %x: tensor<5xf32>):
      %4 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
      %5 = "stablehlo.add"(%i, %4) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      %6 = "stablehlo.constant"() <{value = dense<5.000000e-01> : tensor<5xf32>}> : () -> tensor<5xf32>
      %7 = "stablehlo.multiply"(%x, %6) : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xf32>
      %8 = "stablehlo.convert"(%i) : (tensor<i32>) -> tensor<f32>
      %9 = "stablehlo.broadcast_in_dim"(%8) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<5xf32>
      %10 = "stablehlo.add"(%7, %9) : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xf32>
      "stablehlo.return"(%5, %10) : (tensor<i32>, tensor<5xf32>) -> ()
    }) : (tensor<i32>, tensor<5xf32>) -> (tensor<i32>, tensor<5xf32>)
    "func.return"(%1#1) : (tensor<5xf32>) -> ()
  }) : () -> ()
}) : () -> ()
