#include "engine/core/tensor.h"

#include <cstdlib>
#include <cstring>
#include <iomanip>
#include <ostream>

#include "engine/autograd/accumulate_grad.h"
#include "engine/autograd/functional.h"
#include "engine/autograd/grad_mode.h"
#include "engine/autograd/node.h"
#include "engine/core/backend.h"
#include "engine/ops/ops.h"

namespace tinyddp {

Storage::Storage(size_t nbytes_, Device device_)
    : data(backend::allocate(nbytes_, device_)), nbytes(nbytes_), device(device_) {}

Storage::~Storage() { backend::deallocate(data, device); }

TensorImpl::~TensorImpl() { autograd::release_node(std::move(grad_fn)); }

// ---- metadata ----
const Shape& Tensor::shape() const { return impl_->shape; }
const Shape& Tensor::strides() const { return impl_->strides; }
int64_t Tensor::offset() const { return impl_->offset; }
int64_t Tensor::size(int64_t d) const { return impl_->shape[wrap_dim(d, dim(), "size")]; }
int64_t Tensor::numel() const { return numel_of(impl_->shape); }
DType Tensor::dtype() const { return impl_->dtype; }
Device Tensor::device() const { return impl_->storage->device; }
const std::shared_ptr<Storage>& Tensor::storage() const { return impl_->storage; }
uint64_t Tensor::version() const { return impl_->version->load(); }
void Tensor::bump_version() const { impl_->version->fetch_add(1); }

bool Tensor::is_contiguous() const {
  int64_t expected = 1;
  for (size_t i = impl_->shape.size(); i-- > 0;) {
    if (impl_->shape[i] == 1) continue;   // a size-1 dim's stride never matters
    if (impl_->strides[i] != expected) return false;
    expected *= impl_->shape[i];
  }
  return true;
}

void* Tensor::raw_data() const {
  return static_cast<char*>(impl_->storage->data) + impl_->offset * static_cast<int64_t>(element_size(impl_->dtype));
}

template <typename T>
T* Tensor::data_ptr() const {
  TINYDDP_CHECK(defined(), "data_ptr: the tensor is undefined.");
  TINYDDP_CHECK(impl_->dtype == dtype_of<T>(), "data_ptr: the tensor holds ", dtype_name(impl_->dtype),
                " but ", dtype_name(dtype_of<T>()), " was requested.");
  return static_cast<T*>(raw_data());
}
template float* Tensor::data_ptr<float>() const;
template double* Tensor::data_ptr<double>() const;
template int64_t* Tensor::data_ptr<int64_t>() const;

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
bool Tensor::requires_grad() const { return impl_->requires_grad || impl_->grad_fn != nullptr; }

Tensor& Tensor::requires_grad_(bool requires_grad) {
  TINYDDP_CHECK(is_leaf() || requires_grad,
                "you can only change requires_grad flags of leaf variables. If you want to use a computed variable "
                "in a subgraph that doesn't require differentiation use var_no_grad = var.detach().");
  TINYDDP_CHECK(!requires_grad || is_floating(dtype()),
                "only Tensors of floating point dtype can require gradients; this one is ", dtype_name(dtype()), ".");
  impl_->requires_grad = requires_grad;
  return *this;
}

bool Tensor::is_leaf() const { return impl_->grad_fn == nullptr; }
const Tensor& Tensor::grad() const { return impl_->grad; }
void Tensor::set_grad(const Tensor& grad) const {
  TINYDDP_CHECK(!grad.defined() || grad.shape() == shape(), "set_grad: assigned grad has shape ",
                grad.defined() ? shape_str(grad.shape()) : "", " but the tensor has shape ", shape_str(shape()), ".");
  impl_->grad = grad;
}
const std::shared_ptr<autograd::Node>& Tensor::grad_fn() const { return impl_->grad_fn; }
uint32_t Tensor::output_nr() const { return impl_->output_nr; }

Tensor Tensor::detach() const {
  Tensor out = make_view(*this, shape(), strides(), offset());
  return out;
}

void Tensor::set_data(const Tensor& new_data) const {
  TINYDDP_CHECK(defined() && new_data.defined(), "set_data: both tensors must be defined.");
  TINYDDP_CHECK(is_leaf(), "set_data: only a leaf's data can be replaced; this tensor has grad_fn=",
                impl_->grad_fn ? impl_->grad_fn->name() : "", ".");
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
  } else {
    impl_->grad_fn->add_pre_hook(impl_->output_nr, std::move(hook));
  }
}

