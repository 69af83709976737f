// The elementwise operations every backend implements (kernels/cpu, kernels/cuda), named once here.
#pragma once

namespace tinyddp::kernels {

enum class UnaryOp {
  neg, exp, log, sqrt, abs, relu, tanh, sigmoid, sign,
  pow,         // x^a
  add_scalar,  // x + a
  mul_scalar,  // x * a
  clamp,       // min(max(x, a), b)
  in_range,    // 1 if a <= x <= b else 0   (clamp's gradient mask)
  gt_scalar,   // 1 if x > a else 0         (relu's gradient mask)
  fill,        // a
};

enum class BinaryOp { add, sub, mul, div, eq };

}  // namespace tinyddp::kernels
