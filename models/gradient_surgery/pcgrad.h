// PCGrad (Yu, Kumar, Gupta, Levine, Hausman, Finn; NeurIPS 2020), "pcgrad" in make_weighting, under DDP.
// Math and the DDP recipe: docs/multitask.md. Legend: T = tasks, S = the shared parameters (the trunk's),
// P = their element count, g_i = grad_S L_i flattened (P), averaged over ranks.
//
// One step (observe_shared, then total_loss().backward(), then the optimizer):
//   1. g_i^local = autograd::grad(L_i, S, retain_graph): T gradient computations that fire no DDP hook;
//   2. pack the T gradients into one flat (T P) tensor and average it over ranks with ONE allreduce
//      (WeightingOptions::allreduce_mean): the surgery needs every g_i complete before it can start, so there
//      is no backward left to overlap buckets with, and one collective costs one latency instead of T;
//   3. g^PC = sum_i g_i^PC (surgery::pcgrad) with the orders surgery::pcgrad_order(T, i, seed, step), in f64
//      on bits identical on every rank, so g^PC is bit-identical on every rank;
//   4. total_loss(L) = sum_i L_i + sum_{p in S} <p, c_p>,  c = g^PC - sum_i g_i^local (constants).
//
// Note [PCGrad's one backward]: total.backward() is the step's only backward, through DDP as usual, so every
// parameter's hook fires once and `.grad` is written once, by the reducer. A head's gradient is its ordinary
// grad sum_i L_i, averaged over ranks by DDP. A shared parameter's local gradient is
// sum_i g_i^local + c = g^PC (up to rounding: the backward sums the tasks in its own order), the same on
// every rank, so DDP's average of it is g^PC again. The price is that DDP also allreduces S, whose average
// is known already (a second P-element collective); in exchange no .grad is rewritten after the reducer's
// finalize and DDP's checks (marked once, no unsynced gradient) hold unchanged.
#pragma once

#include "models/weighting/loss_weighting.h"

namespace tinyddp::models {

class PCGradWeighting : public LossWeighting {
 public:
  PCGradWeighting(int num_tasks, WeightingOptions options);
  std::string name() const override { return "pcgrad"; }
  // Throws: PCGrad needs every shared parameter (observe_shared).
  WeightingStep observe(const std::vector<Tensor>& losses, const Tensor& shared_weight, int64_t step) override;
  WeightingStep observe_shared(const std::vector<Tensor>& losses, const SharedTensors& shared, int64_t step) override;
  // sum_i L_i + sum_p <p, c_p> with the latest observe_shared()'s c (see the note above).
  Tensor total_loss(const std::vector<Tensor>& losses) override;
  // All 1: the heads' task weights.
  std::vector<double> weights() const override { return std::vector<double>(num_tasks_, 1.0); }
  // g^PC of the latest observe_shared(), flattened over shared.parameters in order (P), f64; for tests.
  const std::vector<double>& combined_gradient() const { return combined_; }

 private:
  WeightingOptions options_;
  int num_tasks_;
  std::vector<Tensor> shared_;        // S of the latest observe_shared()
  std::vector<Tensor> corrections_;   // c_p, each p's shape and dtype; empty: no surgery this step
  std::vector<double> combined_;
};

}  // namespace tinyddp::models
