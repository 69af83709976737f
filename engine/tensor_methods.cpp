// Tensor's methods that run autograd or an op: .backward(), hooks, .exp(), .to(), .clone(), in-place sugar,
// copies to the host and printing. They are declared with Tensor (engine/core/tensor.h) for PyTorch's method
// syntax but defined here, above core/, autograd/ and ops/, so that core/ depends on nothing above it.
#include <iomanip>
#include <mutex>
#include <ostream>

#include "engine/autograd/functional.h"
#include "engine/autograd/grad_mode.h"
#include "engine/autograd/node.h"
#include "engine/core/tensor.h"
#include "engine/ops/ops.h"

namespace tinyddp {

Tensor& Tensor::detach_() {
  TINYDDP_CHECK(!is_view(),
                "Can't detach views in-place. Use detach() instead. If you are using DistributedDataParallel (DDP) for "
                "training, and gradient_as_bucket_view is set as True, gradients are views of DDP buckets, and hence "
                "detach_() cannot be called on these gradients. To fix this error, please refer to the "
                "Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution.");
  impl_->requires_grad = false;
  autograd::release_node(std::move(impl_->grad_fn));
  impl_->grad_fn = nullptr;
  impl_->output_nr = 0;
  return *this;
}

// ---- host copies ----
template <typename T>
std::vector<T> Tensor::to_vector() const {
  TINYDDP_CHECK(defined(), "to_vector: the tensor is undefined.");
  const Tensor c = to(Device::cpu()).contiguous();   // a device tensor is copied to the host first
  std::vector<T> out(static_cast<size_t>(c.numel()));
  dispatch_all(c.dtype(), [&]<typename S>() {
    const S* p = c.data_ptr<S>();
    for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<T>(p[i]);
  });
  return out;
}
template std::vector<float> Tensor::to_vector<float>() const;
template std::vector<double> Tensor::to_vector<double>() const;
template std::vector<int64_t> Tensor::to_vector<int64_t>() const;

template <typename T>
T Tensor::item() const {
  TINYDDP_CHECK(defined() && numel() == 1, "item: a Tensor with ", defined() ? numel() : 0,
                " elements cannot be converted to a scalar; only one-element tensors can.");
  return to_vector<T>()[0];
}
template float Tensor::item<float>() const;
template double Tensor::item<double>() const;
template int64_t Tensor::item<int64_t>() const;

// ---- autograd ----
void Tensor::set_data(const Tensor& new_data) const {
  TINYDDP_CHECK(defined() && new_data.defined(), "set_data: both tensors must be defined.");
  TINYDDP_CHECK(is_leaf(), "set_data: only a leaf's data can be replaced; this tensor has grad_fn=",
                impl_->grad_fn ? impl_->grad_fn->name() : "", ".");
  {
    // Note [A new dtype drops the grad accumulator]: as 1.13's set_data, replacing the data by one of another dtype
    // forgets the leaf's AccumulateGrad, so the next backward makes a fresh one. Hooks held on the old one (DDP's
    // reducer keeps its accumulators and hooks them) no longer fire: `ddp.double()` after wrapping leaves every
    // gradient local, silently, as in 1.13. The same dtype keeps the accumulator.
    std::lock_guard<std::mutex> lock(impl_->autograd_mutex);
    if (new_data.dtype() != impl_->dtype) impl_->grad_accumulator.reset();
  }
  impl_->storage = new_data.storage();
  impl_->shape = new_data.shape();
  impl_->strides = new_data.strides();
  impl_->offset = new_data.offset();
  impl_->dtype = new_data.dtype();
  impl_->version = new_data.impl()->version;
}

void Tensor::backward(const Tensor& gradient, const BackwardOptions& options) const {
  autograd::backward({*this}, gradient.defined() ? std::vector<Tensor>{gradient} : std::vector<Tensor>{}, options);
}

void Tensor::register_hook(GradHook hook) const {
  TINYDDP_CHECK(requires_grad(), "cannot register a hook on a tensor that doesn't require gradient");
  if (is_leaf()) {
    std::lock_guard<std::mutex> lock(impl_->autograd_mutex);
    impl_->leaf_grad_hooks.push_back(std::move(hook));
    return;
  }
  // The first hook picks the node; later ones follow it there (TensorImpl::hooks_node).
  std::shared_ptr<autograd::Node> node;
  uint32_t input_nr = 0;
  {
    std::lock_guard<std::mutex> lock(impl_->autograd_mutex);
    if (!impl_->has_hooks_node) {
      impl_->hooks_node = grad_fn();
      impl_->hooks_input_nr = impl_->output_nr;
      impl_->has_hooks_node = true;
    }
    node = impl_->hooks_node.lock();
    input_nr = impl_->hooks_input_nr;
  }
  if (node) node->add_pre_hook(input_nr, std::move(hook));
}

void Tensor::register_post_accumulate_grad_hook(PostAccumulateGradHook hook) const {
  TINYDDP_CHECK(is_leaf() && requires_grad(),
                "post accumulate grad hooks cannot be registered on non-leaf tensors (or leaves that do not "
                "require grad): they run after AccumulateGrad updates a leaf's .grad.");
  std::lock_guard<std::mutex> lock(impl_->autograd_mutex);
  impl_->post_accumulate_grad_hooks.push_back(std::move(hook));
}

bool Tensor::retains_grad() const { return impl_->retains_grad; }

void Tensor::retain_grad() const {
  TINYDDP_CHECK(requires_grad(), "can't retain_grad on Tensor that has requires_grad=False");
  if (is_leaf() || impl_->retains_grad) return;
  impl_->retains_grad = true;
  // Keep a weak handle: the hook must not keep the tensor alive through its own grad_fn. An in-place op on the
  // tensor moves the hook to its new node (autograd::rebase_history); a write through a view of it does not, so
  // .grad is then the gradient of the values before that write, as in 1.13.
  std::weak_ptr<TensorImpl> weak = impl_;
  grad_fn()->set_retains_grad_hook(impl_->output_nr, [weak](const Tensor& g) -> Tensor {
    if (auto self = weak.lock()) {
      std::lock_guard<std::mutex> lock(self->autograd_mutex);
      if (!self->grad.defined()) {
        self->grad = GradMode::is_enabled() ? tinyddp::clone(g) : g.detach().clone();   // own copy, as AccumulateGrad
      } else {
        self->grad = self->grad + g;
      }
    }
    return Tensor();
  });
}

// ---- sugar ----
Tensor Tensor::operator-() const { return neg(*this); }
Tensor Tensor::exp() const { return tinyddp::exp(*this); }
Tensor Tensor::log() const { return tinyddp::log(*this); }
Tensor Tensor::sqrt() const { return tinyddp::sqrt(*this); }
Tensor Tensor::abs() const { return tinyddp::abs(*this); }
Tensor Tensor::relu() const { return tinyddp::relu(*this); }
Tensor Tensor::tanh() const { return tinyddp::tanh(*this); }
Tensor Tensor::sigmoid() const { return tinyddp::sigmoid(*this); }
Tensor Tensor::pow(double exponent) const { return tinyddp::pow(*this, exponent); }
Tensor Tensor::sum() const { return tinyddp::sum(*this); }
Tensor Tensor::sum(const std::vector<int64_t>& dims, bool keepdim) const { return tinyddp::sum(*this, dims, keepdim); }
Tensor Tensor::mean() const { return tinyddp::mean(*this); }
Tensor Tensor::mean(const std::vector<int64_t>& dims, bool keepdim) const {
  return tinyddp::mean(*this, dims, keepdim);
}
Tensor Tensor::matmul(const Tensor& other) const { return tinyddp::matmul(*this, other); }
Tensor Tensor::reshape(const Shape& s) const { return tinyddp::reshape(*this, s); }
Tensor Tensor::view(const Shape& s) const { return tinyddp::view(*this, s); }
Tensor Tensor::transpose(int64_t d0, int64_t d1) const { return tinyddp::transpose(*this, d0, d1); }
Tensor Tensor::t() const { return tinyddp::t(*this); }
Tensor Tensor::narrow(int64_t d, int64_t start, int64_t length) const {
  return tinyddp::narrow(*this, d, start, length);
}
Tensor Tensor::expand(const Shape& s) const { return tinyddp::expand(*this, s); }
Tensor Tensor::contiguous() const { return is_contiguous() ? *this : tinyddp::clone(*this); }
Tensor Tensor::clone() const { return tinyddp::clone(*this); }
Tensor Tensor::to(DType dtype) const { return tinyddp::to_dtype(*this, dtype); }
Tensor Tensor::to(Device device) const { return tinyddp::to_device(*this, device); }

Tensor& Tensor::add_(const Tensor& other, double alpha) { return tinyddp::add_(*this, other, alpha); }
Tensor& Tensor::mul_(double factor) { return tinyddp::mul_(*this, factor); }
Tensor& Tensor::mul_(const Tensor& other) { return tinyddp::mul_(*this, other); }
Tensor& Tensor::zero_() { return tinyddp::zero_(*this); }
Tensor& Tensor::fill_(double value) { return tinyddp::fill_(*this, value); }
Tensor& Tensor::copy_(const Tensor& src) { return tinyddp::copy_(*this, src); }

// ---- printing ----
std::ostream& operator<<(std::ostream& os, const Tensor& t) {
  if (!t.defined()) return os << "Tensor(undefined)";
  os << "Tensor(shape=" << shape_str(t.shape()) << ", dtype=" << dtype_name(t.dtype());
  if (!t.device().is_cpu()) os << ", device=" << t.device().str();
  if (t.requires_grad()) os << ", requires_grad";
  if (t.grad_fn()) os << ", grad_fn=" << t.grad_fn()->name();
  os << ", values=[";
  const auto v = t.to_vector<double>();
  const size_t shown = std::min<size_t>(v.size(), 16);
  for (size_t i = 0; i < shown; ++i) os << (i ? ", " : "") << std::setprecision(6) << v[i];
  if (v.size() > shown) os << ", ...";
  return os << "])";
}

}  // namespace tinyddp
