// optim::Optimizer: the base of parameter-update rules (SGD in optim/sgd.h, Adam and AdamW in optim/adam.h).
//
//   optim::SGD opt(model.parameters(), {.lr = 0.1, .momentum = 0.9});
//   opt.zero_grad();          // PyTorch 1.13's default: zero existing .grad in place
//   loss.backward();
//   opt.step();               // p -= lr * update(p.grad), in place, for every p with a defined .grad
//
// An optimizer holds parameter handles, so it sees exactly the tensors the module owns; they must be leaves
// that require grad. Per-parameter state (e.g. momentum buffers) is indexed like params().
//
// Parameter groups, state_dict and learning-rate schedules are Python's (tinyddp.optim, as in PyTorch): it keeps
// the state and calls each rule's per-parameter update (sgd_update, adam_update) with a group's current values.
#pragma once

#include <vector>

#include "engine/tinyddp.h"

namespace tinyddp::optim {

class Optimizer {
 public:
  explicit Optimizer(std::vector<Tensor> params);
  virtual ~Optimizer() = default;

  // Applies one update to every parameter whose .grad is defined (parameters without one are skipped).
  virtual void step() = 0;
  // As nn::Module::zero_grad: false zeroes existing .grad in place, true sets them undefined.
  void zero_grad(bool set_to_none = false);

  const std::vector<Tensor>& params() const { return params_; }

 protected:
  std::vector<Tensor> params_;
};

}  // namespace tinyddp::optim
