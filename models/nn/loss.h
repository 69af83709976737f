// Loss modules: thin wrappers over the engine's losses, with PyTorch's default reduction (mean).
//
//   nn::MSELoss mse;            Tensor l1 = mse(pred, target);        // pred, target: same shape, floating
//   nn::CrossEntropyLoss ce;    Tensor l2 = ce(logits, classes);      // logits (N, C), classes (N,) int64
//
// They take two inputs, so forward(x) is not theirs to call; operator()(input, target) is.
#pragma once

#include "models/nn/module.h"

namespace tinyddp::nn {

// mean((input - target)^2).
class MSELoss : public Module {
 public:
  Tensor operator()(const Tensor& input, const Tensor& target) const { return mse_loss(input, target); }
  std::string type_name() const override { return "MSELoss"; }
};

// -mean_n log_softmax(input)[n, target[n]].
class CrossEntropyLoss : public Module {
 public:
  Tensor operator()(const Tensor& input, const Tensor& target) const { return cross_entropy(input, target); }
  std::string type_name() const override { return "CrossEntropyLoss"; }
};

}  // namespace tinyddp::nn
