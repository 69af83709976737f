// nn::Linear: y = x W^T + b, PyTorch 1.13's nn.Linear.
//
//   auto fc = std::make_shared<nn::Linear>(4, 8);            // W (8, 4), b (8), float32
//   nn::Linear head(8, 3, /*bias=*/true, DType::f64);
//   Tensor y = (*fc)(randn({5, 4}));                          // (5, 8) via addmm(b, x, W^T)
//   Tensor w = fc->weight();                                  // the registered handle: change it in place only
//
// Legend: N = batch (any number of leading dims), I = in_features, O = out_features.
// Init: PyTorch's reset_parameters, W then b, each uniform in [-1/sqrt(I), 1/sqrt(I)) (kaiming_uniform_(a=sqrt(5))
// and its bias rule), drawn from the calling thread's default generator: after manual_seed(s) the values are
// torch.manual_seed(s); nn.Linear(I, O)'s, bitwise.
#pragma once

#include "models/nn/module.h"

namespace tinyddp::nn {

class Linear : public Module {
 public:
  Linear(int64_t in_features, int64_t out_features, bool bias = true, DType dtype = DType::f32);
  // Adopts `weight` (O, I) and `bias` (O, or undefined) as its parameters, the same handles: no init, no draw from
  // the generator. How a copy of a layer is rebuilt (Python's copy.deepcopy and unpickling of nn.Linear).
  Linear(Tensor weight, Tensor bias);

  // x (N..., I) -> (N..., O). A 2-D x takes addmm(b, x, W^T), exactly PyTorch 1.13's linear, so that the graph
  // (AddmmBackward0 with a TBackward0 edge to W) and with it the order in which gradients become ready is
  // PyTorch's; other ranks take matmul(x, W^T) + b.
  Tensor forward(const Tensor& x) override;

  std::string type_name() const override { return "Linear"; }
  std::string extra_repr() const override;

  int64_t in_features() const { return in_features_; }
  int64_t out_features() const { return out_features_; }
  const Tensor& weight() const { return weight_; }   // (O, I)
  const Tensor& bias() const { return bias_; }       // (O); undefined when built with bias = false

 private:
  int64_t in_features_;
  int64_t out_features_;
  Tensor weight_;
  Tensor bias_;
};

}  // namespace tinyddp::nn
