// Elementwise activations as modules, for use in Sequential. No parameters; shape in = shape out.
//
//   auto mlp = std::make_shared<nn::Sequential>(nn::Linear(4, 8), nn::Tanh(), nn::Linear(8, 1), nn::ReLU());
#pragma once

#include "models/nn/module.h"

namespace tinyddp::nn {

// max(x, 0). Its gradient at 0 is 0, as PyTorch's.
class ReLU : public Module {
 public:
  Tensor forward(const Tensor& x) override { return relu(x); }
  std::string type_name() const override { return "ReLU"; }
};

class Tanh : public Module {
 public:
  Tensor forward(const Tensor& x) override { return tanh(x); }
  std::string type_name() const override { return "Tanh"; }
};

}  // namespace tinyddp::nn
