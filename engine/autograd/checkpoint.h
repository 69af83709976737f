// Activation checkpointing (PyTorch 1.13's torch.utils.checkpoint.checkpoint): run part of a model without
// keeping its intermediate activations, and recompute them when the backward needs them. Memory for
// the checkpointed segment drops from every activation it saves to its inputs; the price is one more
// forward of the segment during the backward (docs/autograd.md, "Activation checkpointing").
//
//   Tensor h = relu(addmm(b1, x, t(w1)));
//   Tensor y = checkpoint([&](const Tensor& in) { return addmm(b2, in, t(w2)); }, h);   // CheckpointFunctionBackward
//   y.sum().backward();                  // re-runs the lambda, then a nested backward fills w2.grad, b2.grad
//
// Two forms, as in 1.13:
//  - use_reentrant = true (the default): the function runs under no-grad; its outputs get one node,
//    CheckpointFunctionBackward, whose edges lead to the inputs only. Its backward re-runs the function
//    with grad on and calls the engine again from inside the backward (a nested graph task on the same
//    thread): the parameters' AccumulateGrad nodes, and so DDP's reducer hooks, run inside that nested
//    backward, and Engine::queue_callback there attaches to it. Warns "None of the inputs have
//    requires_grad=True. Gradients will be None" when no input requires grad (its outputs then carry no
//    graph at all), and refuses autograd::grad and backward(inputs=...).
//  - use_reentrant = false: the function runs with grad as usual, under saved-tensor hooks whose pack keeps
//    a placeholder instead of each saved tensor; the first unpack re-runs the function and hands out the
//    recomputed tensors. The graph is the ordinary one, so autograd::grad works and hooks fire in the one
//    backward. No warning.
// preserve_rng_state replays this thread's random stream (ops.h, get_rng_state) for the recomputation.
#pragma once

#include <functional>

#include "engine/autograd/node.h"

namespace tinyddp::autograd {

struct CheckpointOptions {
  bool use_reentrant = true;
  bool preserve_rng_state = true;
};

using CheckpointFunction = std::function<TensorList(const TensorList&)>;

TensorList checkpoint(const CheckpointFunction& function, const TensorList& inputs,
                      const CheckpointOptions& options = {});
Tensor checkpoint(const std::function<Tensor(const Tensor&)>& function, const Tensor& input,
                  const CheckpointOptions& options = {});

}  // namespace tinyddp::autograd
