// `tinyddp train`: the command line around run_train.
#include <CLI/CLI.hpp>
#include <iostream>
#include <sstream>

#include "apps/tinyddp/cli_checks.h"
#include "apps/tinyddp/cli_errors.h"
#include "apps/tinyddp/commands.h"
#include "apps/tinyddp/train/train.h"
#include "dist/mpi_process_group.h"
#include "dist/trace_file.h"
#include "models/experiments/experiment.h"
#include "models/weighting/loss_weighting.h"

namespace tinyddp::app {

namespace {

struct TrainArgs {
  TrainOptions options;
  double alpha = 0, lr = 0;
  int64_t steps = 0, batch = 0;
  CLI::Option *alpha_opt = nullptr, *lr_opt = nullptr, *steps_opt = nullptr, *batch_opt = nullptr;
  std::string report_steps;
  std::string grad_report_steps;   // --grad-report STEPS
  std::string trace;               // --trace FILE
  std::string dtype = "f32";
  std::string csv, plot;
  bool json = false, quiet = false;
};

std::vector<int64_t> parse_steps(const std::string& text, const std::string& flag) {
  std::vector<int64_t> steps;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    try {
      size_t used = 0;
      steps.push_back(std::stoll(item, &used));
      if (used != item.size()) throw std::invalid_argument(item);
    } catch (const std::exception&) {
      throw UsageError("train: " + flag + " takes comma-separated step numbers like 0,200,800; '" + item +
                       "' is not one.");
    }
  }
  return steps;
}

// The model layer's messages name its C++ options (WeightingOptions::skip_nonfinite); a CLI user sets them with
// flags. Each pair: the C++ wording, the command line's.
std::string with_cli_flags(std::string message) {
  static const std::pair<const char*, const char*> kNames[] = {
      {"set WeightingOptions::skip_nonfinite = true and skip the optimizer step when WeightingStep::skipped is set",
       "pass --skip-nonfinite (train then skips those steps)"},
      {"set WeightingOptions::skip_nonfinite = true", "pass --skip-nonfinite"},
      {"WeightingOptions::freeze_after", "--freeze-after"},
      {"WeightingOptions::epsilon", "GradNorm's epsilon (not a flag)"},
      {"With skip_nonfinite", "With --skip-nonfinite"},
      {"warmup_steps = k", "--warmup-steps k"},
  };
  for (const auto& [cpp, flag] : kNames)
    for (size_t at = message.find(cpp); at != std::string::npos; at = message.find(cpp, at))
      message.replace(at, std::string(cpp).size(), flag);
  return message;
}

int run(TrainArgs& a) {
  TrainOptions o = a.options;
  if (a.alpha_opt->count()) o.alpha = a.alpha;
  if (a.lr_opt->count()) o.lr = a.lr;
  if (a.steps_opt->count()) o.steps = a.steps;
  if (a.batch_opt->count()) o.batch_size = a.batch;
  if (!a.report_steps.empty()) o.report_steps = parse_steps(a.report_steps, "--report-steps");
  if (!a.grad_report_steps.empty()) o.grad_report_steps = parse_steps(a.grad_report_steps, "--grad-report");
  o.dtype = a.dtype == "f64" ? DType::f64 : DType::f32;
  o.progress = !a.quiet;
  if (o.backend == "mpi" && !dist::launched_by_mpirun())
    std::cerr << "tinyddp: note: --backend mpi without mpirun runs a single rank; launch with "
                 "`mpirun -np 2 tinyddp train ... --backend mpi`.\n";
  std::optional<dist::TraceRecording> recording;
  if (!a.trace.empty())
    recording.emplace(a.trace, o.backend,
                      nlohmann::json{{"command", "tinyddp train"}, {"experiment", o.experiment},
                                     {"weighting", o.weighting},
                                     {"options", "ranks " + std::to_string(o.ranks) + ", backend " + o.backend}});
  const TrainResult r = [&] {
    try {
      return run_train(o);
    } catch (const UsageError&) {
      throw;
    } catch (const dist::CollectiveFailedError&) {
      throw;
    } catch (const dist::PeerLeftError&) {
      throw;
    } catch (const Error& e) {   // the run raised (exit code 1): its text with the flags that change it
      throw Error(with_cli_flags(e.what()));
    }
  }();
  if (recording) recording->finish();
  // Under mpirun every rank trained; rank 0 reports and writes the files.
  if (o.backend == "mpi" && dist::mpi_world()->rank() != 0) return 0;
  std::string plot_written;
  if (!a.csv.empty()) write_csv(a.csv, r);
  if (!a.plot.empty()) plot_written = write_plot(a.plot, r);
  if (a.json) {
    std::cout << train_to_json(r).dump(1) << "\n";
  } else {
    print_train_report(std::cout, r);
    print_grad_reports(std::cout, r);
    if (!a.csv.empty()) std::cout << "CSV: " << a.csv << "\n";
    if (!plot_written.empty()) std::cout << "Plot: " << plot_written << "\n";
  }
  if (!plot_written.empty() && plot_written != a.plot)
    std::cerr << "tinyddp: note: gnuplot is not on PATH (Debian: gnuplot-nox); wrote an SVG instead: " << plot_written
              << "\n";
  return r.weights_identical_across_ranks && r.replicas_in_sync ? kExitOk : kExitReplicasDiverged;
}

}  // namespace

