// `recsys`: two tasks shaped like a recommender's, on one shared-bottom MLP.
//
//   task 0  regression      a rating (e.g. watch time in tenths), MSE; the target has variance 100, so a
//                           fresh network (outputs near 0) starts near MSE 100; the noise floor is about 10
//   task 1  classification  no action (82%), click (9%), purchase (9%); cross-entropy. The head's bias starts
//                           at the log class priors (the usual initialization for imbalanced labels), so the
//                           loss starts near the label entropy, -(.82 ln .82 + 2 .09 ln .09) = 0.60
//
// The two targets share structure, as user interest drives both ratings and clicks: a random one-hidden-layer
// teacher h(x) = tanh(x A) (16 units) gives u = h c_u (rating) and v = h (0.6 c_u + 0.8 c_v) (engagement), each
// standardized over all rows; then
//   rating = 10 (0.95 u + 0.312 n1)                      Var = 100 (0.95^2 + 0.312^2 = 1), floor ~ 9.75
//   engage = by quantiles of v + 0.7 n2: the top 9% purchase, the next 9% click, the rest no action
// with n1, n2 standard normal noise (n2 keeps cross-entropy from reaching 0).
// x: 32 standard normal features. 8,192 train rows (32 batches of 256), 2,048 held out.
// Network: models::SharedBottomMLP(32, {64, 64}, 3): bottom Linear(32,64)-ReLU-Linear(64,64)-ReLU (W = the
// second Linear's weight), heads Linear(64,1) and Linear(64,3).
#include <algorithm>
#include <cmath>
#include <numeric>

#include "models/experiments/data_rng.h"
#include "models/experiments/experiment.h"

namespace tinyddp::models::experiments {

namespace {

constexpr int64_t kFeatures = 32;
constexpr int64_t kTeacherHidden = 16;
constexpr int64_t kTrainRows = 8192;
constexpr int64_t kTestRows = 2048;
constexpr double kClassPriors[3] = {0.82, 0.09, 0.09};   // no action, click, purchase
constexpr double kRatingScale = 10.0;                   // sqrt of the rating's variance, 100

enum Stream : uint64_t { kStreamX = 1, kStreamA = 2, kStreamCu = 3, kStreamCv = 4, kStreamN1 = 5, kStreamN2 = 6 };

void standardize(std::vector<double>& v) {
  const double mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  double var = 0;
  for (double x : v) var += (x - mean) * (x - mean);
  const double inv_sd = 1.0 / std::sqrt(var / static_cast<double>(v.size()));
  for (double& x : v) x = (x - mean) * inv_sd;
}

}  // namespace

Experiment make_recsys(const ExperimentOptions& options) {
  const int64_t train_rows = options.train_rows > 0 ? options.train_rows : kTrainRows;
  const int64_t test_rows = options.test_rows > 0 ? options.test_rows : kTestRows;
  const int64_t rows = train_rows + test_rows;
  const DType dtype = options.dtype;
  const uint64_t seed = options.seed;

  // The teacher, in plain loops over f64: a few hundred thousand multiply-adds.
  const std::vector<double> x = DataRng(seed, kStreamX).normal(static_cast<size_t>(rows * kFeatures));
  const std::vector<double> a = DataRng(seed, kStreamA).normal(kFeatures * kTeacherHidden, 1.0 / std::sqrt(8.0));
  const std::vector<double> cu = DataRng(seed, kStreamCu).normal(kTeacherHidden);
  const std::vector<double> cv = DataRng(seed, kStreamCv).normal(kTeacherHidden);
  std::vector<double> u(rows), v(rows);
  for (int64_t r = 0; r < rows; ++r) {
    double su = 0, sv = 0;
    for (int64_t k = 0; k < kTeacherHidden; ++k) {
      double z = 0;
      for (int64_t j = 0; j < kFeatures; ++j) z += x[r * kFeatures + j] * a[j * kTeacherHidden + k];
      const double h = std::tanh(z);
      su += h * cu[k];
      sv += h * (0.6 * cu[k] + 0.8 * cv[k]);
    }
    u[r] = su;
    v[r] = sv;
  }
  standardize(u);
  standardize(v);
  DataRng n1(seed, kStreamN1), n2(seed, kStreamN2);
  std::vector<double> rating(rows), score(rows);
  for (int64_t r = 0; r < rows; ++r) {
    rating[r] = kRatingScale * (0.95 * u[r] + std::sqrt(1.0 - 0.95 * 0.95) * n1.normal());
    score[r] = v[r] + 0.7 * n2.normal();
  }
  // Classes by rank of the noisy score: exactly the priors' proportions over all rows.
  std::vector<int64_t> order(rows);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t i, int64_t j) { return score[i] > score[j]; });
  std::vector<int64_t> label(rows, 0);
  const auto purchases = static_cast<int64_t>(std::llround(kClassPriors[2] * rows));
  const auto clicks = static_cast<int64_t>(std::llround(kClassPriors[1] * rows));
  for (int64_t k = 0; k < purchases + clicks; ++k) label[order[k]] = k < purchases ? 2 : 1;

  Experiment e;
  e.name = "recsys";
  e.dtype = dtype;
  e.description = detail::concat("regression (a rating, Var 100) + 3-class classification (no action / click / "
                                 "purchase, 82/9/9%), ", kFeatures, " features; ", train_rows, " train / ", test_rows,
                                 " test rows");
  e.task_names = {"regression", "classification"};   // SharedBottomMLP's names
  const Tensor xt = from_vector(x, {rows, kFeatures}, dtype);
  const Tensor yt = from_vector(rating, {rows, 1}, dtype);
  const Tensor lt = from_vector(label, {rows}, DType::i64);
  e.split_train_test({.x = xt, .targets = {yt, lt}}, train_rows);

  // alpha = 1.5 and a weight learning rate of 0.025 are the paper's NYUv2 values; using them here is our choice.
  e.defaults = {.steps = 2000, .batch_size = 256, .lr = 1e-3, .alpha = 1.5, .report_steps = {0, 200, 800, 2000}};
  e.make_model = [dtype](uint64_t seed) -> std::shared_ptr<MultiTaskModel> {
    manual_seed(seed);
    auto net = std::make_shared<SharedBottomMLP>(kFeatures, std::vector<int64_t>{64, 64}, 3, dtype);
    NoGradGuard no_grad;
    Tensor bias = net->parameter("cls_head.bias");
    bias.copy_(from_vector(std::vector<double>{std::log(kClassPriors[0]), std::log(kClassPriors[1]),
                                               std::log(kClassPriors[2])},
                           {3}, dtype));
    return net;
  };
  return e;
}

}  // namespace tinyddp::models::experiments
