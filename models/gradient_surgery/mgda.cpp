#include "models/gradient_surgery/mgda.h"

#include "models/gradient_surgery/solvers.h"
#include "models/weighting/weighting_util.h"

namespace tinyddp::models {

MGDAWeighting::MGDAWeighting(int num_tasks, WeightingOptions options)
    : options_(std::move(options)), num_tasks_(num_tasks) {
  detail::checked_initial_weights("mgda", num_tasks, options_);
  alpha_.assign(num_tasks, 1.0 / num_tasks);
}

WeightingStep MGDAWeighting::observe(const std::vector<Tensor>& /*losses*/, const Tensor& /*shared_weight*/,
                                     int64_t /*step*/) {
  throw Error("mgda weighting: observe(losses, W, step) sees only the shared layer W, but MGDA-UB takes the task "
              "gradients with respect to the shared representation Z. Call observe_shared(losses, "
              "SharedTensors{.weight = W, .representation = Z}, step), Z the trunk's output in this forward "
              "(models/gradient_surgery/representation_tap.h captures it; `tinyddp train --weighting mgda` does).");
}

WeightingStep MGDAWeighting::observe_shared(const std::vector<Tensor>& losses, const SharedTensors& shared,
                                            int64_t step) {
  const size_t T = static_cast<size_t>(num_tasks_);
  WeightingStep rec;
  rec.step = step;
  rec.losses = detail::loss_values(name(), losses, num_tasks_);
  const Tensor& Z = shared.representation;
  TINYDDP_CHECK(Z.defined() && Z.requires_grad() && is_floating(Z.dtype()), name(), " weighting: "
                "SharedTensors::representation must be the trunk's output Z of this step's forward, a floating "
                "tensor with a graph; found ", Z.defined() ? "one without a graph" : "none", ". Capture it with "
                "tap_representation(model) before the forward.");

  // 1-2. v_i = grad_Z L_i and their Gram matrix (f64), averaged over ranks.
  std::vector<Tensor> v(T);
  for (size_t i = 0; i < T; ++i) {
    TINYDDP_CHECK(losses[i].requires_grad(), name(), " weighting: ", detail::task_name(options_, i),
                  "'s loss does not require grad; pass the losses as the model computed them, with their graphs.");
    // retain_graph: the step's backward of total_loss() still needs the graph.
    const Tensor g = autograd::grad({losses[i]}, {Z}, {}, {.retain_graph = true, .allow_unused = true})[0];
    NoGradGuard no_grad;
    v[i] = g.defined() ? g.to(DType::f64) : zeros_like(Z).to(DType::f64);
  }
  std::vector<double> flat_gram(T * T);
  {
    NoGradGuard no_grad;
    for (size_t i = 0; i < T; ++i)
      for (size_t j = i; j < T; ++j) flat_gram[i * T + j] = flat_gram[j * T + i] = (v[i] * v[j]).sum().item<double>();
  }
  if (options_.allreduce_mean) {
    std::vector<Tensor> buffer{from_vector<double>(flat_gram, {static_cast<int64_t>(T * T)}, DType::f64)};
    options_.allreduce_mean(buffer);
    flat_gram = buffer[0].to_vector<double>();
  }
  std::vector<std::vector<double>> gram(T, std::vector<double>(T));
  for (size_t i = 0; i < T; ++i)
    for (size_t j = 0; j < T; ++j) gram[i][j] = flat_gram[i * T + j];
  rec.cosines = surgery::gram_cosines(gram);
  if (!detail::all_finite(flat_gram)) {
    TINYDDP_CHECK(options_.skip_nonfinite, name(), " weighting: the Gram matrix of the task gradients on Z is not "
                  "finite at step ", step, " (", detail::format_values(flat_gram), "). Check the model, data and "
                  "learning rate for divergence, or set WeightingOptions::skip_nonfinite = true to keep the previous "
                  "weights at such steps.");
    rec.skipped = "the Gram matrix of the task gradients on Z is not finite at step " + std::to_string(step);
    rec.weights = alpha_;
    return rec;
  }

  // 3. The min-norm weights.
  const surgery::MinNormResult mn = surgery::min_norm_frank_wolfe(gram);
  alpha_ = mn.alpha;
  rec.weights = alpha_;
  rec.solver_iterations = mn.iterations;
  rec.updated = true;
  return rec;
}

Tensor MGDAWeighting::total_loss(const std::vector<Tensor>& losses) {
  detail::loss_values(name(), losses, num_tasks_);
  return detail::weighted_sum(losses, alpha_);
}

}  // namespace tinyddp::models
