// Saved-tensor hooks (PyTorch 1.13's torch.autograd.graph.saved_tensors_hooks): while a guard is alive on
// this thread, every tensor an op saves for backward goes through `pack`, and what pack returns is kept
// instead of the tensor; when the backward needs it, `unpack` turns it back into a tensor. Activation
// checkpointing (checkpoint.h, use_reentrant=false), offloading to the host and compression are built on it.
//
//   SavedTensorHooksGuard hooks([](const Tensor& t) -> std::any { return t.to(Device::cpu()); },
//                               [](const std::any& p) { return std::any_cast<Tensor>(p).to(Device::cuda(0)); });
//   Tensor y = (x * w).exp();          // x, w and exp's output are packed (3 calls)
//   y.sum().backward();                // ... and unpacked, once each, as their nodes run
//
// Semantics (PyTorch 1.13's SavedVariable, checked in tests/engine/saved_tensor_hooks_test.cpp):
//  - Only the innermost guard's hooks apply; a guard's hooks stay with the tensors saved under it after the
//    guard is gone. Nothing is packed where no graph is recorded (no-grad, no input requiring grad).
//  - pack runs under no-grad when the op saves, and sees the tensor itself (an op's own output with its
//    grad_fn). It must not modify it in place (an error). A pack that keeps an op's output itself, not a
//    detached copy, makes the node own itself until the backward releases it.
//  - unpack runs when the node runs, once per saved tensor per backward. Its result gets the saved
//    tensor's history back (its grad_fn, the saving node for an output, or a leaf's gradient accumulator),
//    so gradients of gradients still reach the leaves.
//  - With hooks there is no version check: an in-place change after saving is not detected.
//  - After a backward without retain_graph the packed value is dropped; a second backward raises
//    PyTorch's "Trying to backward through the graph a second time" error.
#pragma once

#include <any>
#include <functional>
#include <memory>

#include "engine/core/tensor.h"

namespace tinyddp::autograd {

using PackHook = std::function<std::any(const Tensor& tensor)>;
using UnpackHook = std::function<Tensor(const std::any& packed)>;

struct SavedTensorHooks {
  PackHook pack;
  UnpackHook unpack;
};

// Pushes (pack, unpack) on this thread's stack in the constructor, pops it in the destructor.
class SavedTensorHooksGuard {
 public:
  SavedTensorHooksGuard(PackHook pack, UnpackHook unpack);
  ~SavedTensorHooksGuard();
  SavedTensorHooksGuard(const SavedTensorHooksGuard&) = delete;
  SavedTensorHooksGuard& operator=(const SavedTensorHooksGuard&) = delete;
};

// The hooks of this thread's innermost guard, or null when none is alive. Shared: a SavedTensor keeps the
// pair that packed it.
std::shared_ptr<const SavedTensorHooks> current_saved_tensor_hooks();

}  // namespace tinyddp::autograd
