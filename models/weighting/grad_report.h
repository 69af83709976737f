// Per-task gradient diagnostics on the shared layer: how each task pulls on W, whatever the loss weighting
// (`tinyddp train --grad-report STEPS`, docs/tracing.md "Per-task gradient report").
//
//   std::vector<Tensor> L = net->task_losses(batch);                        // T scalars, with graphs
//   std::vector<double> w = effective_loss_weights(*weighting, L);          // d total / d L_i
//   GradReport r = grad_report(L, net->last_shared_weight(), w, step,
//                              {.task_names = names, .baseline = L0, .alpha = 1.5});
//   r.tasks[i].grad_norm, r.tasks[i].target, r.cosine[i][j], r.tasks[i].status ...
//
// Legend: T = tasks, W = the shared layer's weight, g_i = grad_W L_i (W's shape).
// Columns (task i at step t):
//   G_i      = ||g_i||                   the task's own pull on W, unweighted
//   w_i      = d total / d L_i           what the step's backward multiplies L_i by: w_i for fixed and GradNorm,
//                                        exp(-s_i)/2 for uncertainty weighting (total = sum_i (exp(-s_i) L_i + s_i)/2)
//   w_i G_i  = ||grad_W w_i L_i||        what W actually receives from task i; GradNorm's G_i^(W) (the paper's G_i)
//   L~_i     = L_i(t) / L_i(0),  r_i = L~_i / mean_j L~_j      (the relative inverse training rate)
//   target_i = mean_j(w_j G_j) r_i^alpha GradNorm's target for w_i G_i, shown for every weighting: with
//                                        GradNorm (no EMA, no warm-up) it is the weighting's own target
//   cos_ij   = <g_i, g_j> / (G_i G_j)    -1: the tasks pull W in opposite directions (no weighting fixes that)
//
// Status of a task (the flags `tinyddp train` prints):
//   ok               g_i exists and is nonzero, w_i > 0
//   disconnected     L_i has no path to W on any rank (g_i absent): a detach/stop-gradient between the trunk and
//                    the head, a head computed under NoGradGuard, or a head that does not read the shared trunk
//   zero gradient    L_i reaches W but g_i = 0 at this step: a masked (all-zero) input to the head, dead ReLUs
//                    everywhere it reads, a zero head, or a loss already at its minimum
//   not in the loss  w_i = 0: the task is missing from the loss the step backpropagates (left out of the sum, or
//                    weighted 0), so W receives nothing from it even though g_i exists
//
// DDP: the losses are shard means; with `allreduce_mean` set (a mean over ranks, as WeightingOptions's), the
// loss values, the presence of each g_i and the g_i themselves are averaged over ranks, so every rank computes
// the same report from the global gradient (the mean over ranks of the shard gradients). Every rank must call
// grad_report at the same steps: it runs T + 1 allreduces, in task order.
//
// Invariants: nothing accumulates into any .grad (autograd::grad with retain_graph; the graphs stay usable
// for the step's backward) and no DDP hook fires; values are computed in f64.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "models/weighting/loss_weighting.h"

namespace tinyddp::models {

struct GradReportOptions {
  std::vector<std::string> task_names;   // default "task0", "task1", ...
  std::vector<double> baseline;          // L_i(0), (T); empty: this step's losses (so r_i = 1)
  double alpha = 1.5;                    // GradNorm's alpha for the target column
  // Under DDP: averages tensors across ranks in place (WeightingOptions::allreduce_mean's contract).
  std::function<void(std::vector<Tensor>&)> allreduce_mean;
};

struct TaskGradRow {
  std::string name;
  double loss = 0;                   // L_i(t), averaged over ranks under DDP
  double inverse_rate = 0;           // L~_i = L_i(t) / L_i(0)
  double ratio = 0;                  // r_i = L~_i / mean_j L~_j
  double grad_norm = 0;              // G_i = ||grad_W L_i|| (0 when disconnected)
  double weight = 0;                 // w_i = d total / d L_i
  double weighted_grad_norm = 0;     // w_i G_i
  double target = 0;                 // mean_j(w_j G_j) r_i^alpha
  bool reaches_shared = true;        // L_i has a path to W (on some rank)
  std::string status = "ok";         // ok | disconnected | zero gradient | not in the loss
  std::vector<std::string> causes;   // the likely causes, for a status other than ok
};

struct GradReport {
  int64_t step = 0;
  double alpha = 0;
  std::vector<int64_t> shared_shape;                    // W's shape
  std::vector<TaskGradRow> tasks;                       // (T)
  std::vector<std::vector<std::optional<double>>> cosine;   // (T, T); nullopt where G_i or G_j is 0
  // The flagged tasks' indices (status other than ok), in task order.
  std::vector<size_t> flagged() const;
};

// A gradient norm below kZeroGradRelative * max_j G_j (or exactly 0) counts as zero: the f32 rounding of a
// real gradient sits near 1e-7 of its size, a masked input gives exactly 0, and GradNorm's own scales
// (sigma = 1 vs 100 in toy2) differ by far less than 1e10.
constexpr double kZeroGradRelative = 1e-10;

// The report at `step` for task losses `losses` (each a scalar with its graph) on the shared weight W.
// `weights`: w_i, the multiplier of L_i in the step's loss (effective_loss_weights()).
GradReport grad_report(const std::vector<Tensor>& losses, const Tensor& shared_weight,
                       const std::vector<double>& weights, int64_t step, const GradReportOptions& options = {});

// d total_loss(L) / d L_i at the losses' current values: the weight the step's backward applies to each task,
// for any LossWeighting (taken by autograd on leaf copies of the values, so nothing reaches the network or
// the weighting's parameters). Call it after observe(), where total_loss() uses this step's weights.
std::vector<double> effective_loss_weights(LossWeighting& weighting, const std::vector<Tensor>& losses);

}  // namespace tinyddp::models
