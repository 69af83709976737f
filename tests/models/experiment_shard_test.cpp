// Experiment::batch on any rank count (issue 14, point 11): shards of ceil(B / world) rows, the last ones
// padded with the batch's first rows as torch.utils.data.DistributedSampler pads, batches that wrap around a
// training set B does not divide, and the invariant DDP relies on: the mean over ranks of the shard means is
// the mean over global_batch, so DDP on `world` ranks trains what one process trains on global_batch.
#include <gtest/gtest.h>

#include "engine/tinyddp.h"
#include "models/experiments/experiment.h"

namespace tinyddp::models::experiments {
namespace {

const Experiment& toy2() {
  static const Experiment e = make_toy(2, {.seed = 3, .dtype = DType::f64, .train_rows = 50, .test_rows = 8});
  return e;
}

std::vector<double> rows(const Tensor& x) { return x.contiguous().to_vector<double>(); }

TEST(ExperimentShards, ThreeRanksPadTheBatchAsDistributedSamplerDoes) {
  const Experiment& e = toy2();
  const int64_t d = e.train.x.size(1);
  EXPECT_EQ(Experiment::rows_per_rank(10, 3), 4);
  // Step 1's batch: rows 10..19; 3 ranks x 4 rows = rows 10..19, then 10 and 11 again.
  std::vector<double> together;
  for (int r = 0; r < 3; ++r) {
    const MultiTaskBatch b = e.batch(1, 10, r, 3);
    ASSERT_EQ(b.x.size(0), 4);
    const auto v = rows(b.x);
    together.insert(together.end(), v.begin(), v.end());
  }
  std::vector<double> expected = rows(e.train.x.narrow(0, 10, 10));
  const auto pad = rows(e.train.x.narrow(0, 10, 2));
  expected.insert(expected.end(), pad.begin(), pad.end());
  EXPECT_EQ(together, expected);
  EXPECT_EQ(rows(e.global_batch(1, 10, 3).x), expected);
  EXPECT_EQ(static_cast<int64_t>(expected.size()), 12 * d);
}

TEST(ExperimentShards, BatchesWrapAroundATrainingSetTheyDoNotDivide) {
  const Experiment& e = toy2();   // 50 rows, batches of 15: step 3 is rows 45..49 then 0..9
  const MultiTaskBatch b = e.batch(3, 15);
  std::vector<double> expected = rows(e.train.x.narrow(0, 45, 5));
  const auto head = rows(e.train.x.narrow(0, 0, 10));
  expected.insert(expected.end(), head.begin(), head.end());
  EXPECT_EQ(rows(b.x), expected);
  ASSERT_EQ(b.targets.size(), e.train.targets.size());
  for (const Tensor& y : b.targets) EXPECT_EQ(y.size(0), 15);
  EXPECT_THROW(e.batch(0, 51), Error);   // more rows than the set
}

TEST(ExperimentShards, TheMeanOverRanksOfShardMeansIsTheGlobalBatchMean) {
  const Experiment& e = toy2();
  manual_seed(4);
  auto net = e.make_model(4);
  for (int world : {1, 2, 3, 4, 7}) {
    for (int64_t batch : {7, 10, 15}) {
      SCOPED_TRACE("world " + std::to_string(world) + ", batch " + std::to_string(batch));
      NoGradGuard no_grad;
      const std::vector<Tensor> global = net->task_losses(e.global_batch(2, batch, world));
      std::vector<double> mean(global.size(), 0.0);
      for (int r = 0; r < world; ++r) {
        const std::vector<Tensor> shard = net->task_losses(e.batch(2, batch, r, world));
        for (size_t i = 0; i < shard.size(); ++i) mean[i] += shard[i].item() / world;
      }
      for (size_t i = 0; i < global.size(); ++i) EXPECT_NEAR(mean[i], global[i].item(), 1e-12 * global[i].item());
    }
  }
}

}  // namespace
}  // namespace tinyddp::models::experiments
