// Capturing the input h and the output z = h W^T + b of one nn::Linear in each forward, which GradNorm's
// Gram-matrix norm differentiates instead of W (WeightingOptions::grad_norm = GradNormMethod::gram,
// Note [GradNorm's Gram-matrix norm] in gradnorm.h):
//
//   models::LinearTap tap(net->last_shared_layer());    // a forward hook on the layer, removed with the tap
//   auto L = net->task_losses(batch);                    // the layer runs once: the tap holds its h and z
//   weighting->observe_shared(L, {.weight = W, .layer_input = tap.input(), .layer_output = tap.output()}, step);
//
// The tap is a forward hook, not a module: parameter names, DDP's buckets and every result stay as they
// were. It holds the latest call's tensors (z with its graph) until the next call replaces them, so a layer
// called twice in one forward leaves only the second call in view.
#pragma once

#include <memory>

#include "models/nn/linear.h"

namespace tinyddp::models {

class LinearTap {
 public:
  explicit LinearTap(std::shared_ptr<nn::Linear> layer) : layer_(std::move(layer)), seen_(std::make_shared<Seen>()) {
    TINYDDP_CHECK(layer_ != nullptr, "LinearTap: the layer is null; pass the Linear whose weight GradNorm "
                  "measures (e.g. MultiTaskModel::last_shared_layer()).");
    hook_id_ = layer_->register_forward_hook([seen = seen_](nn::Module&, const Tensor& input, const Tensor& output) {
      seen->input = input;
      seen->output = output;
    });
  }
  ~LinearTap() { layer_->remove_forward_hook(hook_id_); }
  LinearTap(const LinearTap&) = delete;
  LinearTap& operator=(const LinearTap&) = delete;

  // h (N..., I) and z (N..., O) of the latest call; undefined before the first.
  const Tensor& input() const { return seen_->input; }
  const Tensor& output() const { return seen_->output; }

 private:
  struct Seen {
    Tensor input, output;
  };
  std::shared_ptr<nn::Linear> layer_;
  std::shared_ptr<Seen> seen_;   // shared with the hook, so a hook outliving the tap writes nowhere harmful
  int64_t hook_id_ = -1;
};

}  // namespace tinyddp::models
