// Tensor's storage, metadata, views and construction: the bottom of the engine, below autograd and ops.
// The methods that run autograd or an op (backward, hooks, .exp(), .to(), printing) are defined above both,
// in engine/tensor_methods.cpp, so that core/ includes nothing above it.
#include "engine/core/tensor.h"

#include <algorithm>
#include <cmath>

#include "engine/core/backend.h"
#include "engine/core/inference_mode.h"
#include "engine/core/promotion.h"

namespace tinyddp {

Storage::Storage(size_t nbytes_, Device device_)
    : data(backend::allocate(nbytes_, device_)), nbytes(nbytes_), device(device_) {}

Storage::Storage(void* data_, size_t nbytes_, Device device_, std::function<void(void*)> release_)
    : data(data_), nbytes(nbytes_), device(device_),
      release(std::make_unique<std::function<void(void*)>>(std::move(release_))) {}

Storage::~Storage() {
  if (release)
    (*release)(data);
  else
    backend::deallocate(data, nbytes, device);
}

// ---- metadata ----
const Shape& Tensor::shape() const { return impl_->shape; }
const Shape& Tensor::strides() const { return impl_->strides; }
int64_t Tensor::offset() const { return impl_->offset; }
int64_t Tensor::size(int64_t d) const {
  TINYDDP_CHECK_INDEX(dim() > 0, "Dimension specified as ", d, " but tensor has no dimensions");
  return impl_->shape[wrap_dim(d, dim())];
}
int64_t Tensor::numel() const { return numel_of(impl_->shape); }
DType Tensor::dtype() const { return impl_->dtype; }
Device Tensor::device() const { return impl_->storage->device; }
const std::shared_ptr<Storage>& Tensor::storage() const { return impl_->storage; }
uint64_t Tensor::version() const { return impl_->version->load(); }
// An in-place write to an inference tensor outside inference mode is refused here, after the write, as PyTorch's
// VariableVersion::bump refuses it (so the data is changed, then the RuntimeError raised).
void Tensor::bump_version() const {
  check_inference_inplace(*this);
  impl_->version->fetch_add(1);
}

bool Tensor::is_wrapped_number() const { return impl_->is_wrapped_number; }
bool Tensor::is_inference() const { return impl_->is_inference; }

bool Tensor::is_contiguous() const {
  if (numel() == 0) return true;   // no element to be out of place (PyTorch's rule too)
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
template bool* Tensor::data_ptr<bool>() const;

// ---- autograd ----
// A view requires grad when its base does, even before its grad_fn is rebuilt (PyTorch's DifferentiableViewMeta).
bool Tensor::requires_grad() const {
  return impl_->requires_grad || impl_->grad_fn != nullptr ||
         (impl_->view_base.defined() && impl_->view_base.requires_grad());
}

Tensor& Tensor::requires_grad_(bool requires_grad) {
  TINYDDP_CHECK(!requires_grad || !is_inference() || InferenceMode::is_enabled(),
                "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.");
  TINYDDP_CHECK(is_leaf() || requires_grad,
                "you can only change requires_grad flags of leaf variables. If you want to use a computed variable "
                "in a subgraph that doesn't require differentiation use var_no_grad = var.detach().");
  TINYDDP_CHECK(!requires_grad || is_floating(dtype()), "only Tensors of floating point dtype can require gradients");
  impl_->requires_grad = requires_grad;
  return *this;
}

bool Tensor::is_leaf() const { return grad_fn() == nullptr; }
bool Tensor::is_view() const { return impl_->view_base.defined(); }
const Tensor& Tensor::view_base() const { return impl_->view_base; }
const Tensor& Tensor::grad() const { return impl_->grad; }
void Tensor::set_grad(const Tensor& grad) const {
  TINYDDP_CHECK(!grad.defined() || grad.shape() == shape(), "assigned grad has data of a different size");
  impl_->grad = grad;
}
// Tensor::grad_fn() is defined in engine/autograd/inplace.cpp: a view's history may have to be rebuilt.
uint32_t Tensor::output_nr() const { return impl_->output_nr; }

Tensor Tensor::variable_data() const {
  Tensor out = make_view(*this, shape(), strides(), offset());
  out.impl()->version = std::make_shared<std::atomic<uint64_t>>(0);
  return out;
}

Tensor Tensor::detach() const {
  Tensor out = make_view(*this, shape(), strides(), offset());
  return out;
}

// ---- construction ----
Tensor empty(const Shape& shape, DType dtype, Device device) {
  for (int64_t d : shape)
    TINYDDP_CHECK(d >= 0, "empty: negative dimension in shape ", shape_str(shape), "; sizes must be >= 0.");
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = std::make_shared<Storage>(static_cast<size_t>(numel_of(shape)) * element_size(dtype), device);
  impl->shape = shape;
  impl->strides = contiguous_strides(shape);
  impl->dtype = dtype;
  impl->version = std::make_shared<std::atomic<uint64_t>>(0);
  impl->is_inference = InferenceMode::is_enabled();
  return Tensor(std::move(impl));
}

Tensor from_external(void* data, const Shape& shape, DType dtype, Device device, std::function<void(void*)> release) {
  Tensor t = empty({0}, dtype, device);
  TensorImpl& impl = *t.impl();
  impl.storage = std::make_shared<Storage>(data, static_cast<size_t>(numel_of(shape)) * element_size(dtype), device,
                                           std::move(release));
  impl.shape = shape;
  impl.strides = contiguous_strides(shape);
  return t;
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

namespace {
// The value written exactly (an int64 is never rounded through a double), on the host, then moved to device.
template <typename T>
Tensor wrapped(T value, DType dtype, Device device) {
  Tensor host = empty({}, dtype);
  *host.data_ptr<T>() = value;
  Tensor t = host;
  if (!device.is_cpu()) {
    t = empty({}, dtype, device);
    backend::copy_bytes(t.raw_data(), device, host.raw_data(), Device::cpu(), sizeof(T));
  }
  t.impl()->is_wrapped_number = true;
  return t;
}
}  // namespace

Tensor wrapped_number(double value, Device device) { return wrapped(value, DType::f64, device); }
Tensor wrapped_number(int64_t value, Device device) { return wrapped(value, DType::i64, device); }
Tensor wrapped_number(bool value, Device device) { return wrapped(value, DType::b8, device); }
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

// Note [arange's rounding]
// PyTorch 1.13's CPU arange (ATen's RangeFactoriesKernel, built for AVX2 with FMA contraction) does not compute
// start + i * step element by element. Over a range it fills blocks of two vectors (8 floats or 4 doubles each):
// each vector's first element is base = T(fma(step, i0, start)) and its lane j is T(fma(j, step, base)), all in
// double; elements after the last whole block are T(fma(step, i, start)). A range of more than 32768 elements is
// first cut into equal chunks, one per thread (at::parallel_for's OpenMP split), each starting a block anew.
// So arange(-1, 1, 0.1)[10] is -2.98e-09, not 0, in float32 as in 1.13; the same steps give the same bits here.
Tensor arange(double start, double step, int64_t n, DType dtype, int64_t threads) {
  TINYDDP_CHECK(n >= 0, "arange: expected a size >= 0, got ", n, ".");
  TINYDDP_CHECK(threads >= 1, "arange: expected threads >= 1, got ", threads, ".");
  Tensor t = empty({n}, dtype);
  dispatch_floating(dtype, "arange", [&]<typename T>() {
    constexpr int64_t kGrain = 32768;             // at::internal::GRAIN_SIZE
    constexpr int64_t kLanes = 32 / sizeof(T);    // one AVX2 vector
    T* p = t.data_ptr<T>();
    const int64_t chunks = n > kGrain ? std::min(threads, (n + kGrain - 1) / kGrain) : 1;
    const int64_t chunk = chunks > 0 ? (n + chunks - 1) / chunks : 0;
    for (int64_t begin = 0; begin < n; begin += chunk) {
      const int64_t end = std::min(n, begin + chunk);
      int64_t i = begin;
      for (; i + 2 * kLanes <= end; i += 2 * kLanes) {   // ATen's loop: two vectors a step, each its own base
        for (int64_t v = i; v < i + 2 * kLanes; v += kLanes) {
          const T base = static_cast<T>(std::fma(step, static_cast<double>(v), start));
          for (int64_t j = 0; j < kLanes; ++j) p[v + j] = static_cast<T>(std::fma(static_cast<double>(j), step, base));
        }
      }
      for (; i < end; ++i) p[i] = static_cast<T>(std::fma(step, static_cast<double>(i), start));
    }
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
  impl->is_inference = base.is_inference();   // a view of a normal tensor is normal, even under inference mode
  return Tensor(std::move(impl));
}

}  // namespace tinyddp
