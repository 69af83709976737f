#include "models/gradient_surgery/pcgrad.h"

#include "models/gradient_surgery/solvers.h"
#include "models/weighting/weighting_util.h"

namespace tinyddp::models {

namespace {

std::vector<double> as_doubles(const Tensor& t) { return t.to(DType::f64).contiguous().to_vector<double>(); }

}  // namespace

PCGradWeighting::PCGradWeighting(int num_tasks, WeightingOptions options)
    : options_(std::move(options)), num_tasks_(num_tasks) {
  detail::checked_initial_weights("pcgrad", num_tasks, options_);
}

WeightingStep PCGradWeighting::observe(const std::vector<Tensor>& /*losses*/, const Tensor& /*shared_weight*/,
                                       int64_t /*step*/) {
  throw Error("pcgrad weighting: observe(losses, W, step) sees only the shared layer W, but PCGrad projects the "
              "gradients of every shared parameter. Call observe_shared(losses, SharedTensors{.weight = W, "
              ".parameters = the trunk's parameters}, step) (`tinyddp train --weighting pcgrad` does).");
}

WeightingStep PCGradWeighting::observe_shared(const std::vector<Tensor>& losses, const SharedTensors& shared,
                                              int64_t step) {
  const size_t T = static_cast<size_t>(num_tasks_);
  WeightingStep rec;
  rec.step = step;
  rec.losses = detail::loss_values(name(), losses, num_tasks_);
  rec.weights = weights();
  TINYDDP_CHECK(!shared.parameters.empty(), name(), " weighting: SharedTensors::parameters is empty; pass the "
                "parameters every task shares (e.g. a MultiTaskModel's trunk()->parameters()).");
  for (const Tensor& p : shared.parameters) {
    TINYDDP_CHECK(p.defined() && p.requires_grad() && is_floating(p.dtype()), name(), " weighting: every shared "
                  "parameter must be a floating tensor that requires grad; found one of shape ", shape_str(p.shape()),
                  " that does not. Leave frozen parameters out of SharedTensors::parameters.");
  }
  shared_ = shared.parameters;
  corrections_.clear();

  // 1. g_i^local on every shared parameter; a parameter task i does not reach gets zeros.
  std::vector<Tensor> flat(T);   // (P) each, the parameters' dtype
  std::vector<double> local_sum;
  {
    std::vector<std::vector<Tensor>> grads(T);
    for (size_t i = 0; i < T; ++i) {
      TINYDDP_CHECK(losses[i].requires_grad(), name(), " weighting: ", detail::task_name(options_, i),
                    "'s loss does not require grad; pass the losses as the model computed them, with their graphs.");
      // retain_graph: the step's backward of total_loss() still needs the graph.
      grads[i] = autograd::grad({losses[i]}, shared_, {}, {.retain_graph = true, .allow_unused = true});
    }
    NoGradGuard no_grad;
    for (size_t i = 0; i < T; ++i) {
      std::vector<Tensor> parts;
      for (size_t k = 0; k < shared_.size(); ++k) {
        const Tensor g = grads[i][k].defined() ? grads[i][k] : zeros_like(shared_[k]);
        parts.push_back(g.contiguous().reshape({-1}));
      }
      flat[i] = cat(parts, 0);
      const std::vector<double> v = as_doubles(flat[i]);
      if (local_sum.empty()) local_sum.assign(v.size(), 0.0);
      for (size_t k = 0; k < v.size(); ++k) local_sum[k] += v[k];
    }
  }

  // 2. The global g_i: one allreduce of all tasks packed (pcgrad.h, step 2).
  Tensor packed;
  {
    NoGradGuard no_grad;
    packed = cat(flat, 0);   // (T P)
  }
  if (options_.allreduce_mean) {
    std::vector<Tensor> buffer{packed};
    options_.allreduce_mean(buffer);
    packed = buffer[0];
  }
  const std::vector<double> all = as_doubles(packed);
  const size_t P = local_sum.size();
  std::vector<std::vector<double>> g(T);
  for (size_t i = 0; i < T; ++i) g[i].assign(all.begin() + i * P, all.begin() + (i + 1) * P);
  for (const std::vector<double>& gi : g) {
    if (detail::all_finite(gi)) continue;
    TINYDDP_CHECK(options_.skip_nonfinite, name(), " weighting: a per-task gradient of the shared parameters is not "
                  "finite at step ", step, ". Check the model, data and learning rate for divergence, or set "
                  "WeightingOptions::skip_nonfinite = true to step with the plain sum of the losses at such steps.");
    rec.skipped = "a per-task gradient of the shared parameters is not finite at step " + std::to_string(step);
    combined_.clear();
    return rec;   // no corrections: total_loss() is the plain sum this step
  }

  // 3. The surgery, in f64, identical on every rank.
  std::vector<std::vector<int>> orders(T);
  for (size_t i = 0; i < T; ++i) orders[i] = surgery::pcgrad_order(num_tasks_, static_cast<int>(i), options_.seed, step);
  surgery::PCGradResult pc = surgery::pcgrad(g, orders);
  std::vector<std::vector<double>> gram(T, std::vector<double>(T, 0.0));
  for (size_t i = 0; i < T; ++i)
    for (size_t j = 0; j < T; ++j)
      for (size_t k = 0; k < P; ++k) gram[i][j] += g[i][k] * g[j][k];
  rec.cosines = surgery::gram_cosines(gram);
  rec.projections = pc.projections;
  rec.updated = true;
  combined_ = pc.combined;

  // 4. c = g^PC - sum_i g_i^local, split back into the parameters' shapes (Note [PCGrad's one backward]).
  NoGradGuard no_grad;
  size_t offset = 0;
  for (const Tensor& p : shared_) {
    const size_t n = static_cast<size_t>(p.numel());
    std::vector<double> c(n);
    for (size_t k = 0; k < n; ++k) c[k] = combined_[offset + k] - local_sum[offset + k];
    corrections_.push_back(from_vector<double>(c, p.shape(), p.dtype()));
    offset += n;
  }
  return rec;
}

Tensor PCGradWeighting::total_loss(const std::vector<Tensor>& losses) {
  detail::loss_values(name(), losses, num_tasks_);
  Tensor total = detail::weighted_sum(losses, weights());
  for (size_t k = 0; k < corrections_.size(); ++k) total = total + (shared_[k] * corrections_[k]).sum();
  return total;
}

}  // namespace tinyddp::models
