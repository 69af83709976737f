// optim::Adam and optim::AdamW: PyTorch 1.13's torch.optim.Adam and AdamW updates (their _single_tensor_adam and
// _single_tensor_adamw, capturable = False), step for step and in the same floating-point order.
//
//   optim::Adam opt(model.parameters(), {.lr = 1e-3, .betas = {0.9, 0.999}, .weight_decay = 0.0});
//   optim::AdamW opt(model.parameters(), {.lr = 1e-3, .weight_decay = 1e-2});
//
// For each parameter p with a defined grad, under NoGradGuard (t counts this parameter's steps from 1):
//   g  = maximize ? -grad : grad
//   g  = g + weight_decay * p                           (Adam, if weight_decay != 0: L2)
//   p  = p * (1 - lr * weight_decay)                    (AdamW instead: decoupled decay, Loshchilov & Hutter)
//   m  = beta1 * m + (1 - beta1) * g                    (m, v start at 0)
//   v  = beta2 * v + (1 - beta2) * g * g
//   v_max = max(v_max, v)                               (amsgrad only; denominators then use v_max)
//   denom = sqrt(v) / sqrt(1 - beta2^t) + eps
//   p  = p - (lr / (1 - beta1^t)) * m / denom           (in place: the parameter keeps its identity)
// bias_correction1/2 and the step size are computed in double, as Python does; the elementwise work is done in
// the parameter's dtype, in PyTorch's operation order (see adam.cpp), so f32 results round as PyTorch's do.
//
// adam_update is that body for one parameter given its state: Adam::step calls it per parameter, tinyddp.optim's
// Adam and AdamW per parameter group with the group's current hyperparameters (1.13 reads them at each step).
#pragma once

#include <limits>
#include <utility>

#include "models/optim/optimizer.h"

namespace tinyddp::optim {

struct AdamOptions {
  double lr = 1e-3;                                 // PyTorch's default
  std::pair<double, double> betas = {0.9, 0.999};   // decay rates of the first and second moment estimates
  double eps = 1e-8;                                // added to the denominator (after the bias correction)
  double weight_decay = 0.0;                        // L2 coefficient lambda of (lambda / 2) ||p||^2
  bool amsgrad = false;
  bool maximize = false;
};

// AdamW's options: Adam's, with 1.13's default weight_decay of 1e-2 (decoupled: p *= 1 - lr * weight_decay).
struct AdamWOptions {
  double lr = 1e-3;
  std::pair<double, double> betas = {0.9, 0.999};
  double eps = 1e-8;
  double weight_decay = 1e-2;
  bool amsgrad = false;
  bool maximize = false;
};

// One Adam update (AdamW's with decoupled_weight_decay) of p in place at step `step` (this parameter's steps,
// counting from 1; a double as 1.13's step_t.item()). exp_avg, exp_avg_sq and, with amsgrad, max_exp_avg_sq are
// p's state, updated in place: they must have p's dtype and shape and be contiguous (zeros before the first step).
// The CPU only. The options are not checked (a parameter group's values are used as they are, as in 1.13).
void adam_update(const Tensor& p, const Tensor& grad, const Tensor& exp_avg, const Tensor& exp_avg_sq,
                 const Tensor& max_exp_avg_sq, double step, const AdamOptions& options, bool decoupled_weight_decay);

class Adam : public Optimizer {
 public:
  Adam(std::vector<Tensor> params, AdamOptions options = {}) : Adam(std::move(params), options, false) {}

  void step() override;

  const AdamOptions& options() const { return options_; }
  // Per-parameter state, indexed like params(); the tensors are undefined and the step 0 before the
  // parameter's first update (PyTorch creates its state lazily, too).
  int64_t step_count(size_t i) const { return steps_.at(i); }
  const Tensor& exp_avg(size_t i) const { return exp_avg_.at(i); }
  const Tensor& exp_avg_sq(size_t i) const { return exp_avg_sq_.at(i); }
  const Tensor& max_exp_avg_sq(size_t i) const { return max_exp_avg_sq_.at(i); }

 protected:
  Adam(std::vector<Tensor> params, AdamOptions options, bool decoupled_weight_decay);

 private:
  AdamOptions options_;
  bool decoupled_weight_decay_;         // AdamW
  std::vector<int64_t> steps_;          // t of each parameter
  std::vector<Tensor> exp_avg_;         // m, the parameter's shape and dtype
  std::vector<Tensor> exp_avg_sq_;      // v
  std::vector<Tensor> max_exp_avg_sq_;  // v_max (amsgrad only)
};

// AdamW: Adam with the weight decay decoupled from the gradient's moments (1.13's torch.optim.AdamW).
class AdamW : public Adam {
 public:
  AdamW(std::vector<Tensor> params, AdamWOptions options = {});
};

}  // namespace tinyddp::optim
