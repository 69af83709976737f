#include "models/experiments/experiment.h"

namespace tinyddp::models::experiments {

MultiTaskBatch Experiment::batch(int64_t step, int64_t batch_size, int rank, int world) const {
  const int64_t n = train.x.size(0);
  TINYDDP_CHECK(world >= 1 && rank >= 0 && rank < world, "Experiment::batch: rank ", rank, " of world ", world, ".");
  TINYDDP_CHECK(batch_size >= world && batch_size % world == 0, "experiment ", name, ": the batch of ", batch_size,
                " rows does not split into ", world, " equal shards; use a batch size that is a multiple of the "
                "number of ranks (equal shards are what makes the mean over ranks the mean over the batch).");
  TINYDDP_CHECK(batch_size <= n && n % batch_size == 0, "experiment ", name, ": the batch size ", batch_size,
                " must divide the ", n, " training rows.");
  const int64_t shard = batch_size / world;
  const int64_t start = (step * batch_size) % n + rank * shard;
  MultiTaskBatch b;
  b.x = train.x.narrow(0, start, shard);
  for (const Tensor& y : train.targets) b.targets.push_back(y.narrow(0, start, shard));
  return b;
}

std::vector<double> Experiment::test_losses(MultiTaskModel& model) const {
  NoGradGuard no_grad;
  std::vector<double> out;
  for (const Tensor& l : model.task_losses(test)) out.push_back(l.item());
  return out;
}

double Experiment::metric(const std::vector<double>& losses, const std::vector<double>& initial) {
  TINYDDP_CHECK(losses.size() == initial.size(), "metric: ", losses.size(), " losses but ", initial.size(),
                " initial losses.");
  double m = 0;
  for (size_t i = 0; i < losses.size(); ++i) m += losses[i] / initial[i];
  return m;
}

Experiment make_conflict(const ExperimentOptions& options);   // conflict.cpp: conflicting task gradients

std::vector<std::string> experiment_names() { return {"toy2", "toy10", "recsys", "conflict2"}; }

Experiment make_experiment(const std::string& name, const ExperimentOptions& options) {
  if (name == "toy2") return make_toy(2, options);
  if (name == "toy10") return make_toy(10, options);
  if (name == "recsys") return make_recsys(options);
  if (name == "conflict2") return make_conflict(options);
  throw Error("unknown experiment '" + name + "'; expected one of: toy2, toy10, recsys, conflict2.");
}

}  // namespace tinyddp::models::experiments
