// Tensor: a handle to shared storage seen through (shape, strides, offset), plus autograd state.
//
//   Tensor x = randn({2, 3}, DType::f64).requires_grad_();   // a leaf that wants .grad
//   Tensor y = (x * x).sum();                                 // records MulBackward0 -> SumBackward0
//   y.backward();                                             // x.grad() == 2 * x
//   Tensor v = x.transpose(0, 1);                             // a view: same storage, other strides
//   Tensor g = x.detach().to(Device::cuda(0));                // a copy on the GPU; ops there run CUDA kernels
//
// Copying a Tensor copies the handle (like a Python reference); views share storage and the version
// counter; .clone() copies data. Ops live in engine/ops/ops.h; the methods below are thin sugar over them.
//
// Invariants:
//  - strides and offset are in elements; storage lives on one device (host memory, or a CUDA device's
//    memory from the caching allocator), and every op's inputs must share it (engine/core/backend.h picks
//    the kernels); a tensor and all its views share one version counter, bumped by every in-place op;
//  - requires_grad() is true for leaves marked with requires_grad_() and for every op result with a grad_fn;
//  - a leaf's AccumulateGrad node is created lazily and cached weakly (the graph keeps it alive), as PyTorch;
//  - a view op's output knows its base (the root of its chain of views): an in-place op on it is recorded on the
//    base, and its grad_fn is rebuilt when the base changed in place since (Note [In-place ops under autograd]).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "engine/core/dtype.h"
#include "engine/core/shape.h"

