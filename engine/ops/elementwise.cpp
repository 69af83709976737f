// Elementwise ops and their backward rules. g is the gradient of the op's output.
#include "engine/ops/op_utils.h"

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

// y = a + b.  dy/da = 1, dy/db = 1 (summed back over broadcast dims).
Tensor add(const Tensor& a, const Tensor& b) {
  Tensor out = binary_kernel(BinaryOp::add, a, b, "add");
  auto node = autograd::make_node("AddBackward0", {a, b}, [sa = a.shape(), sb = b.shape()](const TensorList& g, OpNode& n) {
    return TensorList{n.needs_input_grad(0) ? sum_to(g[0], sa) : Tensor(),
                      n.needs_input_grad(1) ? sum_to(g[0], sb) : Tensor()};
  });
  autograd::set_history(out, node);
  return out;
}

// y = a - b.  dy/da = 1, dy/db = -1.
Tensor sub(const Tensor& a, const Tensor& b) {
  Tensor out = binary_kernel(BinaryOp::sub, a, b, "sub");
  auto node = autograd::make_node("SubBackward0", {a, b}, [sa = a.shape(), sb = b.shape()](const TensorList& g, OpNode& n) {
    return TensorList{n.needs_input_grad(0) ? sum_to(g[0], sa) : Tensor(),
                      n.needs_input_grad(1) ? sum_to(neg(g[0]), sb) : Tensor()};
  });
  autograd::set_history(out, node);
  return out;
}

// y = a * b.  dy/da = b, dy/db = a.
Tensor mul(const Tensor& a, const Tensor& b) {
  Tensor out = binary_kernel(BinaryOp::mul, a, b, "mul");
  auto node = autograd::make_node("MulBackward0", {a, b}, [sa = a.shape(), sb = b.shape()](const TensorList& g, OpNode& n) {
    return TensorList{n.needs_input_grad(0) ? sum_to(g[0] * n.saved(1), sa) : Tensor(),
                      n.needs_input_grad(1) ? sum_to(g[0] * n.saved(0), sb) : Tensor()};
  });
  if (node) {
    // Save only what the wanted gradients read (a for db, b for da), as PyTorch does.
    node->save(node->needs_input_grad(1) ? a : Tensor());
    node->save(node->needs_input_grad(0) ? b : Tensor());
  }
  autograd::set_history(out, node);
  return out;
}

// y = a / b.  dy/da = 1/b, dy/db = -a/b^2.
Tensor div(const Tensor& a, const Tensor& b) {
  Tensor out = binary_kernel(BinaryOp::div, a, b, "div");
  auto node = autograd::make_node("DivBackward0", {a, b}, [sa = a.shape(), sb = b.shape()](const TensorList& g, OpNode& n) {
    const Tensor b_ = n.saved(1);
    return TensorList{n.needs_input_grad(0) ? sum_to(g[0] / b_, sa) : Tensor(),
                      n.needs_input_grad(1) ? sum_to(neg(g[0]) * n.saved(0) / (b_ * b_), sb) : Tensor()};
  });
  if (node) {
    node->save(node->needs_input_grad(1) ? a : Tensor());
    node->save(b);
  }
  autograd::set_history(out, node);
  return out;
}

// y = a + c.  dy/da = 1.
Tensor add(const Tensor& a, double c) {
  check_floating(a, "add");
  Tensor out = unary_kernel(UnaryOp::add_scalar, a, c);
  autograd::set_history(out, autograd::make_node("AddBackward1", {a}, [](const TensorList& g, OpNode&) {
    return TensorList{g[0]};
  }));
  return out;
}

// y = a * c.  dy/da = c.
Tensor mul(const Tensor& a, double c) {
  check_floating(a, "mul");
  Tensor out = unary_kernel(UnaryOp::mul_scalar, a, c);
  autograd::set_history(out, autograd::make_node("MulBackward1", {a}, [c](const TensorList& g, OpNode&) {
    return TensorList{mul(g[0], c)};
  }));
  return out;
}

// y = -x.  dy/dx = -1.
Tensor neg(const Tensor& x) {
  check_floating(x, "neg");
  Tensor out = unary_kernel(UnaryOp::neg, x);
  autograd::set_history(out, autograd::make_node("NegBackward0", {x}, [](const TensorList& g, OpNode&) {
    return TensorList{neg(g[0])};
  }));
  return out;
}

// y = x^p.  dy/dx = p * x^(p-1)   (0 when p == 0).
Tensor pow(const Tensor& x, double p) {
  check_floating(x, "pow");
  Tensor out = unary_kernel(UnaryOp::pow, x, p);
  auto node = autograd::make_node("PowBackward0", {x}, [p](const TensorList& g, OpNode& n) {
    if (p == 0.0) return TensorList{mul(g[0], 0.0)};
    return TensorList{g[0] * mul(pow(n.saved(0), p - 1.0), p)};
  });
  if (node) node->save(x);
  autograd::set_history(out, node);
  return out;
}

// y = e^x.  dy/dx = y.
Tensor exp(const Tensor& x) {
  check_floating(x, "exp");
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
  check_floating(x, "log");
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
  check_floating(x, "sqrt");
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
  check_floating(x, "abs");
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
  check_floating(x, "relu");
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
  check_floating(x, "tanh");
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
  check_floating(x, "sigmoid");
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
  auto node = autograd::make_node("ClampBackward1", {x}, [lo, hi](const TensorList& g, OpNode& n) {
    return TensorList{g[0] * in_range(n.saved(0), lo, hi)};
  });
  if (node) node->save(x);
  autograd::set_history(out, node);
  return out;
}

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
Tensor operator-(const Tensor& a, double b) { return add(a, -b); }
Tensor operator-(double a, const Tensor& b) { return add(neg(b), a); }
Tensor operator*(const Tensor& a, double b) { return mul(a, b); }
Tensor operator*(double a, const Tensor& b) { return mul(b, a); }
Tensor operator/(const Tensor& a, double b) { return mul(a, 1.0 / b); }
Tensor operator/(double a, const Tensor& b) { return mul(pow(b, -1.0), a); }

}  // namespace tinyddp
