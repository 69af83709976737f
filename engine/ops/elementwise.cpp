// Elementwise ops and their backward rules. g is the gradient of the op's output.
#include "engine/ops/op_utils.h"

#include <cmath>
#include <numbers>

#include "engine/core/promotion.h"

namespace tinyddp {

using kernels::BinaryOp;
using kernels::CompareOp;
using kernels::UnaryOp;

using namespace detail;

namespace {
// Whether a backward rule running now must record a graph of its own (create_graph): then it is written with
// differentiable ops; otherwise tanh, sigmoid and relu take one fused pass (kernels/contract.h, BinaryOp),
// one output tensor instead of three or four.
bool backward_is_recorded() { return GradMode::is_enabled(); }
}  // namespace

// Note [Promotion in the binary ops]
// add, sub, mul, div and pow(tensor, tensor) take operands of any two dtypes and compute in result_type(a, b)
// (engine/core/promotion.h; true division of integers in the default float dtype). The node's edges go to the operands
// themselves, not to converted copies, so grad_fn.next_functions are PyTorch's; each gradient is converted
// back to its input's dtype (grad_as), as PyTorch's engine does in validate_outputs. Operands already of the
// computed dtype are used as they are: the float-only paths run exactly the ops they ran before promotion.
// Integer and bool results are exact: int64 kernels (bool arithmetic in int64 then != 0: + is or, * is and);
// they never require grad, so they record no node.
namespace {

// x as the dtype an op computes in, without history (the node records the edge to x itself).
Tensor as_compute(const Tensor& x, DType dtype) { return x.dtype() == dtype ? x : to_dtype(x.detach(), dtype); }

// A gradient for an input of dtype `dtype` (differentiable, for create_graph).
Tensor grad_as(const Tensor& g, DType dtype) { return g.dtype() == dtype ? g : to_dtype(g, dtype); }

// op(a, b) with both operands converted to `dtype` first.
Tensor promoted_kernel(BinaryOp op, const Tensor& a, const Tensor& b, DType dtype, const char* name) {
  if (dtype == DType::b8) {
    const Tensor wide = binary_kernel(op, as_compute(a, DType::i64), as_compute(b, DType::i64), name);
    return to_dtype(wide, DType::b8);   // 0/1 sums and products: nonzero is true
  }
  return binary_kernel(op, as_compute(a, dtype), as_compute(b, dtype), name);
}

DType arithmetic_type(const Tensor& a, const Tensor& b, const char* name) {
  check_defined(a, name);
  check_defined(b, name);
  return result_type(a, b);
}

}  // namespace

// y = a + b.  dy/da = 1, dy/db = 1 (summed back over broadcast dims).
Tensor add(const Tensor& a, const Tensor& b) {
  const DType dtype = arithmetic_type(a, b, "add");
  Tensor out = promoted_kernel(BinaryOp::add, a, b, dtype, "add");
  auto node = autograd::make_node("AddBackward0", {a, b}, [sa = a.shape(), sb = b.shape(), da = a.dtype(),
                                                            db = b.dtype()](const TensorList& g, OpNode& n) {
    return TensorList{n.needs_input_grad(0) ? grad_as(sum_to(g[0], sa), da) : Tensor(),
                      n.needs_input_grad(1) ? grad_as(sum_to(g[0], sb), db) : Tensor()};
  });
  autograd::set_history(out, node);
  return out;
}

// y = a - b.  dy/da = 1, dy/db = -1.
Tensor sub(const Tensor& a, const Tensor& b) {
  const DType dtype = arithmetic_type(a, b, "sub");
  // PyTorch's texts (a Python True is a bool operand too).
  TINYDDP_CHECK(a.dtype() != DType::b8 || b.dtype() != DType::b8, "Subtraction, the `-` operator, with two bool "
                "tensors is not supported. Use the `^` or `logical_xor()` operator instead.");
  TINYDDP_CHECK(a.dtype() != DType::b8 && b.dtype() != DType::b8,
                "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a "
                "mask, use the `~` or `logical_not()` operator instead.");
  Tensor out = promoted_kernel(BinaryOp::sub, a, b, dtype, "sub");
  auto node = autograd::make_node("SubBackward0", {a, b}, [sa = a.shape(), sb = b.shape(), da = a.dtype(),
                                                            db = b.dtype()](const TensorList& g, OpNode& n) {
    return TensorList{n.needs_input_grad(0) ? grad_as(sum_to(g[0], sa), da) : Tensor(),
                      n.needs_input_grad(1) ? grad_as(sum_to(neg(g[0]), sb), db) : Tensor()};
  });
  autograd::set_history(out, node);
  return out;
}

// y = a * b.  dy/da = b, dy/db = a.
Tensor mul(const Tensor& a, const Tensor& b) {
  const DType dtype = arithmetic_type(a, b, "mul");
  Tensor out = promoted_kernel(BinaryOp::mul, a, b, dtype, "mul");
  auto node = autograd::make_node("MulBackward0", {a, b}, [sa = a.shape(), sb = b.shape(), da = a.dtype(),
                                                            db = b.dtype()](const TensorList& g, OpNode& n) {
    // g * b promotes as the forward did (b may be a bool mask or a float64 scalar).
    return TensorList{n.needs_input_grad(0) ? grad_as(sum_to(g[0] * n.saved(1), sa), da) : Tensor(),
                      n.needs_input_grad(1) ? grad_as(sum_to(g[0] * n.saved(0), sb), db) : Tensor()};
  });
  if (node) {
    // Save only what the wanted gradients read (a for db, b for da), as PyTorch does.
    node->save(node->needs_input_grad(1) ? a : Tensor());
    node->save(node->needs_input_grad(0) ? b : Tensor());
  }
  autograd::set_history(out, node);
  return out;
}

// y = a / b (true division: integers divide in the default float dtype).  dy/da = 1/b, dy/db = -a/b^2.
Tensor div(const Tensor& a, const Tensor& b) {
  const DType promoted = arithmetic_type(a, b, "div");
  const DType dtype = is_floating(promoted) ? promoted : kDefaultFloatDType;
  Tensor out = promoted_kernel(BinaryOp::div, a, b, dtype, "div");
  auto node = autograd::make_node("DivBackward0", {a, b}, [sa = a.shape(), sb = b.shape(), da = a.dtype(),
                                                            db = b.dtype()](const TensorList& g, OpNode& n) {
    const Tensor b_ = n.saved(1);
    return TensorList{n.needs_input_grad(0) ? grad_as(sum_to(g[0] / b_, sa), da) : Tensor(),
                      n.needs_input_grad(1) ? grad_as(sum_to(neg(g[0]) * n.saved(0) / (b_ * b_), sb), db) : Tensor()};
  });
  if (node) {
    node->save(node->needs_input_grad(1) ? a : Tensor());
    node->save(b);
  }
  autograd::set_history(out, node);
  return out;
}

// y = a + c.  dy/da = 1.  (An integer or bool a: a + the wrapped number c, which is float32.)
Tensor add(const Tensor& a, double c) {
  check_defined(a, "add");
  if (!is_floating(a.dtype())) return add(a, wrapped_number(c, a.device()));
  Tensor out = unary_kernel(UnaryOp::add_scalar, a, c);
  autograd::set_history(out, autograd::make_node("AddBackward1", {a}, [](const TensorList& g, OpNode&) {
    return TensorList{g[0]};
  }));
  return out;
}

// y = a * c.  dy/da = c.
Tensor mul(const Tensor& a, double c) {
  check_defined(a, "mul");
  if (!is_floating(a.dtype())) return mul(a, wrapped_number(c, a.device()));
  Tensor out = unary_kernel(UnaryOp::mul_scalar, a, c);
  autograd::set_history(out, autograd::make_node("MulBackward1", {a}, [c](const TensorList& g, OpNode&) {
    return TensorList{mul(g[0], c)};
  }));
  return out;
}

// y = -x.  dy/dx = -1.  An int64 x: 0 - x, exact.
Tensor neg(const Tensor& x) {
  check_defined(x, "neg");
  TINYDDP_CHECK(x.dtype() != DType::b8, "Negation, the `-` operator, on a bool tensor is not supported. If you are "
                "trying to invert a mask, use the `~` or `logical_not()` operator instead.");
  if (x.dtype() == DType::i64) return binary_kernel(BinaryOp::sub, zeros({}, DType::i64, x.device()), x, "neg");
  Tensor out = unary_kernel(UnaryOp::neg, x);
  autograd::set_history(out, autograd::make_node("NegBackward0", {x}, [](const TensorList& g, OpNode&) {
    return TensorList{neg(g[0])};
  }));
  return out;
}

// y = x^p.  dy/dx = p * x^(p-1)   (0 when p == 0).  An int64 or bool x with a float exponent is float32.
Tensor pow(const Tensor& x, double p) {
  check_defined(x, "pow");
  if (!is_floating(x.dtype())) return pow(to_dtype(x, kDefaultFloatDType), p);
  Tensor out = unary_kernel(UnaryOp::pow, x, p);
  auto node = autograd::make_node("PowBackward0", {x}, [p](const TensorList& g, OpNode& n) {
    if (p == 0.0) return TensorList{mul(g[0], 0.0)};
    return TensorList{g[0] * mul(pow(n.saved(0), p - 1.0), p)};
  });
  if (node) node->save(x);
  autograd::set_history(out, node);
  return out;
}

// x^n with an integer exponent (Python's `x ** 2`): a floating x as pow(x, double(n)); an int64 or bool x
// gives int64, exactly, by repeated squaring (wrapping on overflow, as PyTorch's).
Tensor pow_integer(const Tensor& x, int64_t n) {
  check_defined(x, "pow");
  if (is_floating(x.dtype())) return pow(x, static_cast<double>(n));
  TINYDDP_CHECK(n >= 0, "Integers to negative integer powers are not allowed.");
  Tensor base = as_compute(x, DType::i64);
  Tensor out = ones(x.shape(), DType::i64, x.device());
  for (; n > 0; n >>= 1) {
    if (n & 1) out = binary_kernel(BinaryOp::mul, out, base, "pow");
    if (n > 1) base = binary_kernel(BinaryOp::mul, base, base, "pow");
  }
  return out;
}

namespace {
// base^exponent elementwise in int64 (both int64), exactly: square-and-multiply over |exponent|'s bits from the
// highest, each bit found by comparison (bit = rest >= 2^k; rest -= bit * 2^k). A negative exponent gives 0
// but for a base of 1 or -1 (whose powers of |exponent| are those of exponent), as PyTorch's integer pow.
Tensor integer_pow(const Tensor& base, const Tensor& raw_exponent) {
  const Tensor zero = zeros({}, DType::i64, base.device());
  const Tensor exponent = abs(raw_exponent);
  const Shape shape = broadcast_shapes(base.shape(), exponent.shape());
  const Tensor one = ones({}, DType::i64, base.device());
  Tensor out = expand(one, shape).contiguous();
  const int64_t top = exponent.numel() == 0 ? 0 : max(exponent).item<int64_t>();
  int k = 0;
  while (k < 62 && (int64_t{1} << (k + 1)) <= top) ++k;
  Tensor rest = exponent;
  for (; top > 0 && k >= 0; --k) {
    const Tensor power = wrapped_number(int64_t{1} << k, base.device()).to(DType::i64);
    const Tensor bit = to_dtype(ge(rest, power), DType::i64);   // 0 or 1
    rest = binary_kernel(BinaryOp::sub, rest, binary_kernel(BinaryOp::mul, bit, power, "pow"), "pow");
    // out = out^2 * (base where bit, else 1) = out^2 * (1 + bit * (base - 1))
    const Tensor factor = binary_kernel(
        BinaryOp::add, one, binary_kernel(BinaryOp::mul, bit, binary_kernel(BinaryOp::sub, base, one, "pow"), "pow"),
        "pow");
    out = binary_kernel(BinaryOp::mul, binary_kernel(BinaryOp::mul, out, out, "pow"), factor, "pow");
  }
  const Tensor unit = logical_or(eq(base, one), eq(base, neg(one)));
  const Tensor kept = to_dtype(logical_or(ge(raw_exponent, zero), unit), DType::i64);
  return binary_kernel(BinaryOp::mul, out, expand(kept, shape).contiguous(), "pow");
}
}  // namespace

// y = a^b, both tensors (Python's `2 ** t` too: PyTorch 1.13's __rpow__ makes the number a tensor).
// dy/da = b a^(b-1), 0 where b == 0;  dy/db = y log(a), 0 where a == 0 and b >= 0 (PyTorch's masks).
Tensor pow(const Tensor& a, const Tensor& b) {
  const DType dtype = arithmetic_type(a, b, "pow");
  TINYDDP_CHECK(dtype != DType::b8, "\"pow\" not implemented for 'Bool'");
  if (!is_floating(dtype)) return integer_pow(as_compute(a, DType::i64), as_compute(b, DType::i64));
  Tensor out = binary_kernel(BinaryOp::pow, as_compute(a, dtype), as_compute(b, dtype), "pow");
  auto node = autograd::make_node("PowBackward1", {a, b}, [sa = a.shape(), sb = b.shape(), da = a.dtype(),
                                                 db = b.dtype()](const TensorList& g, OpNode& n) {
    const Tensor base = n.saved(0), exponent = n.saved(1);
    Tensor ga, gb;
    if (n.needs_input_grad(0)) {
      // Where b == 0 the power is taken at b - 1 + 1 = 0 (finite, also at a == 0) and multiplied by b = 0.
      const Tensor shifted = exponent - 1.0 + eq(exponent, wrapped_number(0.0, exponent.device()));
      ga = grad_as(sum_to(g[0] * exponent * pow(base, shifted), sa), da);
    }
    if (n.needs_input_grad(1)) {
      // Where a == 0 and b >= 0 the log is taken of a + 1 = 1, so the term is 0 (not 0 * -inf).
      const Tensor zero = wrapped_number(0.0, base.device());
      const Tensor base_f = is_floating(base.dtype()) ? base : to_dtype(base, g[0].dtype());   // `2 ** x`: an int
      const Tensor masked = base_f + logical_and(eq(base, zero), ge(exponent, zero));
      gb = grad_as(sum_to(g[0] * n.saved(2) * log(masked), sb), db);
    }
    return TensorList{ga, gb};
  });
  if (node) {
    node->save(a);
    node->save(b);
  }
  autograd::set_history(out, node);
  if (node) node->save(out, true);
  return out;
}

// y = e^x.  dy/dx = y.
Tensor exp(const Tensor& x) {
  check_defined(x, "exp");
  if (!is_floating(x.dtype())) return exp(to_dtype(x, kDefaultFloatDType));   // 1.13: integers in float32
  Tensor out = unary_kernel(UnaryOp::exp, x);
  auto node = autograd::make_node("ExpBackward0", {x}, [](const TensorList& g, OpNode& n) {
    return TensorList{g[0] * n.saved(0)};
  });
  autograd::set_history(out, node);
  if (node) node->save(out, /*is_output=*/true);
  return out;
}

// y = log x.  dy/dx = 1/x.
Tensor log(const Tensor& x) {
  check_defined(x, "log");
  if (!is_floating(x.dtype())) return log(to_dtype(x, kDefaultFloatDType));   // 1.13: integers in float32
  Tensor out = unary_kernel(UnaryOp::log, x);
  auto node = autograd::make_node("LogBackward0", {x}, [](const TensorList& g, OpNode& n) {
    return TensorList{g[0] / n.saved(0)};
  });
  if (node) node->save(x);
  autograd::set_history(out, node);
  return out;
}

// y = sqrt x.  dy/dx = 1 / (2 y).
Tensor sqrt(const Tensor& x) {
  check_defined(x, "sqrt");
  if (!is_floating(x.dtype())) return sqrt(to_dtype(x, kDefaultFloatDType));   // 1.13: integers in float32
  Tensor out = unary_kernel(UnaryOp::sqrt, x);
  auto node = autograd::make_node("SqrtBackward0", {x}, [](const TensorList& g, OpNode& n) {
    return TensorList{g[0] / mul(n.saved(0), 2.0)};
  });
  autograd::set_history(out, node);
  if (node) node->save(out, true);
  return out;
}

// y = |x|.  dy/dx = sign(x)   (0 at x = 0, as PyTorch).
Tensor abs(const Tensor& x) {
  check_defined(x, "abs");
  TINYDDP_CHECK(x.dtype() != DType::b8, "\"abs_cpu\" not implemented for 'Bool'");
  if (x.dtype() == DType::i64) {   // x * (1 - 2 (x < 0)), exact
    const Tensor negative = to_dtype(lt(x, zeros({}, DType::i64, x.device())), DType::i64);
    const Tensor sign = binary_kernel(BinaryOp::sub, ones({}, DType::i64, x.device()),
                                      binary_kernel(BinaryOp::add, negative, negative, "abs"), "abs");
    return binary_kernel(BinaryOp::mul, x, sign, "abs");
  }
  Tensor out = unary_kernel(UnaryOp::abs, x);
  auto node = autograd::make_node("AbsBackward0", {x}, [](const TensorList& g, OpNode& n) {
    return TensorList{g[0] * sign(n.saved(0))};
  });
  if (node) node->save(x);
  autograd::set_history(out, node);
  return out;
}

// y = max(x, 0).  dy/dx = 1 where y > 0, else 0 (PyTorch reads the mask off the output).
Tensor relu(const Tensor& x) {
  check_defined(x, "relu");
  TINYDDP_CHECK(x.dtype() != DType::b8, "Boolean inputs not supported for relu");
  if (x.dtype() == DType::i64)   // x * (x > 0), int64 as 1.13's
    return binary_kernel(BinaryOp::mul, x, to_dtype(gt(x, zeros({}, DType::i64, x.device())), DType::i64), "relu");
  Tensor out = unary_kernel(UnaryOp::relu, x);
  auto node = autograd::make_node("ReluBackward0", {x}, [](const TensorList& g, OpNode& n) {
    if (backward_is_recorded()) return TensorList{g[0] * gt_mask(n.saved(0), 0.0)};
    return TensorList{binary_kernel(BinaryOp::relu_backward, g[0], n.saved(0), "relu_backward")};
  });
  autograd::set_history(out, node);
  if (node) node->save(out, true);
  return out;
}

// y = tanh x.  dy/dx = 1 - y^2.
Tensor tanh(const Tensor& x) {
  check_defined(x, "tanh");
  if (!is_floating(x.dtype())) return tanh(to_dtype(x, kDefaultFloatDType));   // 1.13: integers in float32
  Tensor out = unary_kernel(UnaryOp::tanh, x);
  auto node = autograd::make_node("TanhBackward0", {x}, [](const TensorList& g, OpNode& n) {
    const Tensor y = n.saved(0);
    if (backward_is_recorded()) return TensorList{g[0] * (1.0 - y * y)};
    return TensorList{binary_kernel(BinaryOp::tanh_backward, g[0], y, "tanh_backward")};
  });
  autograd::set_history(out, node);
  if (node) node->save(out, true);
  return out;
}

// y = 1 / (1 + e^-x).  dy/dx = y (1 - y).
Tensor sigmoid(const Tensor& x) {
  check_defined(x, "sigmoid");
  if (!is_floating(x.dtype())) return sigmoid(to_dtype(x, kDefaultFloatDType));   // 1.13: integers in float32
  Tensor out = unary_kernel(UnaryOp::sigmoid, x);
  auto node = autograd::make_node("SigmoidBackward0", {x}, [](const TensorList& g, OpNode& n) {
    const Tensor y = n.saved(0);
    if (backward_is_recorded()) return TensorList{g[0] * (y * (1.0 - y))};
    return TensorList{binary_kernel(BinaryOp::sigmoid_backward, g[0], y, "sigmoid_backward")};
  });
  autograd::set_history(out, node);
  if (node) node->save(out, true);
  return out;
}

// y = min(max(x, lo), hi).  dy/dx = 1 where lo <= x <= hi, else 0.
Tensor clamp(const Tensor& x, double lo, double hi) {
  check_floating(x, "clamp");
  TINYDDP_CHECK(lo <= hi, "clamp: min (", lo, ") must not exceed max (", hi, ").");
  Tensor out = unary_kernel(UnaryOp::clamp, x, lo, hi);
  // 1.13's clamp_backward: where(min <= x <= max, g, 0), a +0 outside (g * mask would give -0 for g < 0)
  auto node = autograd::make_node("ClampBackward1", {x}, [lo, hi](const TensorList& g, OpNode& n) {
    const Tensor& in = n.saved(0);
    const Tensor inside = ne(in_range(in, lo, hi), scalar_tensor(0.0, in.dtype(), in.device()));
    return TensorList{where(inside, g[0], scalar_tensor(0.0, g[0].dtype(), g[0].device()))};
  });
  if (node) node->save(x);
  autograd::set_history(out, node);
  return out;
}

namespace {
// A floating-point function of x whose gradient rule reads x, saved on the node: rule(g, x) -> dL/dx.
// Integer and bool inputs are computed in float32, as 1.13's.
template <typename Rule>
Tensor float_function(const Tensor& x, UnaryOp op, const char* name, const char* node_name, Rule rule) {
  check_defined(x, name);
  if (!is_floating(x.dtype())) return float_function(to_dtype(x, kDefaultFloatDType), op, name, node_name, rule);
  Tensor out = unary_kernel(op, x);
  auto node = autograd::make_node(node_name, {x}, [rule](const TensorList& g, OpNode& n) {
    return TensorList{rule(g[0], n.saved(0))};
  });
  if (node) node->save(x);
  autograd::set_history(out, node);
  return out;
}
}  // namespace

// y = sin x.  dy/dx = cos x.
Tensor sin(const Tensor& x) {
  return float_function(x, UnaryOp::sin, "sin", "SinBackward0", [](const Tensor& g, const Tensor& x) {
    return g * cos(x);
  });
}

// y = cos x.  dy/dx = -sin x.
Tensor cos(const Tensor& x) {
  return float_function(x, UnaryOp::cos, "cos", "CosBackward0", [](const Tensor& g, const Tensor& x) {
    return g * neg(sin(x));
  });
}

// y = erf x = 2/sqrt(pi) * integral_0^x e^(-t^2) dt.  dy/dx = 2/sqrt(pi) * e^(-x^2).
Tensor erf(const Tensor& x) {
  return float_function(x, UnaryOp::erf, "erf", "ErfBackward0", [](const Tensor& g, const Tensor& x) {
    return g * mul(exp(neg(x * x)), 2.0 / std::sqrt(std::numbers::pi));
  });
}

// y = log(1 + x).  dy/dx = 1 / (1 + x).
Tensor log1p(const Tensor& x) {
  return float_function(x, UnaryOp::log1p, "log1p", "Log1PBackward0", [](const Tensor& g, const Tensor& x) {
    return g / add(x, 1.0);
  });
}

// y = exp(x) - 1.  dy/dx = y + 1 (the output is saved).
Tensor expm1(const Tensor& x) {
  check_defined(x, "expm1");
  if (!is_floating(x.dtype())) return expm1(to_dtype(x, kDefaultFloatDType));
  Tensor out = unary_kernel(UnaryOp::expm1, x);
  auto node = autograd::make_node("Expm1Backward0", {x}, [](const TensorList& g, OpNode& n) {
    return TensorList{g[0] * add(n.saved(0), 1.0)};
  });
  autograd::set_history(out, node);
  if (node) node->save(out, /*is_output=*/true);
  return out;
}

namespace {
// floor, ceil, trunc, round: piecewise constant, so the gradient is zeros of x's shape (differentiable: a
// constant), as PyTorch's; an int64 input is already integral and is copied.
Tensor to_integral(const Tensor& x, UnaryOp op, const char* name, const char* node_name) {
  check_defined(x, name);
  if (!is_floating(x.dtype())) {
    TINYDDP_CHECK(x.dtype() == DType::i64, "\"", name, "_vml_cpu\" not implemented for 'Bool'");   // 1.13's text
    return clone(x);
  }
  Tensor out = unary_kernel(op, x);
  autograd::set_history(out, autograd::make_node(node_name, {x}, [](const TensorList& g, OpNode&) {
    return TensorList{zeros(g[0].shape(), g[0].dtype(), g[0].device())};   // zeros_like, as 1.13 (not g * 0)
  }));
  return out;
}
}  // namespace

Tensor floor(const Tensor& x) { return to_integral(x, UnaryOp::floor, "floor", "FloorBackward0"); }
Tensor ceil(const Tensor& x) { return to_integral(x, UnaryOp::ceil, "ceil", "CeilBackward0"); }
Tensor trunc(const Tensor& x) { return to_integral(x, UnaryOp::trunc, "trunc", "TruncBackward0"); }
Tensor round(const Tensor& x) { return to_integral(x, UnaryOp::round, "round", "RoundBackward0"); }

Tensor sign(const Tensor& x) { check_floating(x, "sign"); return unary_kernel(UnaryOp::sign, x); }
Tensor gt_mask(const Tensor& x, double c) { check_floating(x, "gt_mask"); return unary_kernel(UnaryOp::gt_scalar, x, c); }
Tensor in_range(const Tensor& x, double lo, double hi) {
  check_floating(x, "in_range");
  return unary_kernel(UnaryOp::in_range, x, lo, hi);
}
Tensor eq_mask(const Tensor& a, const Tensor& b) { return binary_kernel(BinaryOp::eq, a, b, "eq_mask"); }

Tensor eq(const Tensor& a, const Tensor& b) { return compare_kernel(CompareOp::eq, a, b, "eq"); }
Tensor ne(const Tensor& a, const Tensor& b) { return compare_kernel(CompareOp::ne, a, b, "ne"); }
Tensor lt(const Tensor& a, const Tensor& b) { return compare_kernel(CompareOp::lt, a, b, "lt"); }
Tensor le(const Tensor& a, const Tensor& b) { return compare_kernel(CompareOp::le, a, b, "le"); }
Tensor gt(const Tensor& a, const Tensor& b) { return compare_kernel(CompareOp::gt, a, b, "gt"); }
Tensor ge(const Tensor& a, const Tensor& b) { return compare_kernel(CompareOp::ge, a, b, "ge"); }

// The logical ops compare bool operands read as float32 0/1 (the engine has no bool arithmetic kernels):
// not x = (x == 0), a and b = (a + b == 2), a or b = (a + b != 0), a xor b = (a != b).
namespace {
Tensor as_bits(const Tensor& x, const char* op) {
  check_defined(x, op);
  TINYDDP_CHECK(x.dtype() == DType::b8, op, ": expected a bool tensor but got ", dtype_name(x.dtype()),
                ". Compare first (e.g. x > 0) or convert with .to(DType::b8).");
  return x.to(DType::f32);
}
Tensor bits(double v, const Tensor& like) { return scalar_tensor(v, DType::f32, like.device()); }
}  // namespace

Tensor logical_not(const Tensor& x) { const Tensor b = as_bits(x, "logical_not"); return eq(b, bits(0, b)); }
Tensor logical_and(const Tensor& a, const Tensor& b) {
  const Tensor x = as_bits(a, "logical_and"), y = as_bits(b, "logical_and");
  return eq(x + y, bits(2, x));
}
Tensor logical_or(const Tensor& a, const Tensor& b) {
  const Tensor x = as_bits(a, "logical_or"), y = as_bits(b, "logical_or");
  return ne(x + y, bits(0, x));
}
Tensor logical_xor(const Tensor& a, const Tensor& b) { return ne(as_bits(a, "logical_xor"), as_bits(b, "logical_xor")); }

Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
Tensor operator+(const Tensor& a, double b) { return add(a, b); }
Tensor operator+(double a, const Tensor& b) { return add(b, a); }
Tensor operator-(const Tensor& a, double b) {
  check_defined(a, "sub");
  return is_floating(a.dtype()) ? add(a, -b) : sub(a, wrapped_number(b, a.device()));
}
Tensor operator-(double a, const Tensor& b) {
  check_defined(b, "sub");
  return is_floating(b.dtype()) ? add(neg(b), a) : sub(wrapped_number(a, b.device()), b);
}
Tensor operator*(const Tensor& a, double b) { return mul(a, b); }
Tensor operator*(double a, const Tensor& b) { return mul(b, a); }
Tensor operator/(const Tensor& a, double b) {
  check_defined(a, "div");
  return is_floating(a.dtype()) ? mul(a, 1.0 / b) : div(a, wrapped_number(b, a.device()));
}
Tensor operator/(double a, const Tensor& b) { return mul(pow(b, -1.0), a); }

}  // namespace tinyddp
