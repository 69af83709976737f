#include "models/weighting/fixed.h"

#include "models/weighting/weighting_util.h"

namespace tinyddp::models {

FixedWeighting::FixedWeighting(int num_tasks, WeightingOptions options)
    : options_(std::move(options)), weights_(detail::checked_initial_weights("fixed", num_tasks, options_)) {}

WeightingStep FixedWeighting::observe(const std::vector<Tensor>& losses, const Tensor& /*shared_weight*/,
                                      int64_t step) {
  WeightingStep rec;
  rec.step = step;
  rec.losses = detail::loss_values(name(), losses, num_tasks());
  rec.weights = weights_;
  return rec;
}

Tensor FixedWeighting::total_loss(const std::vector<Tensor>& losses) {
  detail::loss_values(name(), losses, num_tasks());
  return detail::weighted_sum(losses, weights_);
}

}  // namespace tinyddp::models
