// "fixed": constant task weights. total = sum_i w_i L_i with w = initial_weights (default all 1).
// observe() only records; it never changes the weights and needs no shared layer.
#pragma once

#include "models/weighting/loss_weighting.h"

namespace tinyddp::models {

class FixedWeighting : public LossWeighting {
 public:
  FixedWeighting(int num_tasks, WeightingOptions options);
  std::string name() const override { return "fixed"; }
  WeightingStep observe(const std::vector<Tensor>& losses, const Tensor& shared_weight, int64_t step) override;
  Tensor total_loss(const std::vector<Tensor>& losses) override;
  std::vector<double> weights() const override { return weights_; }

 private:
  WeightingOptions options_;
  std::vector<double> weights_;   // (T), constant
};

}  // namespace tinyddp::models
