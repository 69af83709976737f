#include "engine/autograd/accumulate_grad.h"

#include "engine/autograd/grad_mode.h"
#include "engine/ops/ops.h"

namespace tinyddp::autograd {

AccumulateGrad::AccumulateGrad(const Tensor& leaf)
    : Node(kAccumulateGradSequenceNr), leaf_(leaf.impl_ptr()) {
  set_num_inputs(1);
}

Tensor AccumulateGrad::leaf() const { return Tensor(leaf_.lock()); }

namespace {

// Note [Stealing the incoming gradient] (PyTorch's accumulateGrad in torch/csrc/autograd/functions/
// accumulate_grad.h): a .grad that does not exist yet can simply be the incoming gradient, saving a copy and a
// buffer, when no one else can see that buffer and it has the layout a .grad must have. "No one else": the
// tensor's handle is held only by `expected_refs` (this node, plus the engine's copy of the inputs when the
// node has post hooks, as the engine keeps one then), and its storage only by this handle; a user's hook that
// kept the gradient, a gradient handed to two leaves (AddBackward0) or a view of a shared buffer all fail it. A view
// made by a backward rule (TBackward0's transpose) also holds its base, which shares its storage: the storage is
// still private when only the view holds that base, and the view is stolen as a plain tensor (.grad is no view).
// The layout: contiguous, the whole buffer, so that optimizers and DDP's bucket copies see a plain
// tensor of its own (the reducer's Note [The reducer's hook]). Under grad mode (create_graph) never: the
// .grad must be a differentiable copy.
bool private_storage(const Tensor& g) {
  const long holders = g.storage().use_count();
  if (holders == 1) return true;
  const Tensor& base = g.view_base();
  return holders == 2 && base.defined() && base.impl_ptr().use_count() == 1 && base.storage() == g.storage();
}

bool stealable(const Tensor& g, long expected_refs) {
  return !GradMode::is_enabled() && g.impl_ptr().use_count() <= expected_refs && private_storage(g) &&
         g.offset() == 0 && g.strides() == contiguous_strides(g.shape()) &&
         g.storage()->nbytes == static_cast<size_t>(g.numel()) * element_size(g.dtype());
}

}  // namespace

TensorList AccumulateGrad::apply(TensorList&& grads) {
  Tensor leaf_tensor = leaf();
  if (!leaf_tensor.defined() || !grads[0].defined()) return {};
  TensorImpl& impl = *leaf_tensor.impl();
  TINYDDP_INTERNAL_ASSERT(impl.grad_fn == nullptr, "leaf variable has been moved into the graph interior");
  Tensor new_grad = std::move(grads[0]);
  std::vector<GradHook> hooks;
  std::vector<PostAccumulateGradHook> post_hooks;
  {
    std::lock_guard<std::mutex> lock(impl.autograd_mutex);
    hooks = impl.leaf_grad_hooks;
    post_hooks = impl.post_accumulate_grad_hooks;
  }
  for (const auto& hook : hooks) {
    Tensor replaced = hook(new_grad);
    if (replaced.defined()) new_grad = std::move(replaced);
  }
  TINYDDP_INTERNAL_ASSERT(new_grad.shape() == impl.shape, "AccumulateGrad: gradient of shape ",
                          shape_str(new_grad.shape()), " for a leaf of shape ", shape_str(impl.shape));
  {
    std::lock_guard<std::mutex> lock(impl.autograd_mutex);
    if (!impl.grad.defined()) {
      if (stealable(new_grad, 1 + (has_post_hooks() ? 1 : 0))) {
        // Note [Stealing the incoming gradient]. A replacement from a hook may carry history: drop it.
        impl.grad = new_grad.requires_grad() || new_grad.is_view() ? new_grad.detach() : std::move(new_grad);
      } else {
        // Either way own a fresh copy. Under create_graph it keeps the gradient's history (it is differentiable)
        // the way 1.13 records it: a copy_ into a new tensor (CopyBackwards, where a clone would say CloneBackward0).
        if (GradMode::is_enabled()) {
          Tensor fresh = empty(impl.shape, new_grad.dtype(), new_grad.device());
          fresh.copy_(new_grad);
          impl.grad = std::move(fresh);
        } else {
          impl.grad = new_grad.detach().clone();
        }
      }
    } else if (!GradMode::is_enabled()) {
      NoGradGuard no_grad;
      impl.grad.add_(new_grad);   // in place: DDP's gradient_as_bucket_view relies on .grad keeping its storage
    } else {
      impl.grad = impl.grad + new_grad;
    }
  }
  for (const auto& hook : post_hooks) hook(leaf_tensor);
  return {};
}

std::shared_ptr<Node> grad_accumulator(const Tensor& leaf) {
  TINYDDP_INTERNAL_ASSERT(leaf.is_leaf() && leaf.requires_grad(), "grad_accumulator of a non-leaf");
  TensorImpl& impl = *leaf.impl();
  std::lock_guard<std::mutex> lock(impl.autograd_mutex);
  if (auto existing = impl.grad_accumulator.lock()) return existing;
  auto node = std::make_shared<AccumulateGrad>(leaf);
  impl.grad_accumulator = node;
  return node;
}

}  // namespace tinyddp::autograd
