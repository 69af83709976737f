// In-place ops. They bump the version counter shared by a tensor and its views, which is how a saved
// tensor notices it was modified before the backward that needs it.
//
// When they are allowed: on tensors that do not require grad, and on anything under NoGradGuard (how an
// optimizer updates parameters). A leaf that requires grad is refused outside NoGradGuard with PyTorch's
// message; tinyddp does not record in-place ops in the graph, so a non-leaf that requires grad is refused
// too, with the out-of-place op to use instead.
#include "engine/ops/op_utils.h"

#include "engine/core/promotion.h"

namespace tinyddp {

using namespace detail;

namespace {

void check_inplace(const Tensor& self, const Tensor* other, const char* op) {
  check_defined(self, op, "tensor modified in place");
  if (!GradMode::is_enabled()) return;
  if (self.requires_grad()) {
    TINYDDP_CHECK(!self.is_leaf(), "a leaf Variable that requires grad is being used in an in-place operation.");
    TINYDDP_CHECK(false, op, ": in-place ops on a tensor that is part of an autograd graph (grad_fn=",
                  self.grad_fn()->name(), ") are not recorded by tinyddp. Use the out-of-place op (e.g. y = y + x) "
                  "or run it under NoGradGuard if no gradient should flow.");
  }
  TINYDDP_CHECK(other == nullptr || !other->requires_grad(), op,
                ": the source requires grad but the result of an in-place op would not record it. Use the "
                "out-of-place op, or detach() the source.");
}

// Writes `value` (any layout, broadcastable to self) into self's elements, through self's strides.
void write_into(Tensor& self, const Tensor& value) {
  check_same_device(self, value, "in-place write");
  const Tensor v = expand(value.detach(), self.shape()).contiguous();
  dispatch_all(self.dtype(), [&]<typename T>() {
    if (self.is_contiguous())
      backend::copy_bytes(self.data_ptr<T>(), self.device(), v.data_ptr<T>(), v.device(), v.numel() * sizeof(T));
    else
      backend::copy_from_contiguous<T>(self.device(), self.shape(), v.data_ptr<T>(), self.data_ptr<T>(),
                                       self.strides());
  });
  self.bump_version();
}

// PyTorch's check that an in-place op's result dtype (promoted from self and its operands) can be written
// into self: `int_tensor += 0.5` is refused, `float32_tensor += float64_tensor` is computed in float64 and
// rounded into self.
void check_cast_into(DType result, const Tensor& self) {
  TINYDDP_CHECK(can_cast(result, self.dtype()), "result type ", scalar_type_name(result),
                " can't be cast to the desired output type ", scalar_type_name(self.dtype()));
}

// Whether the op must promote (mixed dtypes, or an integer or bool self): then it runs out of place and the
// result is written into self, instead of the floating-point fast paths below.
bool needs_promotion(const Tensor& self, const Tensor& other) {
  return self.dtype() != other.dtype() || !is_floating(self.dtype());
}

// alpha as a wrapped number for a result of dtype `result`: PyTorch refuses a fractional alpha for integers.
Tensor alpha_operand(double alpha, DType result, Device device) {
  if (is_floating(result)) return wrapped_number(alpha, device);
  TINYDDP_CHECK(alpha == static_cast<double>(static_cast<int64_t>(alpha)),
                "For integral input tensors, argument alpha must not be a floating point number.");
  return wrapped_number(static_cast<int64_t>(alpha), device);
}

}  // namespace

// self += alpha * other (other broadcast to self's shape).
Tensor& add_(Tensor& self, const Tensor& other, double alpha) {
  check_inplace(self, &other, "add_");
  check_defined(other, "add_", "source");
  check_same_device(self, other, "add_");
  TINYDDP_CHECK(broadcast_shapes(self.shape(), other.shape()) == self.shape(), "add_: the source of shape ",
                shape_str(other.shape()), " does not broadcast to the destination's shape ", shape_str(self.shape()),
                ".");
  if (needs_promotion(self, other)) {
    const DType result = result_type(self, other);
    check_cast_into(result, self);
    NoGradGuard no_grad;
    const Tensor source = to_dtype(other.detach(), result);
    const Tensor scaled = alpha == 1.0 ? source : mul(source, alpha_operand(alpha, result, self.device()));
    write_into(self, to_dtype(add(self.detach(), scaled), self.dtype()));
    return self;
  }
  if (self.is_contiguous() && other.is_contiguous() && other.shape() == self.shape()) {
    // The optimizer's and the reducer's hot path: one fused pass.
    dispatch_floating(self.dtype(), "add_", [&]<typename T>() {
      backend::axpy<T>(self.device(), self.data_ptr<T>(), other.data_ptr<T>(), static_cast<T>(alpha),
                       self.data_ptr<T>(), self.numel());
    });
    self.bump_version();
    return self;
  }
  NoGradGuard no_grad;
  write_into(self, add(self.detach(), alpha == 1.0 ? other.detach() : mul(other.detach(), alpha)));
  return self;
}

// self -= alpha * other, with sub's refusal of bool operands.
Tensor& sub_(Tensor& self, const Tensor& other, double alpha) {
  check_defined(self, "sub_", "tensor modified in place");
  check_defined(other, "sub_", "source");
  if (self.dtype() == DType::b8 || other.dtype() == DType::b8) {
    NoGradGuard no_grad;
    sub(self.detach(), other.detach());   // throws PyTorch's text for bool operands
  }
  return add_(self, other, -alpha);
}

Tensor& mul_(Tensor& self, double factor) {
  check_defined(self, "mul_", "tensor modified in place");
  if (!is_floating(self.dtype())) return mul_(self, wrapped_number(factor, self.device()));
  check_inplace(self, nullptr, "mul_");
  if (self.is_contiguous()) {   // the reducer's divide of a bucket view: one pass, in place, no buffer
    dispatch_floating(self.dtype(), "mul_", [&]<typename T>() {
      backend::unary<T>(self.device(), kernels::UnaryOp::mul_scalar, self.data_ptr<T>(), self.data_ptr<T>(),
                        self.numel(), factor);
    });
    self.bump_version();
    return self;
  }
  NoGradGuard no_grad;
  write_into(self, mul(self.detach(), factor));
  return self;
}

Tensor& mul_(Tensor& self, const Tensor& other) {
  check_inplace(self, &other, "mul_");
  check_defined(other, "mul_", "source");
  check_same_device(self, other, "mul_");
  if (needs_promotion(self, other)) check_cast_into(result_type(self, other), self);
  NoGradGuard no_grad;
  const Tensor product = mul(self.detach(), other.detach());
  TINYDDP_CHECK(product.shape() == self.shape(), "mul_: the source of shape ", shape_str(other.shape()),
                " does not broadcast to the destination's shape ", shape_str(self.shape()), ".");
  write_into(self, to_dtype(product, self.dtype()));
  return self;
}

// self /= other (true division: an integer self is refused, as its quotient is floating).
Tensor& div_(Tensor& self, const Tensor& other) {
  check_inplace(self, &other, "div_");
  check_defined(other, "div_", "source");
  check_same_device(self, other, "div_");
  const DType promoted = result_type(self, other);
  check_cast_into(is_floating(promoted) ? promoted : kDefaultFloatDType, self);
  NoGradGuard no_grad;
  const Tensor quotient = div(self.detach(), other.detach());
  TINYDDP_CHECK(quotient.shape() == self.shape(), "div_: the source of shape ", shape_str(other.shape()),
                " does not broadcast to the destination's shape ", shape_str(self.shape()), ".");
  write_into(self, to_dtype(quotient, self.dtype()));
  return self;
}

Tensor& fill_(Tensor& self, double value) {
  check_inplace(self, nullptr, "fill_");
  if (self.device().is_cpu() && self.is_contiguous()) {
    dispatch_all(self.dtype(), [&]<typename T>() {
      std::fill(self.data_ptr<T>(), self.data_ptr<T>() + self.numel(), static_cast<T>(value));
    });
    self.bump_version();
    return self;
  }
  write_into(self, full({}, value, self.dtype(), self.device()));   // a scalar broadcast over self
  return self;
}

Tensor& copy_(Tensor& self, const Tensor& src) {
  check_inplace(self, &src, "copy_");
  check_defined(src, "copy_", "source");
  TINYDDP_CHECK(broadcast_shapes(self.shape(), src.shape()) == self.shape(), "copy_: the source of shape ",
                shape_str(src.shape()), " does not broadcast to the destination's shape ", shape_str(self.shape()), ".");
  NoGradGuard no_grad;
  // Like PyTorch's copy_, the source may live on another device and hold another dtype.
  write_into(self, to_device(to_dtype(src.detach(), self.dtype()), self.device()));
  return self;
}

}  // namespace tinyddp
