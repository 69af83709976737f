// "uncertainty": Kendall, Gal and Cipolla (CVPR 2018), "Multi-task learning using uncertainty to weigh
// losses", with learned log-variances s_i = log sigma_i^2, trained by the network's optimizer.
//
//   total = sum_i 0.5 exp(-s_i) L_i + 0.5 s_i          (s_i: parameters(), (T), init 0)
//
// This is the paper's regression form 1/(2 sigma^2) L + log sigma, used for every task (also for
// classification; the paper's 1/sigma^2 L + log sigma differs by a factor 2 on the loss term, and most
// implementations use one form for all tasks). For a fixed L_i its minimum is at s_i = log L_i, i.e.
// w_i ~ 1/L_i, which is why the weights of fast-falling losses grow large quickly (GradNorm paper, §5.2).
//
// weights() reports exp(-s_i) = 1/sigma_i^2 (so 1 at init, like "fixed"); the multiplier of L_i in total is
// 0.5 * weights()_i. initial_weights, if given, set s_i(0) = -log w_i. observe() only records (and applies the
// nonfinite policy); the s_i move when the optimizer steps with total_loss()'s gradient.
#pragma once

#include "models/weighting/loss_weighting.h"

namespace tinyddp::models {

class UncertaintyWeighting : public LossWeighting {
 public:
  UncertaintyWeighting(int num_tasks, WeightingOptions options);
  std::string name() const override { return "uncertainty"; }
  WeightingStep observe(const std::vector<Tensor>& losses, const Tensor& shared_weight, int64_t step) override;
  Tensor total_loss(const std::vector<Tensor>& losses) override;
  std::vector<double> weights() const override;
  std::vector<Tensor> parameters() override { return {log_vars_}; }
  const Tensor& log_variances() const { return log_vars_; }   // s, (T), a leaf that requires grad

 private:
  WeightingOptions options_;
  int num_tasks_;
  Tensor log_vars_;   // s = log sigma^2, (T), dtype options.dtype
};

}  // namespace tinyddp::models
