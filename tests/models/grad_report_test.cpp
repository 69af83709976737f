// The per-task gradient report (models/weighting/grad_report.h) on constructed cases: opposite gradients
// (cosine -1), a closed-form regression (G_i, cosines, r_i and targets computed by hand in plain doubles), a
// detached head, a loss without a graph, a masked head and a task left out of the loss (each flagged with its
// causes), the effective weights of each weighting, and agreement with GradNorm's own G_i, r_i and targets.
//
// Legend: N = rows, I = inputs, H = shared features; W (H, I) is the shared layer, h = x W^T (N, H).
#include <gtest/gtest.h>

#include <cmath>

#include "models/multitask/multitask.h"
#include "models/weighting/grad_report.h"
#include "tests/models/test_util.h"

namespace tinyddp::models {
namespace {

constexpr DType kF64 = DType::f64;

Tensor shared_weight() {   // (H = 2, I = 3)
  return from_vector<double>({0.5, -1.0, 2.0, 1.5, 0.25, -0.75}, {2, 3}, kF64).requires_grad_();
}
Tensor inputs() {   // (N = 4, I = 3)
  return from_vector<double>({1, 2, -1, 0.5, -1, 3, -2, 0, 1, 1, 1, 1}, {4, 3}, kF64);
}

bool mentions(const std::vector<std::string>& causes, const std::string& word) {
  for (const std::string& c : causes)
    if (c.find(word) != std::string::npos) return true;
  return false;
}

TEST(GradReport, OppositeGradientsHaveCosineMinusOne) {
  // L_0 = <W, A> + 10, L_1 = 10 - 2 <W, A>: g_0 = A, g_1 = -2A, so cos = -1, G = (||A||, 2||A||).
  Tensor W = shared_weight();
  Tensor A = from_vector<double>({1, -2, 3, 0.5, 4, -1}, {2, 3}, kF64);
  const double norm_a = std::sqrt(1 + 4 + 9 + 0.25 + 16 + 1);
  std::vector<Tensor> L{(W * A).sum() + 10.0, 10.0 - (W * A).sum() * 2.0};
  const GradReport r = grad_report(L, W, {1.0, 0.5}, 7);
  ASSERT_EQ(r.tasks.size(), 2u);
  EXPECT_EQ(r.step, 7);
  ASSERT_TRUE(r.cosine[0][1].has_value());
  EXPECT_NEAR(*r.cosine[0][1], -1.0, 1e-6);
  EXPECT_NEAR(*r.cosine[1][0], -1.0, 1e-6);
  EXPECT_EQ(*r.cosine[0][0], 1.0);
  EXPECT_NEAR(r.tasks[0].grad_norm, norm_a, 1e-12);
  EXPECT_NEAR(r.tasks[1].grad_norm, 2 * norm_a, 1e-12);
  // w G = (||A||, ||A||): balanced magnitudes, and still the tasks cancel on W.
  EXPECT_NEAR(r.tasks[0].weighted_grad_norm, norm_a, 1e-12);
  EXPECT_NEAR(r.tasks[1].weighted_grad_norm, norm_a, 1e-12);
  EXPECT_TRUE(r.flagged().empty());
  EXPECT_EQ(r.tasks[0].name, "task0");
  // Nothing accumulated into W.grad.
  EXPECT_FALSE(W.grad().defined());
}

TEST(GradReport, ClosedFormRegression) {
  // Two regression heads on h = x W^T: L_i = mean_n (h_n . v_i - y_ni)^2, so
  // g_i = grad_W L_i = (2/N) sum_n e_ni v_i x_n^T with e_ni = h_n . v_i - y_ni. Computed below in plain doubles.
  const int64_t N = 4, I = 3, H = 2;
  Tensor W = shared_weight(), x = inputs();
  const std::vector<std::vector<double>> v{{1.0, -0.5}, {0.25, 2.0}};   // heads (H) each
  const std::vector<std::vector<double>> y{{1, -2, 0.5, 3}, {-1, 0, 2, 1}};
  std::vector<Tensor> L;
  for (int i = 0; i < 2; ++i) {
    Tensor pred = matmul(matmul(x, W.transpose(0, 1)), from_vector<double>(v[i], {H, 1}, kF64)).reshape({N});
    Tensor e = pred - from_vector<double>(y[i], {N}, kF64);
    L.push_back((e * e).mean());
  }
  const std::vector<double> Wv = W.to_vector<double>(), xv = x.to_vector<double>();
  std::vector<std::vector<double>> g(2, std::vector<double>(H * I, 0.0));
  std::vector<double> loss(2, 0.0);
  for (int i = 0; i < 2; ++i)
    for (int64_t n = 0; n < N; ++n) {
      double pred = 0;
      for (int64_t k = 0; k < H; ++k) {
        double h = 0;
        for (int64_t j = 0; j < I; ++j) h += xv[n * I + j] * Wv[k * I + j];
        pred += h * v[i][k];
      }
      const double e = pred - y[i][n];
      loss[i] += e * e / N;
      for (int64_t k = 0; k < H; ++k)
        for (int64_t j = 0; j < I; ++j) g[i][k * I + j] += 2.0 / N * e * v[i][k] * xv[n * I + j];
    }
  auto dot = [&](int a, int b) {
    double s = 0;
    for (int64_t k = 0; k < H * I; ++k) s += g[a][k] * g[b][k];
    return s;
  };
  const double n0 = std::sqrt(dot(0, 0)), n1 = std::sqrt(dot(1, 1));
  // Baseline L(0) = (2 L_0, 4 L_1): L~ = (1/2, 1/4), mean 3/8, r = (4/3, 2/3). w = (1.5, 0.5), alpha = 1.2.
  const std::vector<double> w{1.5, 0.5};
  const double alpha = 1.2;
  const GradReport r =
      grad_report(L, W, w, 3, {.task_names = {"a", "b"}, .baseline = {2 * loss[0], 4 * loss[1]}, .alpha = alpha});
  EXPECT_NEAR(r.tasks[0].loss, loss[0], 1e-12);
  EXPECT_NEAR(r.tasks[1].loss, loss[1], 1e-12);
  EXPECT_NEAR(r.tasks[0].grad_norm, n0, 1e-12 * n0);
  EXPECT_NEAR(r.tasks[1].grad_norm, n1, 1e-12 * n1);
  EXPECT_NEAR(*r.cosine[0][1], dot(0, 1) / (n0 * n1), 1e-12);
  EXPECT_NEAR(r.tasks[0].inverse_rate, 0.5, 1e-15);
  EXPECT_NEAR(r.tasks[1].inverse_rate, 0.25, 1e-15);
  EXPECT_NEAR(r.tasks[0].ratio, 4.0 / 3.0, 1e-14);
  EXPECT_NEAR(r.tasks[1].ratio, 2.0 / 3.0, 1e-14);
  const double mean_wg = (w[0] * n0 + w[1] * n1) / 2;
  EXPECT_NEAR(r.tasks[0].weighted_grad_norm, w[0] * n0, 1e-12 * n0);
  EXPECT_NEAR(r.tasks[0].target, mean_wg * std::pow(4.0 / 3.0, alpha), 1e-12 * mean_wg);
  EXPECT_NEAR(r.tasks[1].target, mean_wg * std::pow(2.0 / 3.0, alpha), 1e-12 * mean_wg);
  EXPECT_EQ(r.tasks[1].name, "b");
  EXPECT_EQ(r.shared_shape, (std::vector<int64_t>{2, 3}));
}

// Three heads on h = x W^T: "ok" reads h, plus the one under test.
std::vector<Tensor> three_heads(const Tensor& W, const std::function<Tensor(const Tensor& h)>& third_head_input) {
  Tensor h = matmul(inputs(), W.transpose(0, 1));   // (N, H)
  Tensor target = full({4, 2}, 0.5, kF64);
  auto mse = [&](const Tensor& p) { return ((p - target) * (p - target)).mean(); };
  return {mse(h), mse(h * 2.0), mse(third_head_input(h))};
}

TEST(GradReport, DetachedHeadIsFlaggedDisconnectedWithItsCauses) {
  Tensor W = shared_weight();
  const GradReport r = grad_report(three_heads(W, [](const Tensor& h) { return h.detach(); }), W, {1, 1, 1}, 0);
  EXPECT_EQ(r.tasks[0].status, "ok");
  EXPECT_EQ(r.tasks[1].status, "ok");
  EXPECT_EQ(r.tasks[2].status, "disconnected");
  EXPECT_FALSE(r.tasks[2].reaches_shared);
  EXPECT_EQ(r.tasks[2].grad_norm, 0.0);
  EXPECT_TRUE(mentions(r.tasks[2].causes, "detach")) << "causes name the detach";
  EXPECT_TRUE(mentions(r.tasks[2].causes, "NoGradGuard"));
  EXPECT_EQ(r.flagged(), (std::vector<size_t>{2}));
  EXPECT_FALSE(r.cosine[0][2].has_value());
  EXPECT_FALSE(r.cosine[2][2].has_value());
  EXPECT_GT(*r.cosine[0][1], 0.99);   // mse(h) and mse(2h) against 0.5: nearly the same direction
  EXPECT_GT(r.tasks[2].loss, 0.0);            // the loss itself is still reported
}

TEST(GradReport, LossWithoutAGraphIsDisconnected) {
  Tensor W = shared_weight();
  std::vector<Tensor> L = three_heads(W, [](const Tensor& h) { return h; });
  {
    NoGradGuard no_grad;
    L[2] = (matmul(inputs(), W.transpose(0, 1)) * 3.0).mean();   // computed with autograd off
  }
  const GradReport r = grad_report(L, W, {1, 1, 1}, 0);
  EXPECT_EQ(r.tasks[2].status, "disconnected");
  EXPECT_TRUE(mentions(r.tasks[2].causes, "no graph"));
}

TEST(GradReport, MaskedHeadHasAZeroGradient) {
  Tensor W = shared_weight();
  const GradReport r = grad_report(three_heads(W, [](const Tensor& h) { return h * 0.0; }), W, {1, 1, 1}, 0);
  EXPECT_EQ(r.tasks[2].status, "zero gradient");
  EXPECT_TRUE(r.tasks[2].reaches_shared);
  EXPECT_TRUE(mentions(r.tasks[2].causes, "masked"));
  EXPECT_FALSE(r.cosine[1][2].has_value());
}

TEST(GradReport, TaskLeftOutOfTheLossIsFlagged) {
  Tensor W = shared_weight();
  const GradReport r = grad_report(three_heads(W, [](const Tensor& h) { return h * -1.0; }), W, {1, 1, 0}, 0);
  EXPECT_EQ(r.tasks[2].status, "not in the loss");
  EXPECT_GT(r.tasks[2].grad_norm, 0.0);
  EXPECT_EQ(r.tasks[2].weighted_grad_norm, 0.0);
  EXPECT_TRUE(mentions(r.tasks[2].causes, "sum"));
}

TEST(GradReport, EffectiveWeightsOfEachWeighting) {
  Tensor W = shared_weight();
  std::vector<Tensor> L{(W * W).sum(), W.sum() * W.sum()};
  auto fixed = make_weighting("fixed", 2, {.initial_weights = {2.0, 3.0}, .dtype = kF64});
  EXPECT_EQ(effective_loss_weights(*fixed, L), (std::vector<double>{2.0, 3.0}));
  // Uncertainty: total = sum_i (exp(-s_i) L_i + s_i) / 2, s = -log(w0): d total / d L_i = w0_i / 2.
  auto uncertainty = make_weighting("uncertainty", 2, {.initial_weights = {1.0, 4.0}, .dtype = kF64});
  const std::vector<double> u = effective_loss_weights(*uncertainty, L);
  EXPECT_NEAR(u[0], 0.5, 1e-15);
  EXPECT_NEAR(u[1], 2.0, 1e-14);
  EXPECT_FALSE(uncertainty->parameters()[0].grad().defined()) << "nothing reaches the log-variances";
  auto gradnorm = make_weighting("gradnorm", 2, {.dtype = kF64});
  EXPECT_EQ(effective_loss_weights(*gradnorm, L), (std::vector<double>{1.0, 1.0}));
  EXPECT_FALSE(W.grad().defined());
}

TEST(GradReport, AgreesWithGradNormsOwnNumbers) {
  // A small toy network: at update steps, the report's w_i G_i, r_i and targets are GradNorm's G_i, r_i and
  // targets (same baseline L_i(0), same alpha, no EMA), computed independently.
  manual_seed(3);
  MultiRegressionMLP net(5, 8, 2, /*num_tasks=*/3, 1, kF64);
  manual_seed(4);
  const Tensor x = randn({16, 5}).to(kF64), y = randn({16, 3}).to(kF64) * 3.0;
  auto gn = make_weighting("gradnorm", 3, {.alpha = 0.8, .lr = 0.05, .dtype = kF64});
  std::vector<double> baseline;
  for (int64_t step = 0; step < 3; ++step) {
    std::vector<Tensor> L = net.task_losses({x * (1.0 + 0.3 * step), {y}});
    const WeightingStep ws = gn->observe(L, net.last_shared_weight(), step);
    ASSERT_TRUE(ws.updated);
    if (baseline.empty()) baseline = ws.losses;
    const GradReport r = grad_report(L, net.last_shared_weight(), effective_loss_weights(*gn, L), step,
                                     {.baseline = baseline, .alpha = 0.8});
    for (size_t i = 0; i < 3; ++i) {
      EXPECT_NEAR(r.tasks[i].weighted_grad_norm, ws.grad_norms[i], 1e-12 * ws.grad_norms[i]) << "step " << step;
      EXPECT_NEAR(r.tasks[i].ratio, ws.loss_ratios[i], 1e-12) << "step " << step;
      EXPECT_NEAR(r.tasks[i].target, ws.targets[i], 1e-12 * ws.targets[i]) << "step " << step;
      EXPECT_EQ(r.tasks[i].weight, gn->loss_weights()[i]) << "w(t), what total_loss applies";
    }
    gn->total_loss(L).backward();   // the graphs are still usable after the report
  }
}

TEST(GradReport, ErrorsNameTheProblem) {
  Tensor W = shared_weight();
  std::vector<Tensor> L{(W * W).sum()};
  EXPECT_NE(testing_util::error_of([&] { grad_report(L, W, {1.0, 2.0}, 0); }).find("one weight per task"),
            std::string::npos);
  EXPECT_NE(testing_util::error_of([&] { grad_report(L, W.detach(), {1.0}, 0); }).find("requires grad"),
            std::string::npos);
}

}  // namespace
}  // namespace tinyddp::models