void Tensor::register_post_accumulate_grad_hook(PostAccumulateGradHook hook) const {
  TINYDDP_CHECK(is_leaf() && requires_grad(),
                "post accumulate grad hooks cannot be registered on non-leaf tensors (or leaves that do not "
                "require grad): they run after AccumulateGrad updates a leaf's .grad.");
  std::lock_guard<std::mutex> lock(impl_->autograd_mutex);
  impl_->post_accumulate_grad_hooks.push_back(std::move(hook));
}

void Tensor::retain_grad() const {
  TINYDDP_CHECK(requires_grad(), "can't retain_grad on Tensor that has requires_grad=False");
  if (is_leaf() || impl_->retains_grad) return;
  impl_->retains_grad = true;
  // Keep a weak handle: the hook must not keep the tensor alive through its own grad_fn.
  std::weak_ptr<TensorImpl> weak = impl_;
  impl_->grad_fn->add_pre_hook(impl_->output_nr, [weak](const Tensor& g) -> Tensor {
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
Tensor& Tensor::zero_() { return tinyddp::fill_(*this, 0.0); }
Tensor& Tensor::fill_(double value) { return tinyddp::fill_(*this, value); }
Tensor& Tensor::copy_(const Tensor& src) { return tinyddp::copy_(*this, src); }

// ---- construction ----
Tensor empty(const Shape& shape, DType dtype, Device device) {
  for (int64_t d : shape)
    TINYDDP_CHECK(d >= 0, "empty: negative dimension in shape ", shape_str(shape), "; sizes must be >= 0.");
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = std::make_shared<Storage>(static_cast<size_t>(numel_of(shape)) * element_size(dtype), device);
  impl->shape = shape;
  impl->strides = contiguous_strides(shape);
  impl->dtype = dtype;
  return Tensor(std::move(impl));
}

Tensor full(const Shape& shape, double value, DType dtype, Device device) {
  Tensor t = empty(shape, dtype, device);
  if (device.is_cpu() || !is_floating(dtype)) {   // integer device tensors are filled on the host, then copied
    Tensor host = device.is_cpu() ? t : empty(shape, dtype);
    dispatch_all(dtype, [&]<typename T>() {
      T* p = host.data_ptr<T>();
      std::fill(p, p + host.numel(), static_cast<T>(value));
    });
    if (!device.is_cpu())
      backend::copy_bytes(t.raw_data(), device, host.raw_data(), Device::cpu(), t.storage()->nbytes);
    return t;
  }
  dispatch_floating(dtype, "full", [&]<typename T>() {
    backend::unary<T>(device, kernels::UnaryOp::fill, t.data_ptr<T>(), t.data_ptr<T>(), t.numel(), value);
  });
  return t;
}
Tensor zeros(const Shape& shape, DType dtype, Device device) { return full(shape, 0.0, dtype, device); }
Tensor ones(const Shape& shape, DType dtype, Device device) { return full(shape, 1.0, dtype, device); }
Tensor scalar_tensor(double value, DType dtype, Device device) { return full({}, value, dtype, device); }
Tensor zeros_like(const Tensor& t) { return zeros(t.shape(), t.dtype(), t.device()); }
Tensor ones_like(const Tensor& t) { return ones(t.shape(), t.dtype(), t.device()); }

Tensor arange(int64_t n, DType dtype) {
  Tensor t = empty({n}, dtype);
  dispatch_all(dtype, [&]<typename T>() {
    T* p = t.data_ptr<T>();
    for (int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(i);
  });
  return t;
}

template <typename T>
Tensor from_vector(const std::vector<T>& values, const Shape& shape, DType dtype) {
  TINYDDP_CHECK(static_cast<int64_t>(values.size()) == numel_of(shape), "from_vector: got ", values.size(),
                " values for shape ", shape_str(shape), ", which has ", numel_of(shape), " elements.");
  Tensor t = empty(shape, dtype);
  dispatch_all(dtype, [&]<typename S>() {
    S* p = t.data_ptr<S>();
    for (size_t i = 0; i < values.size(); ++i) p[i] = static_cast<S>(values[i]);
  });
  return t;
}
template Tensor from_vector<float>(const std::vector<float>&, const Shape&, DType);
template Tensor from_vector<double>(const std::vector<double>&, const Shape&, DType);
template Tensor from_vector<int64_t>(const std::vector<int64_t>&, const Shape&, DType);

Tensor tensor(std::initializer_list<double> values, DType dtype) {
  return from_vector(std::vector<double>(values), {static_cast<int64_t>(values.size())}, dtype);
}

Tensor make_view(const Tensor& base, Shape shape, Shape strides, int64_t offset) {
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = base.storage();
  impl->shape = std::move(shape);
  impl->strides = std::move(strides);
  impl->offset = offset;
  impl->dtype = base.dtype();
  impl->version = base.impl()->version;   // views share the version counter with their base
  return Tensor(std::move(impl));
}

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
