// Per-task gradient diagnostics on the shared layer (grad_report.h has the columns and the flags).
#include "models/weighting/grad_report.h"

#include <algorithm>
#include <cmath>

#include "models/weighting/weighting_util.h"

namespace tinyddp::models {

namespace {

// The likely causes printed with each flag, most common first.
const std::vector<std::string> kDisconnectedCauses{
    "a .detach() (a stop-gradient) between the shared trunk and this task's head",
    "the head or the loss computed under NoGradGuard",
    "the head does not read the shared trunk (it reads the raw input or another branch)"};
const std::vector<std::string> kNoGraphCauses{
    "the task's loss has no graph at all: it was .detach()ed or computed under NoGradGuard (a logged value passed "
    "in place of the loss?)"};
const std::vector<std::string> kZeroGradCauses{
    "the head's input is masked to 0 for every row of the batch (a task mask, a dropped task)",
    "every trunk unit the head reads is a dead ReLU on this batch",
    "the head's weights are 0 (a zero-initialized or frozen-at-zero head)",
    "the task's loss is at its minimum (zero error on this batch)"};
const std::vector<std::string> kNotInLossCauses{
    "the task is left out of the loss the step backpropagates (missing from the sum)",
    "its weight is 0 (a fixed weight of 0, or a weighting that drove it to 0)"};

double dot_f64(const Tensor& a, const Tensor& b) { return (a * b).sum().item<double>(); }

}  // namespace

std::vector<size_t> GradReport::flagged() const {
  std::vector<size_t> out;
  for (size_t i = 0; i < tasks.size(); ++i)
    if (tasks[i].status != "ok") out.push_back(i);
  return out;
}

GradReport grad_report(const std::vector<Tensor>& losses, const Tensor& shared_weight,
                       const std::vector<double>& weights, int64_t step, const GradReportOptions& options) {
  const size_t T = losses.size();
  TINYDDP_CHECK(T >= 1, "grad_report: no task losses given; pass one scalar loss per task.");
  TINYDDP_CHECK(weights.size() == T, "grad_report: ", T, " task losses but ", weights.size(),
                " weights; pass one weight per task (effective_loss_weights()).");
  TINYDDP_CHECK(options.task_names.empty() || options.task_names.size() == T, "grad_report: ", T,
                " task losses but ", options.task_names.size(), " task names; give one name per task or none.");
  TINYDDP_CHECK(options.baseline.empty() || options.baseline.size() == T, "grad_report: ", T, " task losses but ",
                options.baseline.size(), " baseline losses L_i(0); give one per task or none.");
  TINYDDP_CHECK(shared_weight.defined() && shared_weight.requires_grad() && is_floating(shared_weight.dtype()),
                "grad_report: the shared weight W must be a floating tensor that requires grad (the weight of the "
                "last layer all tasks share, e.g. a MultiTaskModel's last_shared_weight()).");

  GradReport report;
  report.step = step;
  report.alpha = options.alpha;
  report.shared_shape = shared_weight.shape();
  report.tasks.resize(T);

  // 1. Per-task gradients on W; an absent one (no path to W on this rank) is zeros so that every rank runs
  //    the same collectives. values = (L_0..L_{T-1}, present_0..present_{T-1}), averaged over ranks below.
  std::vector<Tensor> grads(T);
  std::vector<double> values(2 * T, 0.0);
  std::vector<bool> has_graph(T, true);
  for (size_t i = 0; i < T; ++i) {
    TINYDDP_CHECK(losses[i].defined() && losses[i].numel() == 1 && is_floating(losses[i].dtype()),
                  "grad_report: task loss ", i, " must be a floating scalar (a mean-reduced loss).");
    values[i] = losses[i].item<double>();
    if (losses[i].requires_grad()) {
      // retain_graph: the step's backward still needs this graph; autograd::grad accumulates nothing.
      grads[i] = autograd::grad({losses[i]}, {shared_weight}, {}, {.retain_graph = true, .allow_unused = true})[0];
    } else {
      has_graph[i] = false;
    }
    values[T + i] = grads[i].defined() ? 1.0 : 0.0;
    if (!grads[i].defined()) grads[i] = zeros(shared_weight.shape(), shared_weight.dtype());
    grads[i] = grads[i].detach().contiguous();
  }
  if (options.allreduce_mean) {
    std::vector<Tensor> v{from_vector<double>(values, {static_cast<int64_t>(2 * T)}, DType::f64)};
    options.allreduce_mean(v);
    values = v[0].to_vector<double>();
    options.allreduce_mean(grads);   // the global g_i: the mean over ranks of the shard gradients
  }
  for (Tensor& g : grads) g = g.to(DType::f64);

  // 2. Norms, ratios, targets.
  std::vector<double> baseline = options.baseline.empty() ? std::vector<double>(values.begin(), values.begin() + T)
                                                          : options.baseline;
  double mean_inverse_rate = 0, mean_weighted = 0, max_norm = 0;
  for (size_t i = 0; i < T; ++i) {
    TaskGradRow& row = report.tasks[i];
    row.name = i < options.task_names.size() ? options.task_names[i] : "task" + std::to_string(i);
    row.loss = values[i];
    row.reaches_shared = values[T + i] > 0;
    row.inverse_rate = baseline[i] > 0 ? row.loss / baseline[i] : NAN;
    row.grad_norm = std::sqrt(dot_f64(grads[i], grads[i]));
    row.weight = weights[i];
    row.weighted_grad_norm = std::abs(weights[i]) * row.grad_norm;
    mean_inverse_rate += row.inverse_rate;
    mean_weighted += row.weighted_grad_norm;
    max_norm = std::max(max_norm, row.grad_norm);
  }
  mean_inverse_rate /= static_cast<double>(T);
  mean_weighted /= static_cast<double>(T);
  for (TaskGradRow& row : report.tasks) {
    row.ratio = mean_inverse_rate > 0 ? row.inverse_rate / mean_inverse_rate : NAN;
    row.target = mean_weighted * std::pow(row.ratio, options.alpha);
  }

  // 3. Flags, most fundamental first: no path to W, then a zero gradient, then a zero weight.
  for (size_t i = 0; i < T; ++i) {
    TaskGradRow& row = report.tasks[i];
    const bool zero = row.grad_norm == 0 || row.grad_norm < kZeroGradRelative * max_norm;
    if (!row.reaches_shared) {
      row.status = "disconnected";
      row.causes = has_graph[i] ? kDisconnectedCauses : kNoGraphCauses;
      row.grad_norm = row.weighted_grad_norm = 0;
    } else if (zero) {
      row.status = "zero gradient";
      row.causes = kZeroGradCauses;
    } else if (row.weight == 0) {
      row.status = "not in the loss";
      row.causes = kNotInLossCauses;
    }
  }

  // 4. Cosines of the unweighted gradients (positive weights do not change them).
  report.cosine.assign(T, std::vector<std::optional<double>>(T));
  for (size_t i = 0; i < T; ++i) {
    for (size_t j = i; j < T; ++j) {
      const double ni = report.tasks[i].grad_norm, nj = report.tasks[j].grad_norm;
      if (report.tasks[i].status == "zero gradient" || report.tasks[j].status == "zero gradient" || ni == 0 ||
          nj == 0)
        continue;
      const double c = i == j ? 1.0 : std::clamp(dot_f64(grads[i], grads[j]) / (ni * nj), -1.0, 1.0);
      report.cosine[i][j] = report.cosine[j][i] = c;
    }
  }
  return report;
}

std::vector<double> effective_loss_weights(LossWeighting& weighting, const std::vector<Tensor>& losses) {
  AutoGradMode grad_on(true);
  std::vector<Tensor> leaves;
  for (const Tensor& l : losses) {
    TINYDDP_CHECK(l.defined() && l.numel() == 1 && is_floating(l.dtype()),
                  "effective_loss_weights: every task loss must be a floating scalar.");
    leaves.push_back(full({}, l.item<double>(), l.dtype()).requires_grad_());
  }
  const Tensor total = weighting.total_loss(leaves);
  const std::vector<Tensor> g = autograd::grad({total}, leaves, {}, {.allow_unused = true});
  std::vector<double> w;
  for (const Tensor& gi : g) w.push_back(gi.defined() ? gi.item<double>() : 0.0);
  return w;
}

}  // namespace tinyddp::models
