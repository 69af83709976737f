// The squared GradNorm variant: balance = sum_i (w_i G_i - G_W r_i)^2, differentiated w.r.t. w through
// G_W(w) = ||grad_W sum_i w_i L_i|| (gradnorm.h): with create_graph, from the rank-averaged g_i, or from the
// inner products <g_i, g_j> (grad_norm = gram).
#include <cmath>

#include "models/weighting/gradnorm.h"
#include "models/weighting/weighting_util.h"

namespace tinyddp::models {

GradNormSquaredWeighting::GradNormSquaredWeighting(int num_tasks, WeightingOptions options)
    : GradNormBase("gradnorm-squared", num_tasks, std::move(options)) {}

std::string GradNormSquaredWeighting::ratios(const std::vector<double>& inverse_rates, std::vector<double>& r) const {
  r = inverse_rates;   // r_i = L_i(t) / L_i(0), not normalized by the mean in this variant
  return {};
}

std::string GradNormSquaredWeighting::balance(const std::vector<Tensor>& losses, const Tensor& shared_weight,
                                              const TaskGradients& g, const std::vector<double>& r,
                                              WeightingStep& rec, BalanceGradient& out) {
  const std::vector<double>& norms = g.norms;
  const size_t T = norms.size();
  const DType dtype = shared_weight.dtype();
  rec.grad_norms = norms;   // G_i = ||grad_W L_i||
  if (!detail::all_finite(norms)) {
    return "a per-task gradient norm ||grad_W L_i|| is not finite (" + detail::format_values(norms) + ")";
  }

  AutoGradMode grad_on(true);   // the graph in w below must be recorded even under NoGradGuard
  Tensor w = from_vector<double>(weights(), {static_cast<int64_t>(T)}, dtype).requires_grad_();   // (T), private leaf
  auto w_i = [&](size_t i) { return w.narrow(0, static_cast<int64_t>(i), 1).reshape({}); };
  Tensor G_W;          // ||grad_W sum_i w_i L_i||, scalar, differentiable in w
  Tensor grad_total;   // grad_W sum_i w_i L_i, W's shape, a function of w (direct)
  if (!g.inner.empty()) {
    // gram: G_W^2 = sum_ij w_i w_j <g_i, g_j>, the same function of w (Note [GradNorm's Gram-matrix norm]).
    const int64_t tasks = static_cast<int64_t>(T);
    const Tensor inner = from_vector<double>(g.inner, {tasks, tasks}, dtype);
    G_W = sqrt((w.reshape({tasks, 1}) * inner * w.reshape({1, tasks})).sum());
  } else if (options_.allreduce_mean) {
    // DDP: the averaged g_i; grad_W is linear in w, so this is the same function of w as below.
    for (size_t i = 0; i < T; ++i) {
      Tensor term = g.grads[i] * w_i(i);
      grad_total = grad_total.defined() ? grad_total + term : term;
    }
  } else {
    Tensor weighted;   // sum_i w_i L_i with w differentiable (not the network's total_loss())
    for (size_t i = 0; i < T; ++i) {
      Tensor term = w_i(i) * losses[i].reshape({});
      weighted = weighted.defined() ? weighted + term : term;
    }
    // create_graph: grad_total keeps a graph back to w. retain_graph: total_loss()'s backward needs the network's.
    grad_total = autograd::grad({weighted}, {shared_weight}, {}, {.retain_graph = true, .create_graph = true})[0];
  }
  if (!G_W.defined()) G_W = sqrt((grad_total * grad_total).sum());
  Tensor n = from_vector<double>(norms, {static_cast<int64_t>(T)}, dtype);
  Tensor ratio = from_vector<double>(r, {static_cast<int64_t>(T)}, dtype);
  Tensor diff = w * n - G_W * ratio;   // (T): w_i G_i - G_W r_i
  Tensor balance = (diff * diff).sum();
  // Inputs = {w} only: nothing accumulates into the network's .grad (Note [GradNorm never touches the
  // network's .grad] in gradnorm.h). retain_graph keeps the network's forward graph for total_loss().
  Tensor grad_w = autograd::grad({balance}, {w}, {}, {.retain_graph = true})[0];

  const double g_w = G_W.item<double>();
  rec.total_grad_norm = g_w;
  rec.targets.resize(T);
  for (size_t i = 0; i < T; ++i) rec.targets[i] = g_w * r[i];
  if (!std::isfinite(g_w)) return "the weighted total loss's gradient norm G_W is not finite";
  out.loss = balance.item<double>();
  out.grad_w = grad_w.to_vector<double>();
  return {};
}

}  // namespace tinyddp::models
