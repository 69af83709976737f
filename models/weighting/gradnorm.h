// GradNorm (Chen, Badrinarayanan, Lee, Rabinovich; ICML 2018) and a squared variant that is not the paper's.
// See docs/gradnorm.md for the math, which settings the paper states, and what public code does differently.
//
// Legend: T = tasks, W = the shared layer's weight (the last layer all tasks share), g_i = grad_W L_i (W's
// shape), n_i = ||g_i||, w = the task weights (T), t = the step.
//
// Paper ("gradnorm"), at an update step t:
//   G_i = ||grad_W w_i L_i|| = w_i n_i                 (w_i > 0, so no create_graph is needed)
//   L~_i = L_i(t) / L_i(0),  r_i = L~_i / mean(L~)     (the relative inverse training rate)
//   target_i = mean(G) r_i^alpha                        (held constant: not differentiated)
//   L_grad = sum_i |G_i - target_i|,  dL_grad/dw_i = sign(G_i - target_i) n_i
//   w <- step(w, dL_grad/dw);  w <- max(w, min_weight);  w <- w T / sum(w)
// step: torch.optim.Adam's update with lr (WeightsOptimizer::adam, the default; optim/adam.h, in its
// floating-point order) or w - lr dL_grad/dw (sgd). Adam's moments persist across steps: the clamp and the
// renormalization rewrite w, not the moments, as they would after opt.step() on a PyTorch leaf w.
// The w-gradient is taken by autograd on a tiny graph over a leaf w (gradnorm_balance(), so the code shows
// the balance loss); gradnorm_balance_closed_form() is the formula above, and the tests check they agree.
//
// Squared variant ("gradnorm-squared"):
//   G_i = ||grad_W L_i|| = n_i,  G_W(w) = ||grad_W sum_i w_i L_i||,  r_i = L_i(t) / L_i(0)
//   balance = sum_i (w_i G_i - G_W r_i)^2, differentiated w.r.t. w through G_W too (create_graph: grad_W of
//   the weighted sum is built as a graph in w), then the same step, clamp and renormalization.
//   Under DDP (allreduce_mean set) G_W is built from the averaged g_i instead, G_W = ||sum_i w_i g_i||, the
//   same function of w (grad_W is linear in the w_i), since a create_graph gradient cannot be averaged.
//
// Note [GradNorm never touches the network's .grad]: observe() takes every gradient with autograd::grad
// (which returns gradients and accumulates nothing) and differentiates the balance loss w.r.t. a leaf w that
// is private to the weighting; total_loss() multiplies by plain numbers. So the network's .grad after
// total.backward() is exactly grad sum_i w_i(t) L_i, whether or not w was updated in the same step.
//
// Note [GradNorm's Gram-matrix norm] (WeightingOptions::grad_norm = gram): W's layer computes z = h W^T + b
// on M rows (h: (M, I) once leading dims are flattened; z: (M, O)). With D_i = dL_i/dz, (M, O), the gradient
// on W is g_i = D_i^T H, a product of W's size (O I M multiply-adds). Its squared norm needs no such product:
//   ||D_i^T H||_F^2 = sum_{a,b} (D_i D_i^T)_ab (H H^T)_ab = <D_i D_i^T, H H^T>,
// two M x M Gram matrices: M^2 O multiply-adds per task instead of O I M (8x fewer at batch 64 and a
// 512 x 512 W), and M^2 I once for all tasks. The per-task backward stops at z, so it skips W's product.
// Under DDP the norm is that of the global gradient (1/N) sum_r D_{i,r}^T H_r, so H and D_i are those of
// every rank stacked row-wise (one allgather_rows of (M, I + T O) per update, where direct allreduces T
// gradients of W's size):
//   ||g_i||^2 = <D_i D_i^T, H H^T> / N^2.
// The squared variant's G_W(w) = ||sum_i w_i g_i|| needs the cross terms too: G_W^2 = sum_ij w_i w_j <g_i, g_j>
// with <g_i, g_j> = <D_i D_j^T, H H^T>, a function of w that a tiny graph differentiates (no create_graph
// through the network).
// The Gram matrices are products in the layer's dtype, as direct's g_i is; their inner product, which sums
// terms of both signs (per-sample gradients point different ways), runs in f64.
// It holds when W enters the losses only through this one call of the layer: no weight tying, and the
// layer called once per forward (a LinearTap keeps the last call only).
//
// Steps: observe(L, W, t) at every step. The baseline L_i(0) comes from the first observed step
// (warmup_steps = 0) or the mean over the steps t < warmup_steps (which never update). The ratio EMA
// advances at every step after the baseline. The weights update at steps with t % update_every == 0 and
// (freeze_after < 0 or t <= freeze_after); only update steps compute per-task gradients.
#pragma once

#include <memory>

#include "models/optim/optimizer.h"
#include "models/weighting/loss_weighting.h"