namespace tinyddp {

namespace autograd {
class Node;
}

class Tensor;
struct TensorImpl;

// Options of Tensor::backward / autograd::backward. retain_graph defaults to create_graph, as in PyTorch.
struct BackwardOptions {
  std::optional<bool> retain_graph;
  bool create_graph = false;
  std::vector<Tensor> inputs;   // if non-empty, accumulate into these only (a non-leaf retains its gradient)
};

// A hook on the gradient flowing into a tensor. Returns a replacement gradient, or an undefined Tensor to
// keep the gradient as it is.
using GradHook = std::function<Tensor(const Tensor& grad)>;
// Runs after AccumulateGrad has updated a leaf's .grad (PyTorch's register_post_accumulate_grad_hook).
using PostAccumulateGradHook = std::function<void(const Tensor& leaf)>;

struct Storage {
  Storage(size_t nbytes, Device device);
  // Memory allocated elsewhere (from_external): `release(data)` runs instead of the backend's deallocate.
  Storage(void* data, size_t nbytes, Device device, std::function<void(void*)> release);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  void* data = nullptr;
  size_t nbytes = 0;
  Device device;
  // Null: the backend allocated `data`. Behind a pointer so that the common storage stays small (a
  // std::function inline made every tensor's storage 32 bytes larger: +12% per node on bench_autograd's chain).
  std::unique_ptr<std::function<void(void*)>> release;
};

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  bool defined() const { return impl_ != nullptr; }
  TensorImpl* impl() const { return impl_.get(); }
  const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }
  bool is_same(const Tensor& other) const { return impl_ == other.impl_; }

  // ---- metadata ----
  const Shape& shape() const;
  const Shape& strides() const;
  int64_t offset() const;
  int64_t dim() const { return static_cast<int64_t>(shape().size()); }
  int64_t size(int64_t d) const;
  int64_t numel() const;
  DType dtype() const;
  Device device() const;
  bool is_contiguous() const;
  // A Python number wrapped for an op (engine/core/promotion.h): it ranks below every tensor in promotion.
  bool is_wrapped_number() const;
  // Allocated under inference mode, or a view of such a tensor (engine/core/inference_mode.h).
  bool is_inference() const;
  const std::shared_ptr<Storage>& storage() const;
  uint64_t version() const;          // bumped by each in-place op on this tensor or any view of it
  void bump_version() const;

  // ---- data ----
  template <typename T> T* data_ptr() const;   // element [0, ..., 0] on the tensor's device; checks the dtype
  void* raw_data() const;
  template <typename T> T item() const;        // the single element of a one-element tensor (copied to the host)
  double item() const { return item<double>(); }
  template <typename T> std::vector<T> to_vector() const;   // row-major copy of the elements

  // ---- autograd ----
  bool requires_grad() const;
  Tensor& requires_grad_(bool requires_grad = true);
  bool is_leaf() const;
  // The output of a view op (PyTorch's _is_view()), and the tensor it views (._base): the root of a chain of views,
  // never itself a view. detach() and tinyddp's internal aliases are not views.
  bool is_view() const;
  const Tensor& view_base() const;
  const Tensor& grad() const;
  void set_grad(const Tensor& grad) const;
  // For a view whose base was modified in place since its grad_fn was set, rebuilt here as AsStridedBackward0.
  const std::shared_ptr<autograd::Node>& grad_fn() const;
  uint32_t output_nr() const;
  Tensor detach() const;                       // same storage and version counter, no history
  // PyTorch's `.data`: same storage, no history, and a version counter of its own, so that its in-place changes
  // go unnoticed by autograd (the reason `.data` is discouraged, and what an old script relies on).
  Tensor variable_data() const;
  // PyTorch's detach_(): this tensor becomes a leaf that does not require grad (its grad_fn is dropped). Views
  // are refused with PyTorch's text (a view's history is its base's).
  Tensor& detach_();
  // PyTorch's `t.data = new_data`: this handle now sees new_data's storage, layout, dtype and device,
  // keeping its autograd identity (requires_grad, .grad, hooks). How Module::to moves parameters, so that
  // optimizers and DDP built on the handles keep working. Only for leaves.
  void set_data(const Tensor& new_data) const;
  void backward(const Tensor& gradient = {}, const BackwardOptions& options = {}) const;
  void register_hook(GradHook hook) const;
  void register_post_accumulate_grad_hook(PostAccumulateGradHook hook) const;
  void retain_grad() const;                    // keep .grad on a non-leaf
  bool retains_grad() const;                   // whether retain_grad() was called (always false on a leaf)

  // ---- sugar over engine/ops/ops.h ----
  Tensor operator-() const;
  Tensor exp() const;
  Tensor log() const;
  Tensor sqrt() const;
  Tensor abs() const;
  Tensor relu() const;
  Tensor tanh() const;
  Tensor sigmoid() const;
  Tensor pow(double exponent) const;
  Tensor sum() const;
  Tensor sum(const std::vector<int64_t>& dims, bool keepdim = false) const;
  Tensor mean() const;
  Tensor mean(const std::vector<int64_t>& dims, bool keepdim = false) const;
  Tensor matmul(const Tensor& other) const;
  Tensor reshape(const Shape& shape) const;
  Tensor view(const Shape& shape) const;
  Tensor transpose(int64_t dim0, int64_t dim1) const;
  Tensor t() const;
  Tensor narrow(int64_t dim, int64_t start, int64_t length) const;
  Tensor expand(const Shape& shape) const;
  Tensor contiguous() const;
  Tensor clone() const;
  Tensor to(DType dtype) const;
  Tensor to(Device device) const;

  // ---- in-place (bump the version counter; allowed on leaves that require grad only under NoGradGuard) ----
  Tensor& add_(const Tensor& other, double alpha = 1.0);
  Tensor& mul_(double factor);
  Tensor& mul_(const Tensor& other);
  Tensor& zero_();
  Tensor& fill_(double value);
  Tensor& copy_(const Tensor& src);

 private:
  std::shared_ptr<TensorImpl> impl_;
};

// How a view was made, for the in-place ops that 1.13 refuses on it (autograd/inplace.h's check_inplace).
enum class ViewCreation : uint8_t {
  normal,
  no_grad_mode,   // under no_grad: an in-place op on it, or on its base, with grad mode on is refused
  multi_output,   // one of several views one op returned (split, unbind): never modified in place under autograd
  inference_mode,       // under inference mode: like no_grad_mode, and kept by the views made from it
  in_custom_function,   // an autograd.Function's output that is (a view of) an input: its node is the user's
};

