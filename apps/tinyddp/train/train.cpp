// `tinyddp train`: the training loop, in one process or on each DDP rank.
//
// Note [One DDP backward per iteration]
//   PyTorch users who put GradNorm under DDP typically call backward once per task (or backward of the balance
//   loss after the network's), which raises "Expected to mark a variable ready only once" or, worse, runs and
//   leaves gradients unsynced (`tinyddp repro two-backward`). Here each iteration has exactly one backward
//   through the network: that of sum_i w_i L_i, which DDP averages. GradNorm's per-task gradients on W come
//   from autograd::grad, which captures gradients instead of accumulating them, so no AccumulateGrad runs
//   and no DDP hook fires. Those gradients are local to the rank; WeightingOptions::allreduce_mean (an
//   allreduce then a division by the world size: dist/allreduce_mean.h) turns them into the gradient of the
//   global mean loss, so G_i is the norm of the global gradient, not a mean of local norms. The loss values are
//   averaged the same way. Every rank then computes the same weight update from the same numbers, bit for bit
//   (the thread backend sums in rank order; MPI's allreduce gives every rank the same result), which train
//   checks.
#include "apps/tinyddp/train/train.h"

#include <chrono>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <optional>
#include <sstream>

#include "apps/tinyddp/cli_errors.h"
#include "dist/allreduce_mean.h"
#include "dist/comm_trace.h"
#include "dist/ddp.h"
#include "dist/mpi_process_group.h"
#include "dist/replica_sync.h"
#include "dist/thread_process_group.h"
#include "engine/hash.h"
#include "models/experiments/experiment.h"
#include "models/gradient_surgery/representation_tap.h"
#include "models/nn/serialize.h"
#include "models/optim/adam.h"
#include "models/optim/sgd.h"
#include "models/weighting/grad_report.h"
#include "models/weighting/linear_tap.h"
#include "models/weighting/loss_weighting.h"

