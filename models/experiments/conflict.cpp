// conflict2: two regression tasks whose gradients on the shared trunk point against each other on purpose,
// for the gradient-surgery methods (docs/multitask.md), where equal weights, GradNorm, PCGrad and MGDA-UB
// visibly differ.
//
//   y_0 = tanh(A x),   y_1 = 2 (tanh(C x) - tanh(A x)),   x in R^16 standard normal, y_i in R^8
//
// Why it conflicts: task 1 wants the negative of task 0's features (the -tanh(A x) term), and the two heads
// start identical and small (the model ties head block 1 to block 0 at initialization), so at step 0 the
// residuals p - y_0 ~ -y_0 and p - y_1 ~ 2 (y_0 - tanh(C x)) are anti-correlated and so are the tasks'
// gradients on every shared layer (cosine < 0 on W in `tinyddp train --grad-report 0`). The heads separate as
// they train, but the trunk is a bottleneck (16 -> 8 -> 8) that cannot carry both A x and C x (16 directions),
// so the tasks keep competing for it. Scale 2 on task 1: equal weights let it dominate the trunk.
// Batch 120 and 2,400 train rows: divisible by 1 to 6 ranks. Network: MultiRegressionMLP(16, 8, 2 layers,
// 2 tasks, 8 outputs per task).
#include <cmath>

#include "models/experiments/data_rng.h"
#include "models/experiments/experiment.h"

namespace tinyddp::models::experiments {

namespace {

constexpr int64_t kInputDim = 16;
constexpr int64_t kOutputDim = 8;    // per task
constexpr int64_t kHidden = 8;       // the bottleneck: fewer than the 16 directions A x and C x need
constexpr int64_t kTrainRows = 2400;
constexpr int64_t kTestRows = 600;
constexpr double kScale1 = 2.0;
// The heads start at a tenth of nn::Linear's init with zero bias: predictions p ~ 0.03 << |y| ~ 0.6, so the
// residuals p - y_i are ~ -y_i and their anti-correlation, not p, sets the sign of the gradients' cosine.
constexpr double kHeadScale = 0.1;

enum Stream : uint64_t { kStreamA = 1, kStreamC = 2, kStreamX = 3 };

}  // namespace

Experiment make_conflict(const ExperimentOptions& options) {
  const int64_t train_rows = options.train_rows > 0 ? options.train_rows : kTrainRows;
  const int64_t test_rows = options.test_rows > 0 ? options.test_rows : kTestRows;
  const DType dtype = options.dtype;
  Experiment e;
  e.name = "conflict2";
  e.dtype = dtype;
  e.task_names = {"task0", "task1"};
  e.description = detail::concat("y_0 = tanh(A x), y_1 = 2 (tanh(C x) - tanh(A x)), D = ", kInputDim, ", ", kOutputDim,
                                 " outputs per task, tied initial heads (conflicting on purpose); ", train_rows,
                                 " train / ", test_rows, " test rows");

  NoGradGuard no_grad;
  const double inv_sqrt_d = 1.0 / std::sqrt(static_cast<double>(kInputDim));   // A x, C x of variance ~1
  const Tensor a = from_vector(DataRng(options.seed, kStreamA).normal(kOutputDim * kInputDim, inv_sqrt_d),
                               {kOutputDim, kInputDim}, DType::f64);
  const Tensor c = from_vector(DataRng(options.seed, kStreamC).normal(kOutputDim * kInputDim, inv_sqrt_d),
                               {kOutputDim, kInputDim}, DType::f64);
  const int64_t rows = train_rows + test_rows;
  const Tensor x = from_vector(DataRng(options.seed, kStreamX).normal(static_cast<size_t>(rows * kInputDim)),
                               {rows, kInputDim}, DType::f64);
  const Tensor ya = tanh(matmul(x, t(a)));   // (N, 8)
  const Tensor yc = tanh(matmul(x, t(c)));
  const Tensor y = cat({ya, (yc - ya) * kScale1}, 1);   // (N, 16): task i in columns [8 i, 8 (i + 1))
  e.split_train_test({.x = x.to(dtype), .targets = {y.to(dtype)}}, train_rows);
  e.defaults = {.steps = 1000, .batch_size = 120, .lr = 1e-3, .alpha = 1.5, .report_steps = {0, 100, 400, 1000}};
  e.make_model = [dtype](uint64_t seed) -> std::shared_ptr<MultiTaskModel> {
    manual_seed(seed);
    auto net = std::make_shared<MultiRegressionMLP>(kInputDim, kHidden, /*num_layers=*/2, 2, kOutputDim, dtype);
    NoGradGuard no_grad;
    for (auto& [name, p] : net->named_parameters()) {
      if (name == "head.weight") {
        p.mul_(kHeadScale);
        p.narrow(0, kOutputDim, kOutputDim).copy_(p.narrow(0, 0, kOutputDim));
      }
      if (name == "head.bias") p.zero_();
    }
    return net;
  };
  return e;
}

}  // namespace tinyddp::models::experiments