namespace tinyddp::models {

// What an update step knows of the per-task gradients g_i = grad_W L_i: those of the gradient averaged over
// ranks under DDP.
struct TaskGradients {
  std::vector<Tensor> grads;   // g_i, W's shape (grad_norm = direct; empty with gram)
  std::vector<double> norms;   // ||g_i||, (T)
  std::vector<double> inner;   // <g_i, g_j>, (T, T) row-major (gram, when the variant needs_cross_terms(); else
                               // empty)
};

// A balance loss value and its gradient with respect to the task weights w.
struct BalanceGradient {
  double loss = 0.0;
  std::vector<double> grad_w;   // (T)
};

// L_grad = sum_i |w_i n_i - target_i| and dL_grad/dw by autograd::grad on a leaf w (f64), targets constant.
BalanceGradient gradnorm_balance(const std::vector<double>& w, const std::vector<double>& task_grad_norms,
                                 const std::vector<double>& targets);
// The same, in closed form: dL_grad/dw_i = sign(w_i n_i - target_i) n_i.
BalanceGradient gradnorm_balance_closed_form(const std::vector<double>& w, const std::vector<double>& task_grad_norms,
                                             const std::vector<double>& targets);

// What both GradNorm variants share: loss bookkeeping (DDP averaging, nonfinite policy, baseline, EMA),
// per-task gradients on W, the w step with clamp and renormalization.
class GradNormBase : public LossWeighting {
 public:
  // observe_shared(losses, {.weight = shared_weight}, step).
  WeightingStep observe(const std::vector<Tensor>& losses, const Tensor& shared_weight, int64_t step) override;
  // Looks at shared.weight, and with grad_norm = gram at shared.layer_input and layer_output.
  WeightingStep observe_shared(const std::vector<Tensor>& losses, const SharedTensors& shared, int64_t step) override;
  bool needs_layer_io() const override { return options_.grad_norm == GradNormMethod::gram; }
  Tensor total_loss(const std::vector<Tensor>& losses) override;
  std::vector<double> weights() const override { return weights_; }
  std::vector<double> loss_weights() const override { return loss_weights_; }
  const WeightingOptions& options() const { return options_; }
  // L_i(0), empty until taken.
  const std::vector<double>& baseline() const { return baseline_; }

 protected:
  GradNormBase(const std::string& kind, int num_tasks, WeightingOptions options);
  // r from the inverse training rates L~_i = L_i/L_i(0), before the EMA; returns an error text (and
  // leaves r alone) when r is undefined.
  virtual std::string ratios(const std::vector<double>& inverse_rates, std::vector<double>& r) const = 0;
  // Whether balance() needs <g_i, g_j> for i != j, which grad_norm = gram then computes (direct passes g_i).
  virtual bool needs_cross_terms() const { return false; }
  // The balance loss and its w-gradient at an update step; fills rec's norms and targets. Returns an error
  // text when a value is not finite.
  virtual std::string balance(const std::vector<Tensor>& losses, const Tensor& shared_weight,
                              const TaskGradients& g, const std::vector<double>& r, WeightingStep& rec,
                              BalanceGradient& out) = 0;
  // Throws `what` + the fix, or (skip_nonfinite) records it in rec as the reason for skipping.
  WeightingStep skip_or_throw(WeightingStep rec, const std::string& what, const std::string& fix) const;
  // The optimizer step on w from dL_grad/dw, then the clamp and the renormalization; returns how many
  // weights the clamp raised.
  int step_weights(const std::vector<double>& grad_w);

  WeightingOptions options_;
  int num_tasks_;

 private:
  // ||g_i|| (and <g_i, g_j> when needs_cross_terms()) by Note [GradNorm's Gram-matrix norm], without
  // forming g_i.
  TaskGradients gram_task_gradients(const std::vector<Tensor>& losses, const SharedTensors& shared) const;

  std::vector<double> weights_;        // w, (T), > 0, sum T after every update
  Tensor w_param_;                     // w as the f64 leaf (T) the optimizer steps; equals weights_ between calls
  std::unique_ptr<optim::Optimizer> w_optimizer_;   // Adam or SGD over {w_param_}
  std::vector<double> loss_weights_;   // w(t) of the latest observe(), what total_loss() applies
  std::vector<double> baseline_;       // L_i(0), (T); empty until taken
  std::vector<double> warmup_sum_;     // sum of the losses of the warm-up steps seen so far, (T)
  int warmup_count_ = 0;
  std::vector<double> ema_ratios_;     // the smoothed r, (T); empty until the first ratio
};

class GradNormWeighting : public GradNormBase {
 public:
  GradNormWeighting(int num_tasks, WeightingOptions options);
  std::string name() const override { return "gradnorm"; }

 protected:
  std::string ratios(const std::vector<double>& inverse_rates, std::vector<double>& r) const override;
  std::string balance(const std::vector<Tensor>& losses, const Tensor& shared_weight, const TaskGradients& g,
                      const std::vector<double>& r, WeightingStep& rec, BalanceGradient& out) override;
};

class GradNormSquaredWeighting : public GradNormBase {
 public:
  GradNormSquaredWeighting(int num_tasks, WeightingOptions options);
  std::string name() const override { return "gradnorm-squared"; }

 protected:
  bool needs_cross_terms() const override { return true; }
  std::string ratios(const std::vector<double>& inverse_rates, std::vector<double>& r) const override;
  std::string balance(const std::vector<Tensor>& losses, const Tensor& shared_weight, const TaskGradients& g,
                      const std::vector<double>& r, WeightingStep& rec, BalanceGradient& out) override;
};

}  // namespace tinyddp::models
