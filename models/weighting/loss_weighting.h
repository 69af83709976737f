// Multi-task loss weighting: how T task losses L_i become the one loss a training step backpropagates.
//
//   auto weighting = make_weighting("gradnorm", T, {.alpha = 1.5, .lr = 0.025});      // w trained by Adam
//   for each step t:
//     std::vector<Tensor> L = model.task_losses(batch);                 // T scalars, with graphs
//     weighting->observe(L, shared_layer_weight, t);                    // G_i, r_i, the w update (GradNorm)
//     Tensor total = weighting->total_loss(L);                          // sum_i w_i(t) L_i, w constant here
//     total.backward();  optimizer.step();                              // one backward per forward (DDP-safe)
//
// Strategies (make_weighting's `kind`):
//   "fixed"             total = sum_i w_i L_i with constant w (initial_weights, default all 1).
//   "uncertainty"       Kendall et al. 2018 with learned s_i = log sigma_i^2 (parameters(), init 0):
//                       total = sum_i 0.5 exp(-s_i) L_i + 0.5 s_i, the regression form for every task (see
//                       uncertainty.h); weights() reports exp(-s_i), so it starts at 1 like "fixed".
//   "gradnorm"          the paper (Chen et al. 2018): G_i = ||grad_W w_i L_i||, r_i = L~_i / mean L~,
//                       L_grad = sum_i |G_i - mean(G) r_i^alpha| with the targets held constant, an Adam (or
//                       SGD) step on w only, clamp, renormalize to sum w = T (see gradnorm.h).
//   "gradnorm-squared"  a variant, not the paper's: sum_i (w_i G_i - G_W r_i)^2 with G_i = ||grad_W L_i||,
//                       G_W = ||grad_W sum_i w_i L_i|| (differentiable in w, via create_graph), r_i = L_i/L_i(0).
// Gradient surgery (models/gradient_surgery, docs/multitask.md), which look at more than W, so the caller
// passes SharedTensors to observe_shared() instead of W to observe():
//   "pcgrad"            Yu et al. 2020: per-task gradients g_i of every shared parameter, each projected off
//                       the other tasks' g_j it conflicts with (<g_i, g_j> < 0), in a seeded random order;
//                       the shared parameters receive sum_i g_i^PC, the heads their ordinary gradients.
//   "mgda"              MGDA-UB (Sener & Koltun 2018): weights alpha = the min-norm point of the task
//                       gradients w.r.t. the shared representation Z (Frank-Wolfe), total = sum_i alpha_i L_i.
//
// Invariants:
//  - total_loss() never lets a gradient reach the task weights through the network's backward, and the
//    weight update never writes into the network's .grad (the balance loss is differentiated w.r.t. w only);
//  - weights stay positive and (for GradNorm) sum to T after every update, and are never NaN: nonfinite
//    losses or gradients and too-small baselines throw, or skip the update when skip_nonfinite;
//  - observe() uses autograd::grad on the shared layer only: it fires no DDP hooks, so under DDP the step
//    still has exactly one backward; per-task gradients are averaged across ranks through
//    WeightingOptions::allreduce_mean, so every rank computes the same global G_i and the same weights;
//  - the same holds for observe_shared() (autograd::grad on the shared parameters or on Z), and total_loss()
//    stays the one loss the step backpropagates: for PCGrad its gradient on the shared parameters is the
//    surgery's result (Note [PCGrad's one backward] in models/gradient_surgery/pcgrad.h).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/tinyddp.h"