void add_train_command(CLI::App& app, int* exit_code) {
  auto a = std::make_shared<TrainArgs>();
  CLI::App* cmd = app.add_subcommand(
      "train", "Train a multi-task experiment with a loss weighting (fixed, uncertainty, GradNorm), optionally on DDP ranks");
  cmd->footer(
      "Experiments: toy2, toy10 (Chen et al. 2018's toy regression, T = 2 with sigma = (1, 100), T = 10), recsys\n"
      "(regression, MSE ~100 at start, + 3-class classification, cross-entropy ~0.6). Examples:\n"
      "  tinyddp train --experiment toy2 --weighting gradnorm\n"
      "  tinyddp train --experiment recsys --weighting gradnorm --update-every 100 --csv r.csv --plot r.png\n"
      "  tinyddp train --experiment toy2 --weighting gradnorm --ranks 2          # 2 DDP ranks as threads\n"
      "  mpirun -np 2 tinyddp train --experiment toy2 --backend mpi             # one process per rank\n"
      "  tinyddp train --experiment recsys --steps 500 --grad-report 0,499      # per-task gradients on W\n"
      "  tinyddp train --experiment toy2 --ranks 2 --steps 5 --trace t.json     # a timeline (Perfetto)\n"
      "Step s in the table: the weights after s iterations; the metric is sum_i L_i(t)/L_i(0) on held-out data.");
  TrainOptions& o = a->options;
  cmd->add_option("--experiment", o.experiment, "toy2, toy10, recsys or conflict2")
      ->check(CLI::IsMember(models::experiments::experiment_names()))
      ->capture_default_str();
  cmd->add_option("--weighting", o.weighting, "fixed, uncertainty, gradnorm, gradnorm-squared, pcgrad or mgda")
      ->check(CLI::IsMember(models::weighting_kinds()))
      ->capture_default_str();
  // Numbers are checked here, at parse time (exit 2, the flag and its range in the message).
  a->alpha_opt = cmd->add_option("--alpha", a->alpha, "GradNorm's alpha (default: 0.12 toy, 1.5 recsys, the paper's)")
                     ->check(at_least(0));
  cmd->add_option("--lr-weights", o.lr_weights, "Learning rate of the task weights (the paper's 0.025)")
      ->check(positive())
      ->capture_default_str();
  cmd->add_option("--weights-optimizer", o.weights_optimizer,
                  "Optimizer of GradNorm's task weights: adam (the paper's NYUv2 setting, with --lr-weights 0.025) "
                  "or sgd (w -= lr dL_grad/dw)")
      ->check(CLI::IsMember({"adam", "sgd"}))
      ->capture_default_str();
  cmd->add_option("--grad-norm", o.grad_norm,
                  "How gradnorm and gradnorm-squared take each task's gradient norm on the shared layer: direct "
                  "(form grad_W L_i) or gram (from the layer's input and output gradient, fewer flops at small "
                  "batches; docs/gradnorm.md)")
      ->check(CLI::IsMember({"direct", "gram"}))
      ->capture_default_str();
  cmd->add_option("--update-every", o.update_every, "Update the task weights every K steps")
      ->check(at_least(1))
      ->capture_default_str();
  a->steps_opt = cmd->add_option("--steps", a->steps, "Training steps (default: the experiment's, 2000)")
                     ->check(at_least(1));
  a->batch_opt = cmd->add_option("--batch", a->batch, "Rows per step over all ranks (default: 100 toy, 256 recsys)")
                     ->check(at_least(1));
  a->lr_opt = cmd->add_option("--lr", a->lr, "The network's learning rate (default 1e-3)")->check(positive());
  cmd->add_option("--optimizer", o.optimizer, "adam or sgd (network)")
      ->check(CLI::IsMember({"adam", "sgd"}))
      ->capture_default_str();
  cmd->add_option("--ranks", o.ranks, "DDP ranks (thread backend)")->check(CLI::Range(1, 64))->capture_default_str();
  cmd->add_option("--backend", o.backend, "thread, or mpi under mpirun")
      ->check(CLI::IsMember({"thread", "mpi"}))
      ->capture_default_str();
  cmd->add_option("--report-steps", a->report_steps, "Steps of the weight table, e.g. 0,200,800,2000");
  cmd->add_option("--grad-report", a->grad_report_steps,
                  "Per-task gradients on the shared layer at these iterations, e.g. 0,500: G_i, w_i, w_i*G_i, "
                  "GradNorm's target, r_i, cosines; flags a task disconnected from the shared layer");
  cmd->add_option("--detach-task", o.detach_tasks,
                  "A constructed fault: this task's head reads the shared trunk through .detach(), which --grad-report "
                  "flags (GradNorm itself refuses such a task: use --weighting fixed or uncertainty)")
      ->delimiter(',');
  cmd->add_option("--trace", a->trace,
                  "Record a Chrome trace (Perfetto, chrome://tracing) in FILE; under mpirun one file per rank, FILE less "
                  ".json + .rank<N>.json (t.json: t.rank0.json, t.rank1.json; join them with trace-merge). "
                  "Every step is recorded: use few --steps");
  cmd->add_option("--history-every", o.history_every, "Record a history row every K steps (0: ~500 rows)")
      ->check(at_least(0));
  cmd->add_option("--ema", o.ema, "EMA factor of GradNorm's loss ratios (0: none)")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--warmup-steps", o.warmup_steps, "Baseline L_i(0) = mean of the first K steps (0: step 0)")
      ->check(at_least(0))
      ->capture_default_str();
  cmd->add_option("--freeze-after", o.freeze_after,
                  "Update the task weights at steps 0..K only, then train on with the weights learned (-1: never); "
                  "steps after K take no per-task gradients, so they cost what a fixed-weight step costs")
      ->check(at_least(-1))
      ->capture_default_str();
  cmd->add_option("--save-initial-params", o.save_initial_params,
                  "Write the network's initial parameters to FILE (tinyddp parameter format; rank 0)");
  cmd->add_flag("--skip-nonfinite", o.skip_nonfinite, "Skip weight updates on NaN/inf losses instead of failing");
  cmd->add_option("--data-seed", o.data_seed, "Seed of the data")->capture_default_str();
  cmd->add_option("--seed", o.model_seed, "Seed of the initial network weights")->capture_default_str();
  cmd->add_option("--dtype", a->dtype, "f32 or f64")->check(CLI::IsMember({"f32", "f64"}))->capture_default_str();
  cmd->add_option("--csv", a->csv, "Write step, weights, losses and loss ratios to this CSV file");
  cmd->add_option("--plot", a->plot, "Plot weights and loss ratios: FILE.png (gnuplot) or FILE.svg");
  cmd->add_flag("--json", a->json, "Print one JSON object (experiment, weighting, steps, weights, history, metric, ...)");
  cmd->add_flag("--quiet", a->quiet, "No progress lines on stderr");
  cmd->add_option("--timeout-ms", o.timeout_ms, "Timeout of every collective")
      ->check(at_least(1))
      ->capture_default_str();
  cmd->callback([a, exit_code] { *exit_code = run(*a); });
}

}  // namespace tinyddp::app
