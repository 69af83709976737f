// The toy problem of Chen et al. 2018 (GradNorm), section 4:
//
//   f_i(x) = sigma_i tanh((B + eps_i) x),   x in R^250, f_i(x) in R^100,   i = 1..T
//
// B (100, 250) is shared by all tasks, eps_i (100, 250) is task i's own; sigma_i sets task i's scale, so with
// equal loss weights the tasks with large sigma_i dominate the shared trunk's gradients. Squared loss.
//
// Choices the paper leaves open, and ours (docs/gradnorm.md lists them too):
//  - "B ~ N(0, 10), eps_i ~ N(0, 3.5)": read as N(mean, variance), so entries have standard deviations
//    sqrt(10) and sqrt(3.5). (brianlan/pytorch-grad-norm reads them as standard deviations instead.)
//  - x: uniform in [-1, 1]^250, scaled to unit norm (as brianlan/pytorch-grad-norm), so (B + eps_i) x has
//    entries with standard deviation sqrt(13.5) ~ 3.7: tanh is mostly, not completely, saturated. The network
//    reads x * sqrt(250) (standardized features); the targets are functions of the unit-norm x.
//  - T = 2: sigma = (1, 100) (the paper's). T = 10: "sigma_i from a wide normal distribution": we take
//    sigma_i = 1 + 10 |z_i|, z_i standard normal, so scales span about 1 to 30 and initial losses ~1 to ~900.
//  - A finite training set (5,000 rows, 50 batches of 100) and a held-out test set (1,000 rows) from the same
//    distribution; the paper does not give sizes.
//  - Network: models::MultiRegressionMLP(250, 100, 4 layers, T tasks, 100 outputs per task): trunk
//    Linear(250,100)-ReLU and three Linear(100,100)-ReLU, one affine head Linear(100, 100 T) whose column block i
//    is task i's prediction; W = the last trunk Linear's weight (100, 100). Targets: one (N, 100 T) tensor.
#include <cmath>

#include "models/experiments/data_rng.h"
#include "models/experiments/experiment.h"

namespace tinyddp::models::experiments {

namespace {

constexpr int64_t kInputDim = 250;    // the paper's
constexpr int64_t kOutputDim = 100;   // per task, the paper's
constexpr int64_t kHidden = 100;      // trunk width, the paper's
constexpr int64_t kTrainRows = 5000;
constexpr int64_t kTestRows = 1000;

// Streams of DataRng(seed, stream): one per quantity, so that changing T leaves B and x unchanged.
enum Stream : uint64_t { kStreamB = 1, kStreamX = 2, kStreamSigma = 3, kStreamEps = 100 };

Tensor make_tensor(const std::vector<double>& v, const Shape& shape, DType dtype) { return from_vector(v, shape, dtype); }


}  // namespace

std::vector<double> toy_sigmas(int num_tasks, uint64_t seed) {
  if (num_tasks == 2) return {1.0, 100.0};
  DataRng rng(seed, kStreamSigma);
  std::vector<double> sigmas;
  for (int i = 0; i < num_tasks; ++i) sigmas.push_back(1.0 + 10.0 * std::abs(rng.normal()));
  return sigmas;
}

Experiment make_toy(int num_tasks, const ExperimentOptions& options) {
  TINYDDP_CHECK(num_tasks >= 2, "toy problem: needs at least 2 tasks, got ", num_tasks, ".");
  const int64_t train_rows = options.train_rows > 0 ? options.train_rows : kTrainRows;
  const int64_t test_rows = options.test_rows > 0 ? options.test_rows : kTestRows;
  const DType dtype = options.dtype;
  const std::vector<double> sigmas = toy_sigmas(num_tasks, options.seed);

  Experiment e;
  e.name = "toy" + std::to_string(num_tasks);
  e.dtype = dtype;
  std::string sigma_list;
  for (int i = 0; i < num_tasks; ++i) {
    sigma_list += (i ? ", " : "") + detail::concat(std::round(sigmas[i] * 100) / 100);
    e.task_names.push_back(detail::concat("task", i));
  }
  e.description = detail::concat("f_i(x) = sigma_i tanh((B + eps_i) x), sigma = (", sigma_list, "), D = ", kInputDim,
                                 ", ", kOutputDim, " outputs per task; ", train_rows, " train / ", test_rows,
                                 " test rows");

  // The generator in f64 whatever the training dtype, so toy2 in f32 and f64 see the same data up to rounding.
  NoGradGuard no_grad;
  const Tensor b = make_tensor(DataRng(options.seed, kStreamB).normal(kOutputDim * kInputDim, std::sqrt(10.0)),
                               {kOutputDim, kInputDim}, DType::f64);
  const int64_t rows = train_rows + test_rows;
  std::vector<double> xs = DataRng(options.seed, kStreamX).uniform(static_cast<size_t>(rows * kInputDim), -1.0, 1.0);
  for (int64_t r = 0; r < rows; ++r) {
    double norm2 = 0;
    for (int64_t j = 0; j < kInputDim; ++j) norm2 += xs[r * kInputDim + j] * xs[r * kInputDim + j];
    const double inv = 1.0 / std::sqrt(norm2);
    for (int64_t j = 0; j < kInputDim; ++j) xs[r * kInputDim + j] *= inv;
  }
  const Tensor x = make_tensor(xs, {rows, kInputDim}, DType::f64);
  std::vector<Tensor> ys;
  for (int i = 0; i < num_tasks; ++i) {
    const Tensor eps = make_tensor(DataRng(options.seed, kStreamEps + i).normal(kOutputDim * kInputDim, std::sqrt(3.5)),
                                   {kOutputDim, kInputDim}, DType::f64);
    ys.push_back(tanh(matmul(x, t(b + eps))) * sigmas[i]);   // (N, 100)
  }
  // The network sees x * sqrt(D): features of variance 1, the usual input standardization (with unit-norm
  // inputs every layer starts with activations ~1/sqrt(D) of their usual size, and a 2000-step run barely
  // moves the sigma = 100 task). The targets above are the paper's functions of the unit-norm x.
  const Tensor x_in = x * std::sqrt(static_cast<double>(kInputDim));
  const Tensor y = cat(ys, 1);   // (N, 100 T): task i in columns [100 i, 100 (i + 1))
  e.split_train_test({.x = x_in.to(dtype), .targets = {y.to(dtype)}}, train_rows);

  // Paper: alpha = 0.12 on the toy problem. Steps, batch and Adam's lr are ours: enough for the losses to
  // separate by task scale on a 2-core machine in about a minute.
  e.defaults = {.steps = 2000, .batch_size = 100, .lr = 1e-3, .alpha = 0.12, .report_steps = {0, 200, 800, 2000}};
  e.make_model = [num_tasks, dtype](uint64_t seed) -> std::shared_ptr<MultiTaskModel> {
    manual_seed(seed);
    return std::make_shared<MultiRegressionMLP>(kInputDim, kHidden, /*num_layers=*/4, num_tasks, kOutputDim, dtype);
  };
  return e;
}

}  // namespace tinyddp::models::experiments
