#include "models/experiments/experiment.h"

namespace tinyddp::models::experiments {

namespace {

// Rows [first, first + count) of the padded batch (positions, see Experiment::batch) as training-set rows, in
// runs of consecutive rows: narrow() views, joined by cat() where a run wraps around the set or the batch.
MultiTaskBatch batch_rows(const MultiTaskBatch& train, int64_t step, int64_t batch_size, int64_t first, int64_t count) {
  const int64_t n = train.x.size(0);
  auto row = [&](int64_t position) { return (step * batch_size + position % batch_size) % n; };
  std::vector<std::pair<int64_t, int64_t>> runs;   // (first row, length)
  for (int64_t p = first; p < first + count; ++p) {
    if (!runs.empty() && runs.back().first + runs.back().second == row(p)) ++runs.back().second;
    else runs.emplace_back(row(p), 1);
  }
  auto take = [&](const Tensor& t) {
    std::vector<Tensor> parts;
    for (const auto& [start, length] : runs) parts.push_back(t.narrow(0, start, length));
    return parts.size() == 1 ? parts[0] : cat(parts, 0);
  };
  MultiTaskBatch b;
  b.x = take(train.x);
  for (const Tensor& y : train.targets) b.targets.push_back(take(y));
  return b;
}

}  // namespace

void Experiment::split_train_test(const MultiTaskBatch& all, int64_t train_rows) {
  const int64_t rows = all.x.size(0);
  TINYDDP_INTERNAL_ASSERT(0 < train_rows && train_rows < rows, "experiment ", name, ": ", train_rows,
                          " training rows of ", rows);
  auto part = [&](int64_t start, int64_t n) {
    MultiTaskBatch out;
    out.x = all.x.narrow(0, start, n).contiguous();
    for (const Tensor& y : all.targets) out.targets.push_back(y.narrow(0, start, n).contiguous());
    return out;
  };
  train = part(0, train_rows);
  test = part(train_rows, rows - train_rows);
}

int64_t Experiment::rows_per_rank(int64_t batch_size, int world) {
  TINYDDP_CHECK(world >= 1 && batch_size >= 1, "Experiment::rows_per_rank: batch ", batch_size, ", world ", world, ".");
  return (batch_size + world - 1) / world;
}

MultiTaskBatch Experiment::batch(int64_t step, int64_t batch_size, int rank, int world) const {
  const int64_t n = train.x.size(0);
  TINYDDP_CHECK(world >= 1 && rank >= 0 && rank < world, "Experiment::batch: rank ", rank, " of world ", world, ".");
  TINYDDP_CHECK(batch_size >= 1 && batch_size <= n, "experiment ", name, ": a batch of ", batch_size,
                " rows, but the training set has ", n, "; use a batch of 1 to ", n, " rows (--batch).");
  const int64_t shard = rows_per_rank(batch_size, world);
  return batch_rows(train, step, batch_size, rank * shard, shard);
}

MultiTaskBatch Experiment::global_batch(int64_t step, int64_t batch_size, int world) const {
  TINYDDP_CHECK(batch_size >= 1 && batch_size <= train.x.size(0), "experiment ", name, ": a batch of ", batch_size,
                " rows, but the training set has ", train.x.size(0), "; use a batch of 1 to ", train.x.size(0),
                " rows (--batch).");
  return batch_rows(train, step, batch_size, 0, rows_per_rank(batch_size, world) * world);
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