namespace tinyddp::app {

namespace {

using models::MultiTaskBatch;
using models::experiments::Experiment;

std::unique_ptr<optim::Optimizer> make_optimizer(const std::string& kind, std::vector<Tensor> params, double lr) {
  if (kind == "adam") return std::make_unique<optim::Adam>(std::move(params), optim::AdamOptions{.lr = lr});
  if (kind == "sgd") return std::make_unique<optim::SGD>(std::move(params), optim::SGDOptions{.lr = lr});
  throw Error("train: unknown optimizer '" + kind + "'; expected adam or sgd.");
}

// What one rank saw; rank 0's becomes the result.
struct RankOutput {
  std::vector<HistoryRow> history;
  std::vector<ReportRow> report;
  std::vector<double> final_weights, initial_test_losses, final_test_losses;
  int64_t weight_updates = 0, clamped_updates = 0;
  std::vector<int64_t> clamped_per_task, last_clamped_step;
  uint64_t weights_hash = kFnv1aBasis;   // over the weights after every iteration
  uint64_t params_hash = 0;              // network parameters at the end
  std::vector<std::string> warnings;
  std::vector<models::GradReport> grad_reports;
  double seconds = 0;
  int64_t skipped_steps = 0, first_skipped = -1;   // --skip-nonfinite: steps without a network update
};

struct Plan {
  int64_t steps, batch_size, history_every;
  double lr, alpha;
  std::vector<int64_t> report_steps;
  std::vector<int64_t> grad_report_steps;   // sorted, each in 0..steps-1
};

bool contains(const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

bool finite_parameters(const std::vector<Tensor>& params) {
  NoGradGuard no_grad;
  for (const Tensor& p : params)
    if (!std::isfinite(p.sum().item())) return false;
  return true;
}

// What is not finite among a step's global losses and the parameters' gradients ("" when all are).
std::string nonfinite(const std::vector<double>& losses, const std::vector<Tensor>& params) {
  for (double v : losses)
    if (!std::isfinite(v)) {
      std::ostringstream os;
      os << "the task losses are not finite (";
      for (size_t i = 0; i < losses.size(); ++i) os << (i ? ", " : "") << losses[i];
      os << ")";
      return os.str();
    }
  NoGradGuard no_grad;
  for (const Tensor& p : params)
    if (p.grad().defined() && !std::isfinite(p.grad().sum().item())) return "a gradient is not finite";
  return "";
}

RankOutput train_rank(const Experiment& e, const TrainOptions& o, const Plan& plan,
                      std::shared_ptr<dist::ProcessGroup> pg) {
  const int world = pg ? pg->size() : 1;
  const int rank = pg ? pg->rank() : 0;
  const bool printer = rank == 0 && o.progress;
  const int tasks = e.num_tasks();
  trace::RankScope trace_rank(rank);   // under --trace, this thread's events belong to this rank
  RankOutput out;

  auto net = e.make_model(o.model_seed);
  if (!o.detach_tasks.empty()) {
    std::vector<bool> detached(tasks, false);
    for (const std::string& name : o.detach_tasks) {
      const auto it = std::find(e.task_names.begin(), e.task_names.end(), name);
      TINYDDP_CHECK(it != e.task_names.end(), "train: --detach-task '", name, "' is not a task of ", e.name,
                    "; its tasks are ", [&] {
                      std::string all;
                      for (const std::string& t : e.task_names) all += (all.empty() ? "" : ", ") + t;
                      return all;
                    }(), ".");
      detached[it - e.task_names.begin()] = true;
    }
    net->set_detached_tasks(detached);
  }
  models::WeightingOptions wo;
  wo.alpha = plan.alpha;
  wo.lr = o.lr_weights;
  wo.weights_optimizer = models::parse_weights_optimizer(o.weights_optimizer);
  wo.update_every = o.update_every;
  wo.ema = o.ema;
  wo.warmup_steps = o.warmup_steps;
  wo.freeze_after = static_cast<int>(o.freeze_after);
  wo.skip_nonfinite = o.skip_nonfinite;
  wo.task_names = e.task_names;
  wo.dtype = e.dtype;   // uncertainty's log-variances, like the losses
  wo.seed = o.model_seed;   // PCGrad's projection orders: the same stream on every rank
  wo.grad_norm = models::parse_grad_norm_method(o.grad_norm);
  std::function<void(std::vector<Tensor>&)> mean_over_ranks;
  if (world > 1) {
    wo.allreduce_mean = mean_over_ranks = dist::allreduce_mean_over(pg);
    wo.allgather_rows = dist::allgather_rows_over(pg);
  }
  auto weighting = models::make_weighting(o.weighting, tasks, wo);
  // MGDA-UB differentiates the trunk's output Z of each forward (a parameterless identity in the trunk).
  const auto tap = weighting->needs_representation() ? models::tap_representation(*net) : nullptr;
  // GradNorm's Gram-matrix norm differentiates at the last shared Linear's output (a forward hook on it).
  const auto layer_tap =
      weighting->needs_layer_io() ? std::make_unique<models::LinearTap>(net->last_shared_layer()) : nullptr;
  const std::vector<Tensor> shared_params = net->trunk()->parameters();

  // The network's parameters and the weighting's own (uncertainty weighting's log-variances) train together
  // and, under DDP, are averaged together by the one backward.
  dist::NamedParameters named = net->named_parameters();
  const std::vector<Tensor> weighting_params = weighting->parameters();
  for (size_t i = 0; i < weighting_params.size(); ++i)
    named.emplace_back("weighting." + std::to_string(i), weighting_params[i]);
  std::vector<Tensor> params;
  for (const auto& [name, p] : named) params.push_back(p);
  std::optional<dist::DistributedDataParallel> ddp;
  if (world > 1) ddp.emplace(named, pg, dist::DDPOptions{.print_warnings = false});
  auto optimizer = make_optimizer(o.optimizer, params, plan.lr);
  if (rank == 0 && !o.save_initial_params.empty()) nn::save_parameters(*net, o.save_initial_params);

  const Tensor w_shared = net->last_shared_weight();
  std::vector<double> loss0;
  const auto start = std::chrono::steady_clock::now();
  const int64_t progress_every = std::max<int64_t>(1, (plan.steps + 9) / 10);

  // Whole-batch means of this rank's shard losses: with equal shards (padded: Experiment::batch), the mean over
  // ranks.
  auto global_values = [&](const std::vector<Tensor>& losses) {
    std::vector<double> v;
    for (const Tensor& l : losses) v.push_back(l.item());
    if (world > 1) {
      std::vector<Tensor> t{from_vector(v, {static_cast<int64_t>(v.size())}, DType::f64)};
      mean_over_ranks(t);
      v = t[0].to_vector<double>();
    }
    return v;
  };
  auto record = [&](int64_t step, const std::vector<double>& weights, const std::vector<double>& losses,
                    const std::vector<double>& grad_norms) {
    if (loss0.empty()) loss0 = losses;
    HistoryRow row{.step = step, .weights = weights, .losses = losses, .grad_norms = grad_norms};
    for (int i = 0; i < tasks; ++i) row.ratios.push_back(losses[i] / loss0[i]);
    out.history.push_back(std::move(row));
  };
  std::vector<bool> at_floor(tasks, false);   // per task: clamped at the latest weight update
  auto report = [&](int64_t step, const std::vector<double>& weights) {
    if (rank != 0) return;   // every replica is the same network: rank 0 evaluates
    ReportRow row{.step = step, .weights = weights, .normalized = normalized(weights),
                  .test_losses = e.test_losses(*net), .at_floor = at_floor};
    if (out.initial_test_losses.empty()) out.initial_test_losses = row.test_losses;
    row.metric = Experiment::metric(row.test_losses, out.initial_test_losses);
    out.report.push_back(std::move(row));
  };

  if (rank == 0) out.initial_test_losses = e.test_losses(*net);
  out.clamped_per_task.assign(tasks, 0);
  out.last_clamped_step.assign(tasks, -1);
  for (int64_t step = 0; step < plan.steps; ++step) {
    // Traces number iterations from 1 like repro's (trace-view --iteration K): step s is iteration s + 1.
    auto iteration_span = trace::span([&] {
      return trace::What{"iteration", "step " + std::to_string(step), {{"iteration", step + 1}, {"step", step}}};
    });
    const MultiTaskBatch b = e.batch(step, plan.batch_size, rank, world);
    // DDP's forward around the model's: its outputs are the task losses (a module may return its losses).
    std::vector<Tensor> losses;
    {
      auto s = trace::span([] { return trace::What{"call", "forward", {}}; });
      losses = ddp ? ddp->forward([&] { return net->task_losses(b); }) : net->task_losses(b);
    }
    // Before any evaluation forward replaces them.
    const Tensor z = tap ? tap->last() : Tensor();
    const Tensor layer_input = layer_tap ? layer_tap->input() : Tensor();
    const Tensor layer_output = layer_tap ? layer_tap->output() : Tensor();
    const std::vector<double> weights_before = weighting->weights();
    const std::vector<double> values = global_values(losses);
    if (contains(plan.report_steps, step)) report(step, weights_before);

    models::WeightingStep ws;
    {
      auto s = trace::span([&] { return trace::What{"call", "weighting observe (" + o.weighting + ")", {}}; });
      ws = weighting->observe_shared(losses,
                                     {.weight = w_shared, .parameters = shared_params, .representation = z,
                                      .layer_input = layer_input, .layer_output = layer_output},
                                     step);
    }
    if (ws.updated) {
      ++out.weight_updates;
      at_floor.assign(tasks, false);
    }
    if (ws.updated && ws.clamped > 0 && static_cast<int>(ws.weights.size()) == tasks) {
      // The clamp raises a weight to min_weight and the renormalization scales every weight alike, so the
      // clamped ones are the ws.clamped smallest after the update.
      std::vector<int> order(tasks);
      for (int i = 0; i < tasks; ++i) order[i] = i;
      std::stable_sort(order.begin(), order.end(), [&](int x, int y) { return ws.weights[x] < ws.weights[y]; });
      for (int k = 0; k < std::min(ws.clamped, tasks); ++k) {
        at_floor[order[k]] = true;
        ++out.clamped_per_task[order[k]];
        out.last_clamped_step[order[k]] = step;
      }
    }
    if (ws.clamped > 0) ++out.clamped_updates;
    if (step % plan.history_every == 0 || contains(plan.report_steps, step))
      record(step, weights_before, values, ws.grad_norms);
    if (contains(plan.grad_report_steps, step)) {
      // After observe(): total_loss() now applies this step's weights, which the report shows.
      auto s = trace::span([] { return trace::What{"call", "grad report", {}}; });
      models::GradReport g = models::grad_report(
          losses, w_shared, models::effective_loss_weights(*weighting, losses), step,
          {.task_names = e.task_names, .baseline = loss0, .alpha = plan.alpha, .allreduce_mean = mean_over_ranks});
      if (rank == 0) out.grad_reports.push_back(std::move(g));
    }

    optimizer->zero_grad();
    {
      auto s = trace::span([] { return trace::What{"call", "backward", {}}; });
      weighting->total_loss(losses).backward();   // the one backward (DDP averages the gradients)
    }
    if (ddp) ddp->check_before_step();
    // A step whose losses or (averaged) gradients are not finite would make the network NaN: an error, or
    // with --skip-nonfinite no network step. Both are the same on every rank (global losses, averaged grads).
    if (const std::string bad = nonfinite(values, params); !bad.empty()) {
      TINYDDP_CHECK(o.skip_nonfinite, "train: the run diverged at step ", step, ": ", bad,
                    ", and a step would make the network's parameters NaN. Lower --lr (", plan.lr,
                    ") or --lr-weights (", o.lr_weights, "), or pass --skip-nonfinite to skip such steps (the "
                    "network and the task weights are then not updated there; the run counts them).");
      if (out.skipped_steps++ == 0) out.first_skipped = step;
      optimizer->zero_grad();
    } else {
      auto s = trace::span([] { return trace::What{"call", "optimizer step", {}}; });
      optimizer->step();
    }
    // Finite losses and gradients can still step the parameters to inf: the model is then lost, skip or not.
    TINYDDP_CHECK(finite_parameters(params), "train: the run diverged at step ", step, ": its update left the "
                  "network's parameters not finite (the losses and gradients were finite; the step overshot). "
                  "Lower --lr (", plan.lr, ")", o.optimizer == "sgd" ? " or use --optimizer adam" : "", ".");
    const std::vector<double> weights_after = weighting->weights();
    out.weights_hash = fnv1a(weights_after.data(), weights_after.size() * sizeof(double), out.weights_hash);

    if (printer && ((step + 1) % progress_every == 0 || step + 1 == plan.steps)) {
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::ostringstream line;
      line << "train " << e.name << "/" << o.weighting << ": step " << step + 1 << "/" << plan.steps << " ("
           << (100 * (step + 1)) / plan.steps << "%)  losses";
      for (double v : values) line << " " << std::setprecision(4) << v;
      line << "  weights";
      for (double w : normalized(weighting->weights())) line << " " << std::fixed << std::setprecision(3) << w;
      line << "  " << std::setprecision(1) << s << " s";
      std::cerr << line.str() << "\n";
    }
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  // Step N: the final weights, and the losses of the next batch (no update).
  out.final_weights = weighting->weights();
  {
    const MultiTaskBatch b = e.batch(plan.steps, plan.batch_size, rank, world);
    std::vector<double> values;
    {
      NoGradGuard no_grad;
      values = global_values(net->task_losses(b));
    }
    record(plan.steps, out.final_weights, values, {});
    if (contains(plan.report_steps, plan.steps)) report(plan.steps, out.final_weights);
  }
  if (rank == 0) out.final_test_losses = e.test_losses(*net);
  out.params_hash = dist::replica_hash(params);
  if (ddp) out.warnings = ddp->warnings();
  if (out.skipped_steps > 0)
    out.warnings.push_back("--skip-nonfinite skipped " + std::to_string(out.skipped_steps) + " of " +
                           std::to_string(plan.steps) + " steps whose losses or gradients were not finite (the "
                           "first at step " + std::to_string(out.first_skipped) + "): the network was not updated "
                           "there. Lower --lr if they are many.");
  return out;
}

}  // namespace

std::vector<double> normalized(const std::vector<double>& w) {
  double s = 0;
  for (double x : w) s += x;
  std::vector<double> n;
  for (double x : w) n.push_back(x / s);
  return n;
}

TrainResult run_train(const TrainOptions& options) {
  TrainOptions o = options;
  const std::vector<std::string> kinds = models::weighting_kinds();
  TINYDDP_CHECK(std::find(kinds.begin(), kinds.end(), o.weighting) != kinds.end(), "train: unknown weighting '",
                o.weighting, "'; expected ", [&] {
                  std::string all;   // "a, b, c or d"
                  for (size_t i = 0; i < kinds.size(); ++i)
                    all += (i == 0 ? "" : i + 1 == kinds.size() ? " or " : ", ") + kinds[i];
                  return all;
                }(), ".");
  TINYDDP_CHECK(o.update_every >= 1, "train: --update-every must be at least 1, got ", o.update_every, ".");
  models::parse_weights_optimizer(o.weights_optimizer);   // throws naming adam and sgd
  const models::GradNormMethod grad_norm = models::parse_grad_norm_method(o.grad_norm);   // throws naming both
  TINYDDP_USAGE_CHECK(grad_norm == models::GradNormMethod::direct || o.weighting.rfind("gradnorm", 0) == 0,
                      "train: --grad-norm ", o.grad_norm, " applies to --weighting gradnorm and gradnorm-squared only "
                      "(got --weighting ", o.weighting, "); drop --grad-norm or use a GradNorm weighting.");
  const Experiment e = models::experiments::make_experiment(
      o.experiment, {.seed = o.data_seed, .dtype = o.dtype, .train_rows = o.train_rows, .test_rows = o.test_rows});

  Plan plan;
  plan.steps = o.steps.value_or(e.defaults.steps);
  plan.batch_size = o.batch_size.value_or(e.defaults.batch_size);
  plan.lr = o.lr.value_or(e.defaults.lr);
  plan.alpha = o.alpha.value_or(e.defaults.alpha);
  TINYDDP_CHECK(plan.steps >= 1, "train: --steps must be at least 1, got ", plan.steps, ".");
  TINYDDP_USAGE_CHECK(plan.batch_size <= e.train.x.size(0), "train: --batch ", plan.batch_size, " is more than the ",
                      e.train.x.size(0), " training rows of ", e.name, "; use at most ", e.train.x.size(0), ".");
  TINYDDP_USAGE_CHECK(o.warmup_steps <= plan.steps, "train: --warmup-steps ", o.warmup_steps, " is more than the run's ",
                      plan.steps, " steps; the baseline L_i(0) averages the first --warmup-steps steps, so use at most ",
                      plan.steps, " (or raise --steps).");
  plan.history_every = o.history_every > 0 ? o.history_every : std::max<int64_t>(1, plan.steps / 500);
  if (o.report_steps.empty()) {
    for (int64_t s : e.defaults.report_steps)
      if (s <= plan.steps) plan.report_steps.push_back(s);
    if (!contains(plan.report_steps, plan.steps)) plan.report_steps.push_back(plan.steps);
  } else {
    for (int64_t s : o.report_steps) {
      TINYDDP_CHECK(s >= 0 && s <= plan.steps, "train: report step ", s, " is outside 0..", plan.steps,
                    " (the run has ", plan.steps, " steps; step ", plan.steps, " means after the last one).");
      if (!contains(plan.report_steps, s)) plan.report_steps.push_back(s);
    }
    std::sort(plan.report_steps.begin(), plan.report_steps.end());
  }
  for (int64_t s : o.grad_report_steps) {
    TINYDDP_CHECK(s >= 0 && s < plan.steps, "train: --grad-report step ", s, " is outside 0..", plan.steps - 1,
                  " (a report looks at the gradients of a training iteration; the run has ", plan.steps,
                  " iterations, 0..", plan.steps - 1, ").");
    if (!contains(plan.grad_report_steps, s)) plan.grad_report_steps.push_back(s);
  }
  std::sort(plan.grad_report_steps.begin(), plan.grad_report_steps.end());
  o.steps = plan.steps;
  o.batch_size = plan.batch_size;
  o.lr = plan.lr;
  o.alpha = plan.alpha;
  o.report_steps = plan.report_steps;
  o.history_every = plan.history_every;
  o.grad_report_steps = plan.grad_report_steps;

  TrainResult r;
  r.alpha = plan.alpha;
  r.steps = plan.steps;
  r.batch_size = plan.batch_size;
  r.lr = plan.lr;
  r.description = e.description;
  r.task_names = e.task_names;

  RankOutput mine;
  if (o.backend == "mpi") {
    TINYDDP_CHECK(dist::mpi_available(), "train: this tinyddp was built without Open MPI; install libopenmpi-dev and "
                                         "openmpi-bin, rebuild, and launch with mpirun -np 2.");
    auto pg = dist::mpi_world();
    pg->set_timeout(std::chrono::milliseconds(o.timeout_ms));
    r.world = pg->size();
    mine = train_rank(e, o, plan, r.world > 1 ? pg : nullptr);
    if (r.world > 1) {
      r.weights_identical_across_ranks = dist::same_on_all_ranks(*pg, mine.weights_hash);
      r.replicas_in_sync = dist::same_on_all_ranks(*pg, mine.params_hash);
    }
  } else if (o.backend == "thread") {
    TINYDDP_CHECK(o.ranks >= 1 && o.ranks <= 64, "train: --ranks must be between 1 and 64, got ", o.ranks, ".");
    r.world = o.ranks;
    if (o.ranks == 1) {
      mine = train_rank(e, o, plan, nullptr);
    } else {
      std::vector<RankOutput> outs(o.ranks);
      const auto errors = dist::ThreadWorld::run(
          o.ranks,
          [&](dist::ProcessGroup& pg) {
            outs[pg.rank()] = train_rank(e, o, plan, std::shared_ptr<dist::ProcessGroup>(&pg, [](auto*) {}));
          },
          std::chrono::milliseconds(o.timeout_ms));
      for (const auto& err : errors)
        if (err) std::rethrow_exception(err);
      mine = outs[0];
      for (const RankOutput& other : outs) {
        r.weights_identical_across_ranks &= other.weights_hash == mine.weights_hash;
        r.replicas_in_sync &= other.params_hash == mine.params_hash;
      }
    }
  } else {
    throw Error("train: unknown backend '" + o.backend + "'; expected thread or mpi.");
  }
  o.ranks = r.world;
  r.options = o;
  r.history = std::move(mine.history);
  r.report = std::move(mine.report);
  r.final_weights = mine.final_weights;
  r.initial_test_losses = mine.initial_test_losses;
  r.final_test_losses = mine.final_test_losses;
  // A network whose held-out losses end non-finite is lost, whatever steps --skip-nonfinite skipped on the way.
  bool finite_end = true;
  for (double v : r.final_test_losses) finite_end &= std::isfinite(v);
  TINYDDP_CHECK(finite_end, "train: the run diverged: the held-out task losses at step ", plan.steps, " are not finite (",
                [&] {
                  std::ostringstream os;
                  for (size_t i = 0; i < r.final_test_losses.size(); ++i) os << (i ? ", " : "") << r.final_test_losses[i];
                  return os.str();
                }(), ")",
                mine.skipped_steps > 0 ? "; --skip-nonfinite skipped " + std::to_string(mine.skipped_steps) + " of " +
                                             std::to_string(plan.steps) + " steps (the first at step " +
                                             std::to_string(mine.first_skipped) + ")"
                                       : std::string(),
                ". Lower --lr (", plan.lr, ").");
  r.metric = r.final_test_losses.empty() ? 0 : Experiment::metric(r.final_test_losses, r.initial_test_losses);
  r.weight_updates = mine.weight_updates;
  r.clamped_updates = mine.clamped_updates;
  r.clamped_per_task = mine.clamped_per_task;
  r.last_clamped_step = mine.last_clamped_step;
  r.warnings = mine.warnings;
  r.grad_reports = std::move(mine.grad_reports);
  r.seconds = mine.seconds;
  return r;
}

}  // namespace tinyddp::app