struct TensorImpl {
  ~TensorImpl();   // releases grad_fn without recursing through the graph (autograd::release_node)
  std::shared_ptr<Storage> storage;
  Shape shape;
  Shape strides;
  int64_t offset = 0;
  DType dtype = DType::f32;
  bool is_wrapped_number = false;   // set only by wrapped_number(); views and results are plain tensors
  bool is_inference = false;        // allocated under inference mode, or a view of such a tensor
  // Shared by a tensor and all its views: empty() makes one, make_view shares its base's (never null after).
  std::shared_ptr<std::atomic<uint64_t>> version;

  // Autograd. A tensor requires grad iff it is a leaf with requires_grad set, or has a grad_fn.
  bool requires_grad = false;
  bool retains_grad = false;
  // Views (set by autograd::mark_view on a view op's output). view_base: the root of its chain of views; undefined
  // for a tensor that is not a view. view_version: the version counter's value when grad_fn was last set; when
  // they differ, the base changed in place and grad_fn() rebuilds the history.
  Tensor view_base;
  uint64_t view_version = 0;
  ViewCreation view_creation = ViewCreation::normal;
  std::mutex view_mutex;   // guards rebuilding a view's grad_fn
  Tensor grad;
  std::shared_ptr<autograd::Node> grad_fn;   // the node that produced this tensor (null for leaves)
  uint32_t output_nr = 0;                    // which output of grad_fn this tensor is
  std::weak_ptr<autograd::Node> grad_accumulator;   // leaves: lazily created AccumulateGrad
  std::vector<GradHook> leaf_grad_hooks;            // leaves: run by AccumulateGrad before accumulating
  // Non-leaves: the node (and its input) that took the first hook register_hook gave; later hooks go there too, even
  // after an in-place op gave the tensor a new grad_fn (1.13's Python keeps one hooks dict per tensor, attached to
  // the grad_fn of its first hook). Expired: that graph is gone, and so are hooks registered later, as in 1.13.
  std::weak_ptr<autograd::Node> hooks_node;
  uint32_t hooks_input_nr = 0;
  bool has_hooks_node = false;
  std::vector<PostAccumulateGradHook> post_accumulate_grad_hooks;
  std::mutex autograd_mutex;   // guards grad_accumulator creation and .grad accumulation
};

// ---- construction (on the CPU unless a device is given) ----
Tensor empty(const Shape& shape, DType dtype = DType::f32, Device device = Device::cpu());
// A contiguous tensor over `data`, memory its caller allocated (torch.from_blob with a deleter): `release(data)`
// runs once the last tensor or view of it is gone. A process group's shared-memory buckets are made so.
Tensor from_external(void* data, const Shape& shape, DType dtype, Device device, std::function<void(void*)> release);
Tensor zeros(const Shape& shape, DType dtype = DType::f32, Device device = Device::cpu());
Tensor ones(const Shape& shape, DType dtype = DType::f32, Device device = Device::cpu());
Tensor full(const Shape& shape, double value, DType dtype = DType::f32, Device device = Device::cpu());
Tensor scalar_tensor(double value, DType dtype = DType::f32, Device device = Device::cpu());
Tensor zeros_like(const Tensor& t);
Tensor ones_like(const Tensor& t);
Tensor arange(int64_t n, DType dtype = DType::f32);
// start + i * step for i in [0, n), floating, with PyTorch 1.13's CPU rounding (Note [arange's rounding]);
// `threads` is the thread count 1.13 would split a range of more than 32768 elements over.
Tensor arange(double start, double step, int64_t n, DType dtype, int64_t threads = 1);
template <typename T>
Tensor from_vector(const std::vector<T>& values, const Shape& shape, DType dtype = dtype_of<T>());
Tensor tensor(std::initializer_list<double> values, DType dtype = DType::f32);   // 1-D
// A view onto `base`'s storage; the caller guarantees it stays in bounds.
Tensor make_view(const Tensor& base, Shape shape, Shape strides, int64_t offset);

std::ostream& operator<<(std::ostream& os, const Tensor& t);

// ---- devices ----
// Usable CUDA devices: 0 in a build without CUDA, without a driver or without a GPU (never throws).
int cuda_device_count();
// Blocks until the device finished its queued work (a no-op on the CPU).
void synchronize(Device device);

}  // namespace tinyddp
