// MGDA-UB (Sener & Koltun, "Multi-Task Learning as Multi-Objective Optimization", NeurIPS 2018), "mgda" in
// make_weighting, under DDP. Math and the DDP recipe: docs/multitask.md. Legend: T = tasks, N = batch rows
// (this rank's), H = the representation's width, Z = the trunk's output (N, H), v_i = grad_Z L_i (N, H).
//
// One step (observe_shared, then total_loss().backward(), then the optimizer):
//   1. v_i = autograd::grad(L_i, Z, retain_graph): through the heads only, no DDP hook fires;
//   2. the local Gram matrix M^r_ij = <v_i, v_j> (f64), averaged over ranks with one allreduce of its T^2
//      values. With equal shards and mean losses, the global loss is the mean of the shard losses, so the
//      global grad_Z L_i restricted to rank r's rows is v_i^r / R, and the global Gram matrix is
//      sum_r M^r / R^2 = mean_r M^r / R: the mean up to the positive factor 1/R, which the min-norm weights
//      do not depend on (surgery::min_norm_frank_wolfe);
//   3. alpha = the Frank-Wolfe min-norm point (Algorithm 2), identical on every rank;
//   4. total_loss(L) = sum_i alpha_i L_i, the step's one backward.
// Heads therefore receive alpha_i grad L_i, as in the authors' training loop (their "scaled back-propagation"
// of sum_t scale[t] * loss_t), not the unscaled head updates of the paper's Algorithm 2.
#pragma once

#include "models/weighting/loss_weighting.h"

namespace tinyddp::models {

class MGDAWeighting : public LossWeighting {
 public:
  MGDAWeighting(int num_tasks, WeightingOptions options);
  std::string name() const override { return "mgda"; }
  // Throws: MGDA-UB needs the shared representation Z (observe_shared).
  WeightingStep observe(const std::vector<Tensor>& losses, const Tensor& shared_weight, int64_t step) override;
  WeightingStep observe_shared(const std::vector<Tensor>& losses, const SharedTensors& shared, int64_t step) override;
  bool needs_representation() const override { return true; }
  Tensor total_loss(const std::vector<Tensor>& losses) override;
  // alpha of the latest observe_shared() (1/T before the first): >= 0, sum 1.
  std::vector<double> weights() const override { return alpha_; }

 private:
  WeightingOptions options_;
  int num_tasks_;
  std::vector<double> alpha_;
};

}  // namespace tinyddp::models
