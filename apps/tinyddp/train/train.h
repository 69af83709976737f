// `tinyddp train`: a multi-task experiment (models/experiments) trained with a loss weighting
// (models/weighting), in one process or on N DDP ranks, deterministically.
//
//   TrainOptions o{.experiment = "recsys", .weighting = "gradnorm", .update_every = 100};
//   TrainResult r = run_train(o);              // history, the weights at the report steps, the test metric
//   print_train_report(std::cout, r);          // the weight table
//   write_csv("recsys.csv", r);  write_plot("recsys.png", r);  std::cout << train_to_json(r).dump(1);
//   o.grad_report_steps = {0, 500};  ...  print_grad_reports(std::cout, r);   // per-task gradients on W
//
// One iteration on each rank (Note [One DDP backward per iteration] in train.cpp):
//   outputs = ddp.forward(net.forward_tasks(shard))  ->  L_i = task losses (shard means)
//   weighting.observe(L, W, step)      GradNorm: autograd::grad of each L_i w.r.t. W only (no DDP hook fires),
//                                      averaged over ranks by WeightingOptions::allreduce_mean; w update
//   [grad-report steps] models::grad_report(L, W, d total/d L, ...): the same kind of autograd::grad, averaged
//                                      over ranks the same way, on every rank; rank 0's is the result
//   weighting.total_loss(L).backward() the one DDP backward: network gradients averaged over ranks
//   optimizer.step()
//
// Step numbering: "the weights at step s" are the weights after s iterations (step 0: the initial weights;
// step N after N iterations: the final ones); "the losses at step s" are the training losses of iteration s,
// the mean over the whole batch (all ranks), for s = N on the next batch without an update.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/core/dtype.h"
#include "models/weighting/grad_report.h"

namespace tinyddp::app {

struct TrainOptions {
  std::string experiment = "toy2";        // toy2 | toy10 | recsys
  std::string weighting = "gradnorm";     // fixed | uncertainty | gradnorm | gradnorm-squared | pcgrad | mgda
  std::optional<double> alpha;            // default: the experiment's (0.12 toy, 1.5 recsys: the paper's)
  double lr_weights = 0.025;              // the task weights' learning rate (the paper's, with Adam)
  std::string weights_optimizer = "adam"; // adam | sgd: the task weights' optimizer (models::WeightsOptimizer)
  std::string grad_norm = "direct";       // direct | gram: how GradNorm takes ||grad_W L_i|| (models::GradNormMethod)
  int update_every = 1;
  std::optional<int64_t> steps;           // default: the experiment's (2000)
  std::optional<int64_t> batch_size;      // rows per step over all ranks; default: the experiment's
  std::optional<double> lr;               // the network's learning rate; default: the experiment's
  std::string optimizer = "adam";         // adam | sgd
  int ranks = 1;                          // thread backend: ranks as threads; mpi: from mpirun
  std::string backend = "thread";         // thread | mpi
  std::vector<int64_t> report_steps;      // empty: the experiment's {0, 200, 800, 2000} up to steps, and steps
  int64_t history_every = 0;              // 0: about 500 rows over the run
  std::vector<int64_t> grad_report_steps; // iterations (0..steps-1) that get a per-task gradient report
  std::vector<std::string> detach_tasks;  // a constructed fault: these tasks' heads read the trunk through
                                          // .detach() (MultiTaskModel::set_detached_tasks), for --grad-report
  uint64_t data_seed = 0;
  uint64_t model_seed = 1;
  DType dtype = DType::f32;
  // More of WeightingOptions (models/weighting/loss_weighting.h).
  double ema = 0.0;
  int warmup_steps = 0;
  int64_t freeze_after = -1;
  bool skip_nonfinite = false;
  bool progress = true;                   // a line on stderr about every 10% (rank 0)
  int64_t train_rows = 0, test_rows = 0;  // 0: the experiment's (tests use fewer)
  int timeout_ms = 60000;                 // of every collective
  std::string save_initial_params;        // non-empty: rank 0 writes the network's initial parameters (after
                                          // DDP's broadcast) here, in nn::save_parameters' format
};

struct HistoryRow {
  int64_t step = 0;
  std::vector<double> weights;      // raw, after `step` iterations
  std::vector<double> losses;       // training losses at `step` (whole-batch means)
  std::vector<double> ratios;       // losses / losses at step 0
  std::vector<double> grad_norms;   // G_i that iteration `step` measured (GradNorm variants; else empty)
};

struct ReportRow {
  int64_t step = 0;
  std::vector<double> weights;         // raw
  std::vector<double> normalized;      // weights / sum(weights)
  std::vector<double> test_losses;     // held-out
  double metric = 0;                   // sum_i test L_i / test L_i(0)
  std::vector<bool> at_floor;          // per task: GradNorm's clamp raised this weight to min_weight at the
                                       // latest update before `step` (then renormalized with the others)
};

struct TrainResult {
  TrainOptions options;                 // as run: every default resolved
  double alpha = 0;
  int64_t steps = 0, batch_size = 0;
  double lr = 0;
  int world = 1;                        // ranks that trained
  std::string description;              // the experiment's data, one line
  std::vector<std::string> task_names;
  std::vector<HistoryRow> history;
  std::vector<ReportRow> report;
  std::vector<double> final_weights;
  std::vector<double> initial_test_losses, final_test_losses;
  double metric = 0;                    // at the last step
  int64_t weight_updates = 0;           // iterations whose observe() updated the weights
  int64_t clamped_updates = 0;          // of those, the updates where the clamp raised a weight to min_weight
  std::vector<int64_t> clamped_per_task;   // per task: the updates that clamped its weight (GradNorm variants)
  std::vector<int64_t> last_clamped_step;  // per task: the latest such update's step; -1: never
  bool weights_identical_across_ranks = true;   // bitwise, after every iteration
  bool replicas_in_sync = true;         // network parameters bitwise equal on every rank at the end
  std::vector<std::string> warnings;    // DDP's (rank 0), e.g. gradients that were never averaged
  // At each grad_report_steps iteration: G_i, w_i, targets, r_i, cosines on W (models/weighting/grad_report.h),
  // computed from the global (rank-averaged) gradients, so the same on every rank; baseline L_i(0) = step 0's.
  std::vector<models::GradReport> grad_reports;
  double seconds = 0;                   // wall time of the training loop (not in the JSON: runs compare equal)
};

TrainResult run_train(const TrainOptions& options);

// Weights scaled to sum 1, as the tables, the JSON and the plot show them.
std::vector<double> normalized(const std::vector<double>& weights);

nlohmann::json train_to_json(const TrainResult& result);
void print_train_report(std::ostream& out, const TrainResult& result);
// The per-task gradient tables (nothing when no report was asked for).
void print_grad_reports(std::ostream& out, const TrainResult& result);
nlohmann::json grad_report_to_json(const models::GradReport& report);
void write_csv(const std::string& path, const TrainResult& result);
// PNG through gnuplot when the path ends in .png and gnuplot is on PATH; otherwise an SVG drawn here (a .png
// path then becomes .svg). Returns the path written.
std::string write_plot(const std::string& path, const TrainResult& result);
std::string render_svg(const TrainResult& result);

}  // namespace tinyddp::app
