// The backward engine: runs a graph task on the calling thread.
//
//  1. A GraphRoot node hands the root gradients to the roots' edges.
//  2. Dependencies are counted by walking the graph from the root: a node is ready once every edge that
//     points at it has delivered its gradient (gradients arriving at the same input are summed).
//  3. Ready nodes run highest sequence number first, i.e. in reverse order of creation; AccumulateGrad
//     nodes carry the largest number and so run as soon as they are ready. This is PyTorch's order, and
//     it is what decides the order of DDP's reducer hooks (and so which parameter its errors name).
//  4. Without retain_graph each node frees its saved tensors after running.
//  5. When the graph is done, callbacks queued with queue_callback run, in order, on this thread; a
//     callback may queue more. The DDP reducer finalizes its buckets this way.
//
// For autograd::grad, and backward(inputs=...), only nodes on a path to the requested inputs run, and the
// gradients arriving at the inputs are captured (grad) or accumulated (backward).
#pragma once

#include <functional>
#include <vector>

#include "engine/autograd/node.h"

namespace tinyddp::autograd {

struct ExecuteOptions {
  bool keep_graph = false;
  bool create_graph = false;
  bool accumulate_grad = true;       // false: capture the gradients at `inputs` (autograd::grad)
  std::vector<Edge> inputs;          // restrict execution to paths reaching these edges (may be empty)
};

class Engine {
 public:
  // Runs backward from `roots` seeded with `root_grads`. Returns, when !accumulate_grad, the gradient
  // captured at each of options.inputs (undefined where none arrived).
  static TensorList execute(const std::vector<Edge>& roots, const TensorList& root_grads,
                            const ExecuteOptions& options);
  // Runs `callback` once when the current backward (on this thread) finishes. Throws when called outside
  // a backward, with PyTorch's text.
  static void queue_callback(std::function<void()> callback);
  // Whether this thread is inside a backward right now.
  static bool in_backward();
  // False inside a restricted backward (autograd::grad, backward(inputs=...)), which reentrant
  // checkpointing cannot serve: its nested backward would accumulate into every leaf (PyTorch's
  // _is_checkpoint_valid). Asks the innermost backward on this thread; true outside any backward.
  static bool is_checkpoint_valid();
};

}  // namespace tinyddp::autograd
