// Capturing the shared representation Z (the trunk's output) of a MultiTaskModel's forward, which MGDA-UB
// differentiates: an identity module appended to the trunk that keeps the tensor it passed on.
//
//   auto tap = tap_representation(*net);           // once, before DDP or any forward
//   auto L = net->task_losses(batch);               // the heads read exactly tap->last()
//   weighting->observe_shared(L, {.weight = W, .representation = tap->last()}, step);
//
// The tap has no parameters and returns its input itself, so parameter names, DDP's buckets and every
// result stay as they were; only the model's printout gains a "RepresentationTap" child.
#pragma once

#include <memory>

#include "models/multitask/multitask.h"

namespace tinyddp::models {

class RepresentationTap : public nn::Module {
 public:
  Tensor forward(const Tensor& x) override {
    last_ = x;
    return x;
  }
  // Z of the latest forward (undefined before the first), with its graph.
  const Tensor& last() const { return last_; }
  std::string type_name() const override { return "RepresentationTap"; }

 private:
  Tensor last_;
};

// Appends a RepresentationTap to model.trunk() and returns it.
inline std::shared_ptr<RepresentationTap> tap_representation(MultiTaskModel& model) {
  auto tap = std::make_shared<RepresentationTap>();
  model.trunk()->push_back(tap);
  return tap;
}

}  // namespace tinyddp::models
