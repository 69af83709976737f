// The squared GradNorm variant: balance = sum_i (w_i G_i - G_W r_i)^2, differentiated w.r.t. w through
// G_W(w) = ||grad_W sum_i w_i L_i|| with create_graph (gradnorm.h).
#include <cmath>

#include "models/weighting/gradnorm.h"
#include "models/weighting/weighting_util.h"

namespace tinyddp::models {

GradNormSquaredWeighting::GradNormSquaredWeighting(int num_tasks, WeightingOptions options)
    : GradNormBase("gradnorm-squared", num_tasks, std::move(options)) {
  TINYDDP_CHECK(options_.grad_norm == GradNormMethod::direct, "gradnorm-squared weighting: grad_norm = ",
                grad_norm_method_name(options_.grad_norm), " is not supported: this variant differentiates G_W = "
                "||grad_W sum_i w_i L_i|| through W's gradient itself, so it forms every g_i anyway. Use "
                "grad_norm = direct, or the paper's variant (\"gradnorm\") for the Gram-matrix norm.");
}

std::string GradNormSquaredWeighting::ratios(const std::vector<double>& inverse_rates, std::vector<double>& r) const {
  r = inverse_rates;   // r_i = L_i(t) / L_i(0), not normalized by the mean in this variant
  return {};
}

std::string GradNormSquaredWeighting::balance(const std::vector<Tensor>& losses, const Tensor& shared_weight,
                                              const std::vector<Tensor>& task_grads,
                                              const std::vector<double>& norms, const std::vector<double>& r,
                                              WeightingStep& rec, BalanceGradient& out) {
  const size_t T = task_grads.size();
  const DType dtype = shared_weight.dtype();
  rec.grad_norms = norms;   // G_i = ||grad_W L_i||
  if (!detail::all_finite(norms)) {
    return "a per-task gradient norm ||grad_W L_i|| is not finite (" + detail::format_values(norms) + ")";
  }

  AutoGradMode grad_on(true);   // the graph in w below must be recorded even under NoGradGuard
  Tensor w = from_vector<double>(weights(), {static_cast<int64_t>(T)}, dtype).requires_grad_();   // (T), private leaf
  auto w_i = [&](size_t i) { return w.narrow(0, static_cast<int64_t>(i), 1).reshape({}); };
  Tensor grad_total;   // grad_W sum_i w_i L_i, W's shape, a function of w
  if (options_.allreduce_mean) {
    // DDP: the averaged g_i; grad_W is linear in w, so this is the same function of w as below.
    for (size_t i = 0; i < T; ++i) {
      Tensor term = task_grads[i] * w_i(i);
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
  Tensor G_W = sqrt((grad_total * grad_total).sum());   // scalar, differentiable in w
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
