// optim::SGD: stochastic gradient descent with momentum, dampening, weight decay and Nesterov momentum,
// PyTorch 1.13's torch.optim.SGD update (its _single_tensor_sgd), step for step.
//
//   optim::SGD opt(model.parameters(), {.lr = 0.01, .momentum = 0.9, .weight_decay = 1e-4});
//
// For each parameter p with a defined grad, under NoGradGuard:
//   d_p = grad + weight_decay * p                      (if weight_decay != 0)
//   buf = clone(d_p)                                   (first step with momentum != 0)
//   buf = momentum * buf + (1 - dampening) * d_p       (later steps, in place)
//   d_p = nesterov ? d_p + momentum * buf : buf        (if momentum != 0)
//   p  -= lr * d_p                                     (in place: the parameter keeps its identity)
// Units: lr is per step; weight_decay is the L2 coefficient lambda of (lambda / 2) ||p||^2.
//
// sgd_update is that body for one parameter, given its state: SGD::step calls it per parameter with its options,
// tinyddp.optim.SGD per parameter group with the group's current hyperparameters (1.13 reads them at each step).
#pragma once

#include <limits>

#include "models/optim/optimizer.h"

namespace tinyddp::optim {

struct SGDOptions {
  // Required, as in PyTorch (NaN marks "not given"; SGD's constructor rejects it).
  double lr = std::numeric_limits<double>::quiet_NaN();
  double momentum = 0.0;
  double dampening = 0.0;
  double weight_decay = 0.0;
  bool nesterov = false;
  bool maximize = false;   // PyTorch 1.13: step along +grad instead of -grad
};

// One SGD update of p in place with gradient grad, under NoGradGuard. momentum_buffer is p's buffer: undefined
// before its first step with momentum != 0, which sets it to a clone of the step's direction; later steps update
// it in place. The options are not checked (a parameter group's values are used as they are, as in 1.13).
void sgd_update(const Tensor& p, const Tensor& grad, Tensor& momentum_buffer, const SGDOptions& options);

class SGD : public Optimizer {
 public:
  SGD(std::vector<Tensor> params, SGDOptions options);

  void step() override;

  const SGDOptions& options() const { return options_; }
  // Momentum buffer of params()[i]; undefined before its first step with momentum != 0.
  const Tensor& momentum_buffer(size_t i) const { return momentum_buffers_.at(i); }

 private:
  SGDOptions options_;
  std::vector<Tensor> momentum_buffers_;   // one per parameter, indexed like params_
};

}  // namespace tinyddp::optim