namespace tinyddp::models {

// The optimizer of GradNorm's task weights (both variants). The paper states lr 0.025 and "All optimizers are
// Adam" (its NYUv2 section); it does not state the toy problem's weight optimizer, so Adam there, and Adam's
// betas and eps (PyTorch's defaults, 0.9, 0.999, 1e-8), are our choices. SGD is the plain w -= lr dL_grad/dw.
enum class WeightsOptimizer { adam, sgd };
std::string weights_optimizer_name(WeightsOptimizer optimizer);   // "adam" | "sgd"
// Throws naming the known optimizers when `name` is not one.
WeightsOptimizer parse_weights_optimizer(const std::string& name);

// How GradNorm (both variants' G_i) takes the per-task gradient norms ||grad_W L_i||.
//   direct  forms g_i = grad_W L_i with autograd::grad (one product of W's size per task), then its norm.
//   gram    never forms g_i: ||g_i||^2 = <D_i D_i^T, H H^T> from the layer's input H and the gradient D_i at
//           its output (Note [GradNorm's Gram-matrix norm] in gradnorm.h). Fewer flops when the rows M of H
//           are fewer than I O / (I + O); needs the layer's h and z (SharedTensors, a LinearTap) and, under
//           DDP, WeightingOptions::allgather_rows. Both GradNorm variants; the norms agree with direct's to
//           rounding, so the weights do not keep direct's bits.
enum class GradNormMethod { direct, gram };
std::string grad_norm_method_name(GradNormMethod method);   // "direct" | "gram"
// Throws naming the known methods when `name` is not one.
GradNormMethod parse_grad_norm_method(const std::string& name);

struct WeightingOptions {
  double alpha = 1.5;              // GradNorm's asymmetry (paper: 1.5 on NYUv2, 0.12 on the toy problem)
  double lr = 0.025;               // learning rate of the task weights (paper: 0.025, with Adam)
  WeightsOptimizer weights_optimizer = WeightsOptimizer::adam;   // its state persists across the clamp and the
                                   // renormalization, which act on w itself, as torch.optim.Adam's would
  int update_every = 1;            // update the weights at steps with step % update_every == 0
  double ema = 0.0;                // EMA factor of the loss ratios: r <- ema * r_prev + (1 - ema) * r (0: none);
                                   // the EMA advances at every observed step after the baseline, update or not
  double epsilon = 1e-8;           // smallest admissible ratio denominator: a baseline L_i(0) or mean L~ at or
                                   // below it is an error (or a skip). Ratios are not padded with it, so they
                                   // are exactly the paper's L_i/L_i(0) and L~_i/mean L~
  double min_weight = 1e-6;        // clamp before renormalizing
  int warmup_steps = 0;            // baseline L_i(0) = mean of the losses at steps < warmup_steps, which never
                                   // update (0: the losses of the first observed step, which does update)
  int freeze_after = -1;           // no updates at steps > freeze_after (-1: never freeze)
  bool skip_nonfinite = false;     // NaN/inf losses or gradients, or a baseline <= epsilon: skip the update
                                   // (true; a bad baseline is re-taken at the next step) or throw (false)
  std::vector<double> initial_weights;   // default: all 1 (fixed and GradNorm); must be > 0
  std::vector<std::string> task_names;   // for messages (default "task 0", "task 1", ...)
  DType dtype = DType::f32;        // dtype of uncertainty's log-variances s_i (match the task losses)
  uint64_t seed = 0;               // PCGrad's projection orders: a pure function of (seed, step, task), so the
                                   // same on every rank without communication
  // Under DDP: averages tensors across ranks in place (e.g. ProcessGroup allreduce / world size).
  // GradNorm calls it with the T loss values (one 1-D tensor) at every step and with the T per-task
  // gradients on W at update steps, in that order, on every rank alike. PCGrad calls it once per step with
  // all T per-task gradients of the shared parameters packed in one flat tensor (T P), MGDA-UB once with
  // the T x T Gram matrix of the task gradients on Z.
  std::function<void(std::vector<Tensor>&)> allreduce_mean;
  GradNormMethod grad_norm = GradNormMethod::direct;
  // Under DDP with grad_norm = gram: every rank's tensor concatenated along dim 0, in rank order (e.g.
  // dist::allgather_rows_over(pg)); every rank passes the same shape. GradNorm calls it once per update
  // step with the layer's rows and the T output gradients packed side by side, (M, I + T O).
  std::function<Tensor(const Tensor&)> allgather_rows;
};

// What one observe() saw and did, for reports and tests.
struct WeightingStep {
  int64_t step = 0;
  std::vector<double> losses;          // L_i(t) (averaged over ranks under DDP)
  std::vector<double> baseline;        // L_i(0) in use (GradNorm variants; empty during warm-up)
  std::vector<double> grad_norms;      // gradnorm: G_i = ||grad_W w_i L_i||; squared: G_i = ||grad_W L_i||
  std::vector<double> targets;         // gradnorm: mean G * r_i^alpha; squared: G_W * r_i
  std::vector<double> loss_ratios;     // gradnorm: r_i = L~_i / mean L~; squared: L_i / L_i(0) (after EMA)
  std::vector<double> weight_grads;    // d balance / d w_i (GradNorm variants, update steps)
  double total_grad_norm = 0.0;        // squared: G_W = ||grad_W sum_i w_i L_i||
  double balance_loss = 0.0;           // L_grad at this step's w (before the update)
  std::vector<double> weights;         // after the update
  bool updated = false;
  int clamped = 0;                     // weights the optimizer step left below min_weight, raised to it by the
                                       // clamp (update steps; 0 when the step stayed clear of it)
  std::string skipped;                 // why the update was skipped (skip_nonfinite); empty otherwise
  std::vector<double> cosines;         // pcgrad, mgda: cos(g_i, g_j) of the global per-task gradients (on the
                                       // shared parameters; mgda: on Z), pairs i < j in row-major order
  int projections = 0;                 // pcgrad: projections applied (ordered pairs (i, j) with <g_i^PC, g_j> < 0)
  int solver_iterations = 0;           // mgda: Frank-Wolfe iterations until it stopped
};

// Everything shared a strategy may differentiate, all from this step's forward.
struct SharedTensors {
  Tensor weight;                       // W: the last shared layer's weight (GradNorm, the grad report)
  std::vector<Tensor> parameters;      // every shared (trunk) parameter, W among them (PCGrad)
  Tensor representation;               // Z: the trunk's output in this forward, (N, H) (MGDA-UB)
  Tensor layer_input;                  // h: the input of W's layer in this forward, (N..., I), and
  Tensor layer_output;                 // z = h W^T + b: its output, (N..., O), with its graph (GradNorm's gram
                                       // norm; models/weighting/linear_tap.h captures both)
};

class LossWeighting {
 public:
  virtual ~LossWeighting() = default;
  virtual std::string name() const = 0;
  // Sees this step's task losses (and, for GradNorm, the shared layer W) and updates the weights.
  virtual WeightingStep observe(const std::vector<Tensor>& losses, const Tensor& shared_weight, int64_t step) = 0;
  // The same with everything shared in view: what `tinyddp train` calls. Gradient surgery needs it (its
  // observe() throws, naming this); the others look at shared.weight only.
  virtual WeightingStep observe_shared(const std::vector<Tensor>& losses, const SharedTensors& shared, int64_t step) {
    return observe(losses, shared.weight, step);
  }
  // Whether observe_shared() needs shared.representation (MGDA-UB), which the caller must then capture.
  virtual bool needs_representation() const { return false; }
  // Whether observe_shared() needs shared.layer_input and layer_output (GradNorm with grad_norm = gram).
  virtual bool needs_layer_io() const { return false; }
  // The loss for the network's backward this step: sum_i loss_weights()_i L_i with the weights as constants
  // (uncertainty: 0.5 sum_i (exp(-s_i) L_i + s_i), differentiable in its own parameters() s).
  virtual Tensor total_loss(const std::vector<Tensor>& losses) = 0;
  // The current weights (after the last update).
  virtual std::vector<double> weights() const = 0;
  // The weights total_loss() applies. GradNorm: w(t), the weights the latest observe() started from, since
  // the paper's Algorithm 1 steps the network with grad L(t), L(t) = sum_i w_i(t) L_i(t), while w moves to
  // w(t+1). Others: weights().
  virtual std::vector<double> loss_weights() const { return weights(); }
  int num_tasks() const { return static_cast<int>(weights().size()); }
  // Parameters of the weighting itself that the network optimizer must also train (uncertainty
  // weighting's log-variances); empty for the others.
  virtual std::vector<Tensor> parameters() { return {}; }
};

// kind: "fixed", "uncertainty", "gradnorm" (the paper's L1 balance loss), "gradnorm-squared", "pcgrad" or "mgda".
std::unique_ptr<LossWeighting> make_weighting(const std::string& kind, int num_tasks, WeightingOptions options = {});

// The names make_weighting accepts, in the order above.
std::vector<std::string> weighting_kinds();

}  // namespace tinyddp::models
