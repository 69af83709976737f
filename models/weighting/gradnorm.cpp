// GradNorm's shared bookkeeping (GradNormBase) and the paper's variant (GradNormWeighting). The squared
// variant is in gradnorm_squared.cpp. Math and step semantics: gradnorm.h.
#include "models/weighting/gradnorm.h"

#include <algorithm>
#include <cmath>

#include "models/optim/adam.h"
#include "models/optim/sgd.h"
#include "models/weighting/weighting_util.h"

namespace tinyddp::models {

namespace {

// The fix offered with every nonfinite/undefined-ratio error.
constexpr const char* kSkipHint =
    " Or set WeightingOptions::skip_nonfinite = true to skip the weight update at such steps (the weights "
    "then stay as they are).";

Tensor vector_tensor(const std::vector<double>& values, DType dtype) {
  return from_vector<double>(values, {static_cast<int64_t>(values.size())}, dtype);
}

}  // namespace

BalanceGradient gradnorm_balance(const std::vector<double>& w, const std::vector<double>& task_grad_norms,
                                 const std::vector<double>& targets) {
  TINYDDP_INTERNAL_ASSERT(w.size() == task_grad_norms.size() && w.size() == targets.size());
  AutoGradMode grad_on(true);   // observe() may run under NoGradGuard; this tiny graph must be recorded
  Tensor w_leaf = vector_tensor(w, DType::f64).requires_grad_();   // (T), private to this computation
  Tensor n = vector_tensor(task_grad_norms, DType::f64);           // (T), ||grad_W L_i||, constant
  Tensor target = vector_tensor(targets, DType::f64);              // (T), mean(G) r^alpha, constant
  Tensor G = w_leaf * n;                                           // G_i = ||grad_W w_i L_i|| = w_i n_i
  Tensor loss = abs(G - target).sum();                             // L_grad (Eq. 2)
  Tensor grad_w = autograd::grad({loss}, {w_leaf})[0];
  return {loss.item<double>(), grad_w.to_vector<double>()};
}

BalanceGradient gradnorm_balance_closed_form(const std::vector<double>& w, const std::vector<double>& task_grad_norms,
                                             const std::vector<double>& targets) {
  TINYDDP_INTERNAL_ASSERT(w.size() == task_grad_norms.size() && w.size() == targets.size());
  BalanceGradient out;
  out.grad_w.resize(w.size());
  for (size_t i = 0; i < w.size(); ++i) {
    const double diff = w[i] * task_grad_norms[i] - targets[i];
    out.loss += std::abs(diff);
    out.grad_w[i] = static_cast<double>((diff > 0) - (diff < 0)) * task_grad_norms[i];   // sign(0) = 0, as abs'
  }
  return out;
}

// ---- GradNormBase ----

GradNormBase::GradNormBase(const std::string& kind, int num_tasks, WeightingOptions options)
    : options_(std::move(options)), num_tasks_(num_tasks) {
  weights_ = detail::checked_initial_weights(kind, num_tasks, options_);
  loss_weights_ = weights_;
  w_param_ = vector_tensor(weights_, DType::f64).requires_grad_();
  if (options_.weights_optimizer == WeightsOptimizer::adam) {
    w_optimizer_ = std::make_unique<optim::Adam>(std::vector<Tensor>{w_param_}, optim::AdamOptions{.lr = options_.lr});
  } else {
    w_optimizer_ = std::make_unique<optim::SGD>(std::vector<Tensor>{w_param_}, optim::SGDOptions{.lr = options_.lr});
  }
}

int GradNormBase::step_weights(const std::vector<double>& grad_w) {
  w_param_.set_grad(vector_tensor(grad_w, DType::f64));
  w_optimizer_->step();
  std::vector<double> w = w_param_.to_vector<double>();
  const int clamped = detail::clamp_and_renormalize(w, options_.min_weight);
  {
    NoGradGuard no_grad;
    w_param_.copy_(vector_tensor(w, DType::f64));
  }
  weights_ = w;
  return clamped;
}

WeightingStep GradNormBase::skip_or_throw(WeightingStep rec, const std::string& what, const std::string& fix) const {
  TINYDDP_CHECK(options_.skip_nonfinite, name(), " weighting: ", what, ". ", fix, kSkipHint);
  rec.skipped = what;
  return rec;
}

WeightingStep GradNormBase::observe(const std::vector<Tensor>& losses, const Tensor& shared_weight, int64_t step) {
  return observe_shared(losses, SharedTensors{.weight = shared_weight}, step);
}

WeightingStep GradNormBase::observe_shared(const std::vector<Tensor>& losses, const SharedTensors& shared,
                                           int64_t step) {
  const Tensor& shared_weight = shared.weight;
  const size_t T = static_cast<size_t>(num_tasks_);
  WeightingStep rec;
  rec.step = step;
  loss_weights_ = weights_;   // w(t): what total_loss() applies this step, whatever the update does
  rec.weights = weights_;

  // 1. Loss values, averaged over ranks (every rank then takes the same decisions below).
  std::vector<double> L = detail::loss_values(name(), losses, num_tasks_);
  if (options_.allreduce_mean) {
    std::vector<Tensor> buffer{vector_tensor(L, DType::f64)};
    options_.allreduce_mean(buffer);
    L = buffer[0].to_vector<double>();
  }
  rec.losses = L;
  if (!detail::all_finite(L)) {
    return skip_or_throw(rec, "a task loss is not finite at step " + std::to_string(step) + " (losses " +
                                  detail::format_values(L) + ")",
                         "Check the model, data and learning rate for divergence.");
  }
  for (size_t i = 0; i < T; ++i) {
    TINYDDP_CHECK(L[i] >= 0.0, name(), " weighting: ", detail::task_name(options_, i), "'s loss is negative (", L[i],
                  ") at step ", step, "; GradNorm's inverse training rate L_i(t)/L_i(0) needs nonnegative losses. "
                  "Weigh a nonnegative loss (add regularizers that can go negative outside the weighting).");
  }

  // 2. The baseline L_i(0): the warm-up mean, or this step's losses.
  if (step < options_.warmup_steps) {
    if (warmup_sum_.empty()) warmup_sum_.assign(T, 0.0);
    for (size_t i = 0; i < T; ++i) warmup_sum_[i] += L[i];
    ++warmup_count_;
    return rec;
  }
  if (baseline_.empty()) {
    std::vector<double> b = L;
    if (warmup_count_ > 0) {
      for (size_t i = 0; i < T; ++i) b[i] = warmup_sum_[i] / warmup_count_;
    }
    warmup_sum_.clear();
    warmup_count_ = 0;
    for (size_t i = 0; i < T; ++i) {
      if (!(b[i] > options_.epsilon)) {
        return skip_or_throw(
            rec,
            "the baseline loss L_i(0) = " + std::to_string(b[i]) + " of " + detail::task_name(options_, i) +
                " is not above epsilon = " + std::to_string(options_.epsilon) +
                " at step " + std::to_string(step) + ", so the inverse training rate L_i(t)/L_i(0) is undefined",
            "Take the baseline where every task has a clearly positive loss (warmup_steps = k uses the mean over "
            "steps 0..k-1), or lower WeightingOptions::epsilon if such small losses are meaningful. With "
            "skip_nonfinite the baseline is re-taken at the next step.");
      }
    }
    baseline_ = b;
  }
  rec.baseline = baseline_;

  // 3. Loss ratios r_i, then their EMA.
  std::vector<double> inverse_rates(T);
  for (size_t i = 0; i < T; ++i) inverse_rates[i] = L[i] / baseline_[i];
  std::vector<double> r;
  if (std::string error = ratios(inverse_rates, r); !error.empty()) {
    return skip_or_throw(rec, error + " at step " + std::to_string(step),
                         "This happens when every task's loss has reached 0; stop updating the weights "
                         "(WeightingOptions::freeze_after) before that.");
  }
  if (options_.ema > 0.0) {
    if (ema_ratios_.empty()) {
      ema_ratios_ = r;
    } else {
      for (size_t i = 0; i < T; ++i) ema_ratios_[i] = options_.ema * ema_ratios_[i] + (1.0 - options_.ema) * r[i];
    }
    r = ema_ratios_;
  }
  rec.loss_ratios = r;

  // 4. Only update steps pay for per-task gradients.
  const bool update = step % options_.update_every == 0 && (options_.freeze_after < 0 || step <= options_.freeze_after);
  if (!update) return rec;

  TINYDDP_CHECK(shared_weight.defined() && shared_weight.requires_grad() && is_floating(shared_weight.dtype()), name(),
                " weighting: the shared weight W must be a floating tensor that requires grad (the weight of the last "
                "layer all tasks share, e.g. a MultiTaskModel's last_shared_weight()).");
  for (size_t i = 0; i < T; ++i) {
    TINYDDP_CHECK(losses[i].requires_grad(), name(), " weighting: ", detail::task_name(options_, i),
                  "'s loss does not require grad; pass the losses as the model computed them, with their graphs "
                  "(not .detach()ed or computed under NoGradGuard).");
  }
  TaskGradients g;
  if (options_.grad_norm == GradNormMethod::gram) {
    g = gram_task_gradients(losses, shared);
  } else {
    g.grads.resize(T);
    for (size_t i = 0; i < T; ++i) {
      // retain_graph: the network's backward of total_loss() still needs this graph.
      g.grads[i] = autograd::grad({losses[i]}, {shared_weight}, {}, {.retain_graph = true, .allow_unused = true})[0];
      TINYDDP_CHECK(g.grads[i].defined(), name(), " weighting: ", detail::task_name(options_, i),
                    "'s loss does not depend on the shared weight W of shape ", shape_str(shared_weight.shape()),
                    ". GradNorm measures every task's gradient on one layer all tasks share: pass the weight of "
                    "the last shared layer (e.g. last_shared_weight()), not a task head's.");
    }
    if (options_.allreduce_mean) {
      for (Tensor& gi : g.grads) gi = gi.contiguous();
      options_.allreduce_mean(g.grads);   // the global g_i, so G_i is the norm of the global gradient
    }
    // One fused pass per g_i (no squared copy of it): sqrt of the sum of squares, in g_i's dtype.
    for (const Tensor& gi : g.grads) g.norms.push_back(multi_tensor_norm({gi.contiguous()}).item<double>());
  }

  BalanceGradient bg;
  if (std::string error = balance(losses, shared_weight, g, r, rec, bg); !error.empty()) {
    return skip_or_throw(rec, error + " at step " + std::to_string(step),
                         "Check the model and learning rate for divergence.");
  }
  if (!detail::all_finite(bg.grad_w) || !std::isfinite(bg.loss)) {
    return skip_or_throw(rec, "the balance loss's gradient w.r.t. the weights is not finite at step " +
                                  std::to_string(step) + " (" + detail::format_values(bg.grad_w) + ")",
                         "Check the model and learning rate for divergence.");
  }
  rec.balance_loss = bg.loss;
  rec.weight_grads = bg.grad_w;

  // 5. The optimizer's step on w only, clamp, renormalize to sum T.
  rec.clamped = step_weights(bg.grad_w);
  rec.weights = weights_;
  rec.updated = true;
  return rec;
}

TaskGradients GradNormBase::gram_task_gradients(const std::vector<Tensor>& losses, const SharedTensors& shared) const {
  const size_t T = losses.size();
  const Tensor& W = shared.weight;
  const Tensor& h = shared.layer_input;
  const Tensor& z = shared.layer_output;
  const char* fix = " Capture W's layer with a LinearTap (models/weighting/linear_tap.h) before the forward and pass "
                    "observe_shared(losses, {.weight = W, .layer_input = tap.input(), .layer_output = tap.output()}, "
                    "step), or use grad_norm = direct.";
  TINYDDP_CHECK(h.defined() && z.defined(), name(), " weighting with grad_norm = gram needs the input and the output "
                "of W's layer in this forward (SharedTensors::layer_input and layer_output); ",
                h.defined() ? "layer_output" : "layer_input", " is undefined.", fix);
  TINYDDP_CHECK(W.dim() == 2 && h.dim() >= 1 && z.dim() >= 1 && h.size(-1) == W.size(1) && z.size(-1) == W.size(0) &&
                    h.numel() / W.size(1) == z.numel() / W.size(0),
                name(), " weighting with grad_norm = gram: expected the layer's input (..., I) and output (..., O) "
                "with the same leading dims for W (O, I) = ", shape_str(W.shape()), "; got input ",
                shape_str(h.shape()), " and output ", shape_str(z.shape()), ". Pass the tensors of W's own layer.",
                fix);
  TINYDDP_CHECK(z.requires_grad(), name(), " weighting with grad_norm = gram: the layer's output does not require "
                "grad, so no loss can be differentiated at it; pass it as the forward computed it (not .detach()ed).");
  const int64_t I = W.size(1), O = W.size(0);

  // Row-wise [H | D_0 | ... | D_{T-1}], (M, I + T O), in the layer's dtype.
  std::vector<Tensor> blocks{h.detach().reshape({-1, I})};
  for (size_t i = 0; i < T; ++i) {
    // retain_graph: the network's backward of total_loss() still needs this graph.
    Tensor D = autograd::grad({losses[i]}, {z}, {}, {.retain_graph = true, .allow_unused = true})[0];
    TINYDDP_CHECK(D.defined(), name(), " weighting: ", detail::task_name(options_, i), "'s loss does not depend on "
                  "the output of the shared layer W of shape ", shape_str(W.shape()), ". GradNorm measures every "
                  "task's gradient on one layer all tasks share: pass that layer's output.");
    blocks.push_back(D.reshape({-1, O}).to(h.dtype()));
  }
  NoGradGuard no_grad;
  Tensor rows = cat(blocks, 1);
  const int64_t local_rows = rows.size(0);
  TINYDDP_CHECK(local_rows > 0, name(), " weighting with grad_norm = gram: W's layer saw no rows in this forward "
                "(input ", shape_str(h.shape()), "); give every step a batch of at least one row.");
  if (options_.allgather_rows) {
    const int64_t width = rows.size(1);
    rows = options_.allgather_rows(rows);   // every rank's rows, rank order
    TINYDDP_CHECK(rows.dim() == 2 && rows.size(1) == width && rows.size(0) % local_rows == 0, name(), " weighting: "
                  "WeightingOptions::allgather_rows returned ", shape_str(rows.shape()), " for this rank's (",
                  local_rows, ", ", width, "); it must return every rank's rows stacked along dim 0 (e.g. "
                  "dist::allgather_rows_over(pg)).");
  }
  const double ranks = static_cast<double>(rows.size(0) / local_rows);   // N: the gradient is the mean over ranks

  // The Gram matrices in the layer's dtype, as direct forms g_i in it; their inner products in f64.
  const Tensor H = rows.narrow(1, 0, I).contiguous();
  const Tensor K = mm(H, t(H)).to(DType::f64);   // H H^T, shared by every task
  std::vector<Tensor> D(T);   // D_i of every rank, (N M, O), each taken out of `rows` once
  for (size_t i = 0; i < T; ++i) D[i] = rows.narrow(1, I + static_cast<int64_t>(i) * O, O).contiguous();
  auto inner = [&](size_t i, size_t j) {   // <g_i, g_j>
    return (mm(D[i], t(D[j])).to(DType::f64) * K).sum().item<double>() / (ranks * ranks);
  };
  TaskGradients g;
  g.norms.resize(T);
  if (needs_cross_terms()) g.inner.assign(T * T, 0.0);
  for (size_t i = 0; i < T; ++i) {
    const double squared = inner(i, i);
    g.norms[i] = std::sqrt(std::max(squared, 0.0));   // >= 0 up to rounding
    if (g.inner.empty()) continue;
    g.inner[i * T + i] = squared;
    for (size_t j = i + 1; j < T; ++j) g.inner[i * T + j] = g.inner[j * T + i] = inner(i, j);
  }
  return g;
}

Tensor GradNormBase::total_loss(const std::vector<Tensor>& losses) {
  TINYDDP_CHECK(losses.size() == static_cast<size_t>(num_tasks_), name(), " weighting: expected ", num_tasks_,
                " task losses, got ", losses.size(), ".");
  return detail::weighted_sum(losses, loss_weights_);
}

// ---- the paper ----

GradNormWeighting::GradNormWeighting(int num_tasks, WeightingOptions options)
    : GradNormBase("gradnorm", num_tasks, std::move(options)) {}

std::string GradNormWeighting::ratios(const std::vector<double>& inverse_rates, std::vector<double>& r) const {
  double mean = 0.0;
  for (double v : inverse_rates) mean += v;
  mean /= static_cast<double>(inverse_rates.size());
  if (!(mean > options_.epsilon)) {
    return "the mean inverse training rate mean_i L_i(t)/L_i(0) = " + std::to_string(mean) +
           " is not above epsilon = " + std::to_string(options_.epsilon) + ", so r_i = L~_i / mean L~ is undefined";
  }
  r.resize(inverse_rates.size());
  for (size_t i = 0; i < r.size(); ++i) r[i] = inverse_rates[i] / mean;
  return {};
}

std::string GradNormWeighting::balance(const std::vector<Tensor>& /*losses*/, const Tensor& /*shared_weight*/,
                                       const TaskGradients& g, const std::vector<double>& r, WeightingStep& rec,
                                       BalanceGradient& out) {
  const std::vector<double>& norms = g.norms;
  const size_t T = norms.size();
  const std::vector<double> w = weights();
  std::vector<double> G(T), targets(T);
  double G_mean = 0.0;
  for (size_t i = 0; i < T; ++i) {
    G[i] = w[i] * norms[i];   // ||grad_W w_i L_i||
    G_mean += G[i];
  }
  G_mean /= static_cast<double>(T);
  for (size_t i = 0; i < T; ++i) targets[i] = G_mean * std::pow(r[i], options_.alpha);   // held constant
  rec.grad_norms = G;
  rec.targets = targets;
  if (!detail::all_finite(norms)) {
    return "a per-task gradient norm ||grad_W L_i|| is not finite (" + detail::format_values(norms) + ")";
  }
  out = gradnorm_balance(w, norms, targets);
  return {};
}

}  // namespace tinyddp::models
