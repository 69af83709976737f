// In-place ops. They bump the version counter shared by a tensor and its views, which is how a saved
// tensor notices it was modified before the backward that needs it.
//
// Without autograd (grad mode off, as in an optimizer's update, or no input that requires grad) they write in
// place, the hot ones (the optimizer's and the reducer's) in one fused pass. Under autograd they are recorded as
// PyTorch 1.13 records them (Note [In-place ops under autograd] in engine/autograd/inplace.h): the out-of-place
// op runs on a copy of self's values that carries self's history, its result is written into self, and its node
// becomes self's history (on a view: the base's, through CopySlices).
#include "engine/ops/op_utils.h"

#include "engine/autograd/inplace.h"
#include "engine/ops/composite.h"
#include "engine/core/promotion.h"

namespace tinyddp {

using namespace detail;

namespace {

bool records(const Tensor& self, const TensorList& others) {
  if (!GradMode::is_enabled()) return false;
  bool any = self.requires_grad();
  for (const Tensor& t : others) any = any || (t.defined() && t.requires_grad());
  return any;
}

// The checks every in-place op makes before anything else, as 1.13 does: the writes autograd refuses, and a tensor
// whose elements share memory (an expanded one), which no write may target. Returns whether the op records.
// And, as 1.13's TensorIterator, an operand that shares part of self's memory (check_no_partial_overlap).
// `overlap_check`: false for the ops that skip both checks in 1.13 (fill_ and zero_, whose every write of one memory
// location writes the same value; masked_fill_, which takes its value as a number).
bool begin_inplace(const Tensor& self, const TensorList& others, const char* op, bool overlap_check = true) {
  check_defined(self, op, "tensor modified in place");
  const bool record = records(self, others);
  autograd::check_inplace(self, record);
  if (!overlap_check) return record;
  for (int64_t d = 0; d < self.dim(); ++d)
    TINYDDP_CHECK(self.shape()[d] <= 1 || self.strides()[d] != 0,
                  "unsupported operation: more than one element of the written-to tensor refers to a single memory "
                  "location. Please clone() the tensor before performing the operation.");
  for (const Tensor& other : others) check_no_partial_overlap(self, other);
  return record;
}

// 1.13's check that an in-place op's operand broadcasts to self's shape, with TensorIterator's text.
void check_broadcasts_into(const Tensor& self, const Tensor& other) {
  const Shape shape = broadcast_shapes(self.shape(), other.shape());
  TINYDDP_CHECK(shape == self.shape(), "output with shape ", shape_str(self.shape()),
                " doesn't match the broadcast shape ", shape_str(shape));
}

// Writes `value` (any layout, broadcastable to self) into self's elements, through self's strides.
void write_into(Tensor& self, const Tensor& value) {
  copy_values(self, value);
  self.bump_version();
}

// PyTorch's check that an in-place op's result dtype (promoted from self and its operands) can be written
// into self: `int_tensor += 0.5` is refused, `float32_tensor += float64_tensor` is computed in float64 and
// rounded into self.
void check_cast_into(DType result, const Tensor& self) {
  TINYDDP_CHECK(can_cast(result, self.dtype()), "result type ", scalar_type_name(result),
                " can't be cast to the desired output type ", scalar_type_name(self.dtype()));
}

// self's values in a tensor of their own that carries self's history: what an in-place op's node sees as self.
// A copy, so that the node may save it (mul_ saves it for other's gradient, log_ for its own) while self changes.
Tensor with_history_of(const Tensor& self) {
  Tensor out = clone(self.detach());
  out.impl()->grad_fn = self.grad_fn();
  out.impl()->output_nr = self.output_nr();
  return out;
}

// Runs `op` out of place on self's values and history, writes its result into self (one version bump) and makes
// its node self's history (Note [In-place ops under autograd]).
Tensor& record_inplace(Tensor& self, const std::function<Tensor(const Tensor&)>& op) {
  const Tensor input = with_history_of(self);
  const Tensor result = op(input);
  TINYDDP_CHECK(result.shape() == self.shape(), "output with shape ", shape_str(self.shape()),
                " doesn't match the broadcast shape ", shape_str(result.shape()));
  check_cast_into(result.dtype(), self);
  {
    NoGradGuard no_grad;
    write_into(self, to_dtype(result.detach(), self.dtype()));
  }
  const std::shared_ptr<autograd::Node> fn = result.grad_fn();
  if (!fn || fn == input.grad_fn()) return self;   // the op gave its input back: self's history stands
  autograd::rebase_history(self, fn);
  // After the rebase: a saved output is self now, with self's new history (SavedTensor::rebind_output).
  fn->replace_saved_output(result.output_nr(), self);
  return self;
}

// The node of an in-place op that overwrites self whatever it held (fill_, zero_, copy_): self's old values get a
// zero gradient.
Tensor overwritten(const Tensor& self, Tensor result, const char* name, const Tensor& source) {
  auto node = autograd::make_node(name, source.defined() ? TensorList{self, source} : TensorList{self}, [src_shape = source.defined() ? source.shape() : Shape{},
                                                         src_dtype = source.defined() ? source.dtype() : self.dtype(),
                                                         src_device = source.defined() ? source.device()
                                                                                       : self.device()](
                                                            const TensorList& g, OpNode& n) {
    TensorList out(n.next_edges().size());
    if (n.needs_input_grad(0)) out[0] = zeros_like(g[0]);
    if (n.needs_input_grad(1)) out[1] = to_device(to_dtype(sum_to(g[0], src_shape), src_dtype), src_device);
    return out;
  });
  autograd::set_history(result, node);
  return result;
}

}  // namespace

Tensor& apply_inplace(Tensor& self, const TensorList& others, const std::function<Tensor(const Tensor&)>& op,
                      bool overlap_check) {
  if (begin_inplace(self, others, "in-place op", overlap_check)) return record_inplace(self, op);
  const Tensor result = op(self.detach());
  TINYDDP_CHECK(result.shape() == self.shape(), "output with shape ", shape_str(self.shape()),
                " doesn't match the broadcast shape ", shape_str(result.shape()));
  check_cast_into(result.dtype(), self);
  NoGradGuard no_grad;
  write_into(self, to_dtype(result.detach(), self.dtype()));
  return self;
}

namespace {

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

// x + alpha * other recorded as 1.13's one node for add/sub with alpha (AddBackward0 / SubBackward0, alpha an
// attribute of the node, not a MulBackward1 of its own).
Tensor scaled(const Tensor& x, const Tensor& other, double alpha, const char* name) {
  return composite(name, {x, other}, [&] { return TensorList{add(x, mul(other, alpha))}; })[0];
}

}  // namespace

// self += alpha * other (other broadcast to self's shape).
Tensor& add_(Tensor& self, const Tensor& other, double alpha) {
  check_defined(other, "add_", "source");
  const bool record = begin_inplace(self, {other}, "add_");
  check_same_device(self, other, "add_");
  check_broadcasts_into(self, other);
  if (record)
    return record_inplace(self, [&](const Tensor& x) {
      return alpha == 1.0 ? add(x, other) : scaled(x, other, alpha, "AddBackward0");
    });
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
  if (records(self, {other})) {   // recorded as sub (SubBackward0), not as add of a negated source
    begin_inplace(self, {other}, "sub_");
    return record_inplace(self, [&](const Tensor& x) {
      return alpha == 1.0 ? sub(x, other) : scaled(x, other, -alpha, "SubBackward0");
    });
  }
  return add_(self, other, -alpha);
}

Tensor& mul_(Tensor& self, double factor) {
  check_defined(self, "mul_", "tensor modified in place");
  if (!is_floating(self.dtype())) return mul_(self, wrapped_number(factor, self.device()));
  if (begin_inplace(self, {}, "mul_")) return record_inplace(self, [&](const Tensor& x) { return mul(x, factor); });
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
  check_defined(other, "mul_", "source");
  const bool record = begin_inplace(self, {other}, "mul_");
  check_same_device(self, other, "mul_");
  if (needs_promotion(self, other)) check_cast_into(result_type(self, other), self);
  check_broadcasts_into(self, other);
  if (record) return record_inplace(self, [&](const Tensor& x) { return mul(x, other); });
  NoGradGuard no_grad;
  write_into(self, to_dtype(mul(self.detach(), other.detach()), self.dtype()));
  return self;
}

// self /= other (true division: an integer self is refused, as its quotient is floating).
Tensor& div_(Tensor& self, const Tensor& other) {
  check_defined(other, "div_", "source");
  const bool record = begin_inplace(self, {other}, "div_");
  check_same_device(self, other, "div_");
  const DType promoted = result_type(self, other);
  check_cast_into(is_floating(promoted) ? promoted : kDefaultFloatDType, self);
  check_broadcasts_into(self, other);
  if (record) return record_inplace(self, [&](const Tensor& x) { return div(x, other); });
  NoGradGuard no_grad;
  write_into(self, to_dtype(div(self.detach(), other.detach()), self.dtype()));
  return self;
}

// self = value everywhere: FillBackward2 under autograd, as 1.13's fill_ with a number.
Tensor& fill_(Tensor& self, double value) {
  if (begin_inplace(self, {}, "fill_", /*overlap_check=*/false))
    return record_inplace(self, [&](const Tensor& x) {
      return overwritten(x, full(x.shape(), value, x.dtype(), x.device()), "FillBackward2", Tensor());
    });
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

// fill_ with a one-element tensor (setitem's number): FillBackward3, the value's gradient the sum of self's.
Tensor& fill_(Tensor& self, const Tensor& value) {
  check_defined(value, "fill_", "value");
  TINYDDP_CHECK(value.dim() == 0, "fill_ only supports 0-dimension value tensor but got tensor with ", value.dim(),
                " dimensions.");
  const bool record = begin_inplace(self, {value}, "fill_", /*overlap_check=*/false);
  if (!record) return fill_(self, value.item());
  return record_inplace(self, [&](const Tensor& x) {
    const Tensor filled = to_dtype(expand(reshape(value.detach(), {}), x.shape()), x.dtype()).contiguous();
    return overwritten(x, clone(filled), "FillBackward3", value);
  });
}

// fill_(0), recorded as 1.13's zero_ (ZeroBackward0).
Tensor& zero_(Tensor& self) {
  if (begin_inplace(self, {}, "zero_", /*overlap_check=*/false))
    return record_inplace(self, [&](const Tensor& x) {
      return overwritten(x, zeros(x.shape(), x.dtype(), x.device()), "ZeroBackward0", Tensor());
    });
  return fill_(self, 0.0);
}

Tensor& copy_(Tensor& self, const Tensor& src) {
  check_defined(src, "copy_", "source");
  const bool record = begin_inplace(self, {src}, "copy_");
  check_broadcasts_into(self, src);
  // Like PyTorch's copy_, the source may live on another device and hold another dtype.
  const auto copied = [&](const Tensor& like) {
    NoGradGuard no_grad;
    return to_device(to_dtype(expand(src.detach(), like.shape()), like.dtype()), like.device()).contiguous();
  };
  if (record)
    return record_inplace(self, [&](const Tensor& x) { return overwritten(x, clone(copied(x)), "CopyBackwards", src); });
  NoGradGuard no_grad;
  write_into(self, copied(self));
  return self;
}

Tensor& overwrite_(Tensor& self, const char* name, const std::function<Tensor()>& values, const TensorList& others,
                   const std::string& not_implemented) {
  if (!begin_inplace(self, others, name)) {
    const Tensor v = values();
    NoGradGuard no_grad;
    write_into(self, to_dtype(v, self.dtype()));
    return self;
  }
  return record_inplace(self, [&](const Tensor& x) {
    Tensor result = to_dtype(values(), x.dtype()).contiguous();   // a fresh tensor
    TensorList inputs{x};
    inputs.insert(inputs.end(), others.begin(), others.end());
    std::vector<std::pair<Shape, DType>> like;   // the inputs' shapes and dtypes, for their zero gradients
    for (const Tensor& t : inputs) like.emplace_back(t.defined() ? t.shape() : Shape{}, (t.defined() ? t : x).dtype());
    auto rule = [like, not_implemented](const TensorList& g, OpNode& n) {
      TINYDDP_CHECK(not_implemented.empty(), "derivative for ", not_implemented, " is not implemented");
      TensorList out(n.next_edges().size());   // the values depend on none of the inputs' values
      for (size_t i = 0; i < out.size(); ++i)
        if (n.needs_input_grad(i)) out[i] = zeros(like[i].first, like[i].second, g[0].device());
      return out;
    };
    autograd::set_history(result, autograd::make_node(name, inputs, rule));
    return result;
  });
}

// ---- in-place view ops ----
// t_, transpose_, squeeze_, unsqueeze_: self takes the shape and strides of the out-of-place view over its own
// storage, its version is bumped (1.13 bumps it though no element changes), and under autograd 1.13's node for the
// in-place form (TBackward1, ...; `backward` undoes the view) becomes self's history, on self itself
// (autograd::set_inplace_view_history).
namespace {

Tensor& view_inplace(Tensor& self, const char* name, const std::function<Tensor(const Tensor&)>& view_op,
                     std::function<Tensor(const Tensor&)> backward) {
  check_defined(self, name, "tensor modified in place");
  const bool record = records(self, {});
  autograd::check_inplace(self, record);
  Tensor view;
  {
    NoGradGuard no_grad;
    view = view_op(self.detach());
  }
  std::shared_ptr<autograd::OpNode> node;
  if (record)
    node = autograd::make_node(name, {self}, [backward = std::move(backward)](const TensorList& g, OpNode&) {
      return TensorList{backward(g[0])};
    });
  TensorImpl& impl = *self.impl();
  impl.shape = view.shape();
  impl.strides = view.strides();
  impl.offset = view.offset();
  self.bump_version();
  if (node) autograd::set_inplace_view_history(self, node);
  return self;
}

}  // namespace

Tensor& t_(Tensor& self) {
  const bool swaps = self.defined() && self.dim() == 2;
  return view_inplace(self, "TBackward1", [](const Tensor& x) { return t(x); },
                      [swaps](const Tensor& g) { return swaps ? t(g) : g; });
}

Tensor& transpose_(Tensor& self, int64_t dim0, int64_t dim1) {
  return view_inplace(self, "TransposeBackward1", [&](const Tensor& x) { return transpose(x, dim0, dim1); },
                      [dim0, dim1](const Tensor& g) { return transpose(g, dim0, dim1); });
}

Tensor& squeeze_(Tensor& self, std::optional<int64_t> dim) {
  const Shape before = self.defined() ? self.shape() : Shape{};
  return view_inplace(self, dim ? "SqueezeBackward3" : "SqueezeBackward2",
                      [&](const Tensor& x) { return squeeze(x, dim); },
                      [before](const Tensor& g) { return reshape(g, before); });
}

Tensor& unsqueeze_(Tensor& self, int64_t dim) {
  const Shape before = self.defined() ? self.shape() : Shape{};
  return view_inplace(self, "UnsqueezeBackward1", [&](const Tensor& x) { return unsqueeze(x, dim); },
                      [before](const Tensor& g) { return reshape(g, before); });
}

}  // namespace tinyddp
