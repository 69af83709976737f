// Multi-task experiments behind `tinyddp train`: deterministic data for the multi-task models of
// models/multitask, and the held-out metric.
//
//   using namespace tinyddp::models::experiments;
//   Experiment e = make_experiment("toy2", {.seed = 0});           // data generated once, deterministically
//   std::shared_ptr<MultiTaskModel> net = e.make_model(/*seed=*/1); // shared trunk + heads (models/multitask)
//   MultiTaskBatch b = e.batch(step, e.defaults.batch_size, rank, world);   // rank's shard of step's batch
//   std::vector<Tensor> L = net->task_losses(b);                  // T scalars, with graphs
//   Tensor W = net->last_shared_weight();                          // GradNorm's W: the last shared layer
//   double m = Experiment::metric(e.test_losses(*net), L0_test);  // sum_i L_i(t) / L_i(0) on held-out data
//
// Experiments (details and the reasons for each constant in toy.cpp and recsys.cpp, and docs/gradnorm.md):
//   toy2, toy10  Chen et al. 2018's toy regression: f_i(x) = sigma_i tanh((B + eps_i) x), D = 250, 100 outputs
//                per task, 4-layer 100-wide ReLU trunk and an affine head (MultiRegressionMLP), squared loss
//   recsys       a recommender-like pair: regression (MSE starts near 100) and a 3-class label (no action /
//                click / purchase; cross-entropy starts near 0.6), on a shared-bottom MLP (SharedBottomMLP)
//
// Legend: N = examples, D = input features, T = tasks, B = batch rows (per step, all ranks together).
// Invariants:
//  - every tensor here is a pure function of (name, options): the same bits on every run, thread and process
//    (the data use their own counter-based generator, data_rng.h, never the engine's per-thread RNG);
//  - batch(step, B, rank, world) for rank = 0..world-1 are consecutive, equal-sized slices of
//    global_batch(step, B, world), so that the mean loss over that batch is the mean over ranks of their shard
//    means (DDP == 1 process on global_batch). Step s's batch is the B rows from s * B on, wrapping around the
//    training set; when B does not divide by world, each rank takes ceil(B / world) rows and the last ones
//    repeat the batch's first rows, as torch.utils.data.DistributedSampler pads (drop_last=False): the global
//    batch has world * ceil(B / world) rows, B of them distinct.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "models/multitask/multitask.h"

namespace tinyddp::models::experiments {

// What `tinyddp train` uses unless told otherwise; the reasons are next to each experiment's definition.
struct ExperimentDefaults {
  int64_t steps = 2000;
  int64_t batch_size = 100;                // rows per step over all ranks
  double lr = 1e-3;                        // network learning rate (Adam)
  double alpha = 1.5;                      // GradNorm's alpha the paper uses for this kind of problem
  std::vector<int64_t> report_steps{0, 200, 800, 2000};
};

struct ExperimentOptions {
  uint64_t seed = 0;               // data seed; the model's initial weights take their own seed in make_model
  DType dtype = DType::f32;        // data and parameters
  int64_t train_rows = 0;          // 0: the experiment's default (tests use fewer)
  int64_t test_rows = 0;
};

struct Experiment {
  std::string name;
  std::string description;         // one line: what the data are
  std::vector<std::string> task_names;   // as the model names them
  MultiTaskBatch train, test;      // the whole sets, generated once; targets as the model expects them
  ExperimentDefaults defaults;
  DType dtype = DType::f32;
  // A fresh network with initial weights drawn from `seed` (engine RNG of the calling thread).
  std::function<std::shared_ptr<MultiTaskModel>(uint64_t seed)> make_model;

  int num_tasks() const { return static_cast<int>(task_names.size()); }
  // train = rows [0, train_rows) of the whole generated set `all`, test = the rest; contiguous copies.
  void split_train_test(const MultiTaskBatch& all, int64_t train_rows);
  // Rank `rank`'s shard of step `step`'s batch of `batch_size` training rows: rows_per_rank(batch_size, world)
  // rows (views where they are consecutive). Steps walk the training set in order and wrap around;
  // 1 <= batch_size <= training rows.
  MultiTaskBatch batch(int64_t step, int64_t batch_size, int rank = 0, int world = 1) const;
  // Every rank's shard of that step, in rank order: what one process trains on to match `world` DDP ranks.
  MultiTaskBatch global_batch(int64_t step, int64_t batch_size, int world) const;
  // ceil(batch_size / world): the shard of every rank (DistributedSampler's num_samples).
  static int64_t rows_per_rank(int64_t batch_size, int world);
  // The held-out task losses of `model` (no graph).
  std::vector<double> test_losses(MultiTaskModel& model) const;
  // The paper's task-normalized test loss sum_i L_i / L_i(0), given the initial test losses.
  static double metric(const std::vector<double>& test_losses, const std::vector<double>& initial_test_losses);
};

std::vector<std::string> experiment_names();   // toy2, toy10, recsys
// Throws naming the known experiments when `name` is not one.
Experiment make_experiment(const std::string& name, const ExperimentOptions& options = {});
Experiment make_toy(int num_tasks, const ExperimentOptions& options);
Experiment make_recsys(const ExperimentOptions& options);

// The toy problem's task scales: (1, 100) for T = 2; otherwise 1 + 10 |z_i|, z_i standard normal from `seed`.
std::vector<double> toy_sigmas(int num_tasks, uint64_t seed);

}  // namespace tinyddp::models::experiments
