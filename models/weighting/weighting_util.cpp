#include "models/weighting/weighting_util.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace tinyddp::models::detail {

std::vector<double> checked_initial_weights(const std::string& kind, int num_tasks, const WeightingOptions& o) {
  TINYDDP_CHECK(num_tasks >= 1, kind, " weighting: num_tasks must be at least 1, got ", num_tasks, ".");
  TINYDDP_CHECK(o.task_names.empty() || o.task_names.size() == static_cast<size_t>(num_tasks), kind,
                " weighting: task_names has ", o.task_names.size(), " names for ", num_tasks,
                " tasks; give one name per task or none.");
  TINYDDP_CHECK(std::isfinite(o.alpha) && o.alpha >= 0.0, kind, " weighting: alpha must be finite and >= 0, got ",
                o.alpha, " (the paper uses 1.5 on NYUv2 and 0.12 on its toy problem).");
  TINYDDP_CHECK(std::isfinite(o.lr) && o.lr >= 0.0, kind, " weighting: lr must be finite and >= 0, got ", o.lr,
                " (the paper uses 0.025).");
  TINYDDP_CHECK(o.update_every >= 1, kind, " weighting: update_every must be >= 1 (1: every step), got ",
                o.update_every, ".");
  TINYDDP_CHECK(o.ema >= 0.0 && o.ema < 1.0, kind, " weighting: ema must be in [0, 1) (0: no smoothing), got ",
                o.ema, ".");
  TINYDDP_CHECK(o.epsilon >= 0.0, kind, " weighting: epsilon must be >= 0, got ", o.epsilon, ".");
  TINYDDP_CHECK(o.min_weight > 0.0 && o.min_weight * num_tasks < num_tasks, kind,
                " weighting: min_weight must be in (0, 1) so that clamped weights stay positive and can sum to T, got ",
                o.min_weight, ".");
  TINYDDP_CHECK(o.warmup_steps >= 0, kind, " weighting: warmup_steps must be >= 0 (0: baseline from the first step), got ",
                o.warmup_steps, ".");
  TINYDDP_CHECK(o.freeze_after >= -1, kind, " weighting: freeze_after must be -1 (never) or a step >= 0, got ",
                o.freeze_after, ".");
  if (o.initial_weights.empty()) return std::vector<double>(num_tasks, 1.0);
  TINYDDP_CHECK(o.initial_weights.size() == static_cast<size_t>(num_tasks), kind, " weighting: initial_weights has ",
                o.initial_weights.size(), " values for ", num_tasks, " tasks; give one weight per task or none (all 1).");
  for (size_t i = 0; i < o.initial_weights.size(); ++i) {
    TINYDDP_CHECK(std::isfinite(o.initial_weights[i]) && o.initial_weights[i] > 0.0, kind,
                  " weighting: initial_weights[", i, "] (", task_name(o, i), ") must be finite and > 0, got ",
                  o.initial_weights[i], ".");
  }
  return o.initial_weights;
}

std::string task_name(const WeightingOptions& o, size_t i) {
  if (i < o.task_names.size()) return "task '" + o.task_names[i] + "'";
  return "task " + std::to_string(i);
}

std::vector<double> loss_values(const std::string& kind, const std::vector<Tensor>& losses, int num_tasks) {
  TINYDDP_CHECK(losses.size() == static_cast<size_t>(num_tasks), kind, " weighting: expected ", num_tasks,
                " task losses (one per task, as constructed), got ", losses.size(), ".");
  std::vector<double> values(losses.size());
  for (size_t i = 0; i < losses.size(); ++i) {
    const Tensor& l = losses[i];
    TINYDDP_CHECK(l.defined(), kind, " weighting: task loss ", i, " is an undefined tensor.");
    TINYDDP_CHECK(l.numel() == 1 && is_floating(l.dtype()), kind, " weighting: task loss ", i,
                  " must be a floating scalar (a mean-reduced loss), got shape ", shape_str(l.shape()), " of ",
                  dtype_name(l.dtype()), ".");
    values[i] = l.item<double>();
  }
  return values;
}

Tensor weighted_sum(const std::vector<Tensor>& losses, const std::vector<double>& weights) {
  TINYDDP_INTERNAL_ASSERT(!losses.empty() && losses.size() == weights.size());
  Tensor total = losses[0].reshape({}) * weights[0];
  for (size_t i = 1; i < losses.size(); ++i) total = total + losses[i].reshape({}) * weights[i];
  return total;
}

bool all_finite(const std::vector<double>& values) {
  return std::all_of(values.begin(), values.end(), [](double v) { return std::isfinite(v); });
}

std::string format_values(const std::vector<double>& values) {
  std::ostringstream os;
  os.precision(6);
  os << "[";
  for (size_t i = 0; i < values.size(); ++i) os << (i ? ", " : "") << values[i];
  os << "]";
  return os.str();
}

int clamp_and_renormalize(std::vector<double>& w, double min_weight) {
  double sum = 0.0;
  int clamped = 0;
  for (double& v : w) {
    clamped += v < min_weight;
    v = std::max(v, min_weight);
    sum += v;
  }
  const double T = static_cast<double>(w.size());
  for (double& v : w) v = v * T / sum;
  return clamped;
}

}  // namespace tinyddp::models::detail
