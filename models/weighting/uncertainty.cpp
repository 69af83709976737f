#include "models/weighting/uncertainty.h"

#include <cmath>

#include "models/weighting/weighting_util.h"

namespace tinyddp::models {

UncertaintyWeighting::UncertaintyWeighting(int num_tasks, WeightingOptions options)
    : options_(std::move(options)), num_tasks_(num_tasks) {
  std::vector<double> w = detail::checked_initial_weights("uncertainty", num_tasks, options_);
  TINYDDP_CHECK(is_floating(options_.dtype), "uncertainty weighting: dtype must be float32 or float64, got ",
                dtype_name(options_.dtype), ".");
  std::vector<double> s(w.size());
  for (size_t i = 0; i < w.size(); ++i) s[i] = -std::log(w[i]);   // exp(-s_i) = w_i
  log_vars_ = from_vector<double>(s, {num_tasks}, options_.dtype).requires_grad_();
}

std::vector<double> UncertaintyWeighting::weights() const {
  std::vector<double> s = log_vars_.to_vector<double>();
  for (double& v : s) v = std::exp(-v);
  return s;
}

WeightingStep UncertaintyWeighting::observe(const std::vector<Tensor>& losses, const Tensor& /*shared_weight*/,
                                            int64_t step) {
  WeightingStep rec;
  rec.step = step;
  rec.losses = detail::loss_values(name(), losses, num_tasks_);
  rec.weights = weights();
  if (!detail::all_finite(rec.losses)) {
    const std::string what = "a task loss is not finite at step " + std::to_string(step) + " (losses " +
                             detail::format_values(rec.losses) + ")";
    TINYDDP_CHECK(options_.skip_nonfinite, "uncertainty weighting: ", what,
                  "; its gradient would make the log-variances NaN. Check the model and learning rate for "
                  "divergence, or set WeightingOptions::skip_nonfinite = true and skip the optimizer step when "
                  "WeightingStep::skipped is set.");
    rec.skipped = what;
  }
  return rec;
}

Tensor UncertaintyWeighting::total_loss(const std::vector<Tensor>& losses) {
  detail::loss_values(name(), losses, num_tasks_);
  Tensor total;
  for (int i = 0; i < num_tasks_; ++i) {
    TINYDDP_CHECK(losses[i].dtype() == log_vars_.dtype(), "uncertainty weighting: task loss ", i, " (",
                  detail::task_name(options_, i), ") is ", dtype_name(losses[i].dtype()),
                  " but the log-variances are ", dtype_name(log_vars_.dtype()),
                  "; construct the weighting with WeightingOptions{.dtype = <the losses' dtype>}.");
    Tensor s = log_vars_.narrow(0, i, 1).reshape({});
    Tensor term = exp(-s) * losses[i].reshape({}) * 0.5 + s * 0.5;
    total = total.defined() ? total + term : term;
  }
  return total;
}

}  // namespace tinyddp::models
