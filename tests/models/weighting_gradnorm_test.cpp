// GradNorm (paper and squared variant): hand-computed updates, the two ways of taking the w-gradient, the
// invariants (positive weights summing to T, no NaN, the network's .grad untouched) and each option's effect.
//
// The hand case: W = [3, 4] (||W|| = 5), L_i = 0.5 k_i ||W||^2, so g_i = grad_W L_i = k_i W, n_i = 5 k_i and
// L_i = 12.5 k_i. Changing k_i between steps changes the loss ratios exactly as we choose.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "models/nn/nn.h"
#include "models/weighting/gradnorm.h"
#include "tests/models/test_util.h"

namespace tinyddp::models {
namespace {

using testing_util::error_of;

constexpr DType kF64 = DType::f64;

struct QuadraticTasks {
  Tensor W = from_vector<double>({3.0, 4.0}, {2}, kF64).requires_grad_();
  std::vector<Tensor> losses(const std::vector<double>& k) const {
    std::vector<Tensor> out;
    for (double ki : k) out.push_back((W * W).sum() * (0.5 * ki));
    return out;
  }
};

void expect_near_all(const std::vector<double>& actual, const std::vector<double>& expected, double tol,
                     const std::string& what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  for (size_t i = 0; i < actual.size(); ++i) EXPECT_NEAR(actual[i], expected[i], tol) << what << "[" << i << "]";
}

double sum_of(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s;
}

TEST(GradNormPaper, HandComputedTwoSteps) {
  QuadraticTasks q;
  auto gn = make_weighting("gradnorm", 2, {.alpha = 1.5, .lr = 0.025, .weights_optimizer = WeightsOptimizer::sgd});
  // Step 0: k = (1, 2): n = (5, 10), L(0) = (12.5, 25), r = (1, 1). G = w n = (5, 10), mean 7.5, targets 7.5.
  // dL_grad/dw = (sign(5 - 7.5) 5, sign(10 - 7.5) 10) = (-5, 10); w = (1.125, 0.75); renormalized * 2/1.875.
  WeightingStep s0 = gn->observe(q.losses({1, 2}), q.W, 0);
  EXPECT_TRUE(s0.updated);
  expect_near_all(s0.losses, {12.5, 25}, 1e-12, "losses");
  expect_near_all(s0.grad_norms, {5, 10}, 1e-12, "G");
  expect_near_all(s0.targets, {7.5, 7.5}, 1e-12, "targets");
  expect_near_all(s0.loss_ratios, {1, 1}, 1e-15, "r");
  expect_near_all(s0.weight_grads, {-5, 10}, 1e-12, "dL_grad/dw");
  EXPECT_NEAR(s0.balance_loss, 2.5 + 2.5, 1e-12);
  expect_near_all(s0.weights, {1.2, 0.8}, 1e-12, "w after step 0");
  expect_near_all(gn->loss_weights(), {1.0, 1.0}, 0, "w(0), what total_loss applies at step 0");

  // Step 1: k = (0.5, 2): L~ = (0.5, 1), mean 0.75, r = (2/3, 4/3); n = (2.5, 10); G = (1.2*2.5, 0.8*10) = (3, 8),
  // mean 5.5; targets 5.5 r^1.5 = (2.99380, 8.46780); grad = (+2.5, -10); w = (1.1375, 1.05) * 2/2.1875 = (1.04, 0.96).
  WeightingStep s1 = gn->observe(q.losses({0.5, 2}), q.W, 1);
  expect_near_all(s1.loss_ratios, {2.0 / 3.0, 4.0 / 3.0}, 1e-12, "r");
  expect_near_all(s1.grad_norms, {3, 8}, 1e-12, "G");
  expect_near_all(s1.targets, {5.5 * std::pow(2.0 / 3.0, 1.5), 5.5 * std::pow(4.0 / 3.0, 1.5)}, 1e-12, "targets");
  expect_near_all(s1.weight_grads, {2.5, -10}, 1e-12, "dL_grad/dw");
  expect_near_all(s1.weights, {1.04, 0.96}, 1e-12, "w after step 1");
  expect_near_all(gn->loss_weights(), {1.2, 0.8}, 1e-12, "w(1)");
}

// The default weights optimizer: torch.optim.Adam's update (lr 0.025, betas 0.9/0.999, eps 1e-8) on the same
// balance gradients as HandComputedTwoSteps (their signs do not change between the steps).
//   step 0: g = (-5, 10); m = 0.1 g; v = 0.001 g^2; step size lr/(1 - 0.9) = 0.25; denom = |g| + 1e-8, so
//           w_i = 1 - 0.25 * 0.1 g_i / (|g_i| + 1e-8) = 1 -+ 0.025 / (1 + 1e-8/|g_i|) = (1.025, 0.975) to 1e-10,
//           already summing to 2.
//   step 1: k = (0.5, 2), G = (1.025*2.5, 0.975*10) = (2.5625, 9.75), mean 6.15625, targets (3.3510, 9.4782):
//           g = (-2.5, +10). m = (-0.7, 1.9), v = (0.031225, 0.1999), bias corrections 0.19 and 0.001999:
//           w_0 = 1.025 + 0.025 * (0.7/0.19) / sqrt(0.031225/0.001999) = 1.0483045...,
//           w_1 = 0.975 - 0.025 * (1.9/0.19) / sqrt(0.1999/0.001999) = 0.975 - 0.025 = 0.95; sum 1.9983045, so
//           w = (1.0483045, 0.95) * 2 / 1.9983045 = (1.0491939, 0.9508061).
TEST(GradNormPaper, AdamStepsTheWeightsAsTorchOptimAdam) {
  QuadraticTasks q;
  auto gn = make_weighting("gradnorm", 2, {.alpha = 1.5, .lr = 0.025});
  WeightingStep s0 = gn->observe(q.losses({1, 2}), q.W, 0);
  expect_near_all(s0.weight_grads, {-5, 10}, 1e-12, "dL_grad/dw");
  expect_near_all(s0.weights, {1.025, 0.975}, 1e-10, "w after step 0");
  EXPECT_EQ(s0.clamped, 0);
  WeightingStep s1 = gn->observe(q.losses({0.5, 2}), q.W, 1);
  expect_near_all(s1.weight_grads, {-2.5, 10}, 1e-12, "dL_grad/dw");
  const double w0 = 1.025 + 0.025 * (0.7 / 0.19) / std::sqrt(0.031225 / 0.001999), w1 = 0.95;
  expect_near_all(s1.weights, {w0 * 2 / (w0 + w1), w1 * 2 / (w0 + w1)}, 1e-9, "w after step 1");
  EXPECT_NEAR(s1.weights[0], 1.0491939, 1e-7);
  // SGD from the same start moves w by lr * |g|: 5x and 10x Adam's first step.
  auto sgd = make_weighting("gradnorm", 2, {.alpha = 1.5, .lr = 0.025, .weights_optimizer = WeightsOptimizer::sgd});
  EXPECT_NEAR(sgd->observe(q.losses({1, 2}), q.W, 0).weights[0], 1.2, 1e-12);
}

TEST(GradNormOptions, WeightsOptimizerNames) {
  EXPECT_EQ(parse_weights_optimizer("adam"), WeightsOptimizer::adam);
  EXPECT_EQ(parse_weights_optimizer("sgd"), WeightsOptimizer::sgd);
  EXPECT_EQ(weights_optimizer_name(WeightsOptimizer::sgd), "sgd");
  EXPECT_EQ(WeightingOptions{}.weights_optimizer, WeightsOptimizer::adam) << "the default is the paper's Adam";
  const std::string message = error_of([] { parse_weights_optimizer("adagrad"); });
  EXPECT_NE(message.find("'adagrad'"), std::string::npos) << message;
  EXPECT_NE(message.find("expected adam"), std::string::npos) << message;
}

TEST(GradNormPaper, AutogradBalanceGradientEqualsClosedForm) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(0.05, 3.0);
  for (int trial = 0; trial < 50; ++trial) {
    const int T = 2 + trial % 5;
    std::vector<double> w(T), n(T), target(T);
    for (int i = 0; i < T; ++i) w[i] = u(rng), n[i] = u(rng), target[i] = u(rng);
    if (trial == 0) target[0] = w[0] * n[0];   // a tie: both give 0 (abs' derivative at 0, as PyTorch)
    BalanceGradient a = gradnorm_balance(w, n, target);
    BalanceGradient c = gradnorm_balance_closed_form(w, n, target);
    EXPECT_NEAR(a.loss, c.loss, 1e-12);
    expect_near_all(a.grad_w, c.grad_w, 0.0, "trial " + std::to_string(trial));
  }
}

TEST(GradNormSquared, HandComputedStep) {
  QuadraticTasks q;
  auto gn = make_weighting("gradnorm-squared", 2, {.lr = 0.001, .weights_optimizer = WeightsOptimizer::sgd});
  // k = (1, 2), r = (1, 1), G_i = n_i = (5, 10). G_W(w) = ||(w1 + 2 w2) W|| = 5 (w1 + 2 w2) = 15, dG_W/dw = (5, 10).
  // balance = (5 w1 - 15)^2 + (10 w2 - 15)^2 = 100 + 25.
  // d/dw1 = 2(-10)(5 - 5) + 2(-5)(-5) = 50;  d/dw2 = 2(-10)(-10) + 2(-5)(10 - 10) = 200.
  // w = (1 - 0.05, 1 - 0.2) = (0.95, 0.8) -> * 2/1.75 = (38/35, 32/35).
  WeightingStep s = gn->observe(q.losses({1, 2}), q.W, 0);
  expect_near_all(s.grad_norms, {5, 10}, 1e-12, "G");
  EXPECT_NEAR(s.total_grad_norm, 15, 1e-12);
  expect_near_all(s.targets, {15, 15}, 1e-12, "G_W r");
  EXPECT_NEAR(s.balance_loss, 125, 1e-10);
  expect_near_all(s.weight_grads, {50, 200}, 1e-10, "d balance / dw");
  expect_near_all(s.weights, {38.0 / 35.0, 32.0 / 35.0}, 1e-12, "w");
  // r_i = L_i / L_i(0), not normalized by the mean in this variant.
  WeightingStep s1 = gn->observe(q.losses({0.5, 2}), q.W, 1);
  expect_near_all(s1.loss_ratios, {0.5, 1.0}, 1e-15, "r");
}

// Under DDP the squared variant builds G_W from the averaged g_i instead of create_graph; on one process (an
// identity "allreduce") both must give the same update.
TEST(GradNormSquared, AveragedGradientPathEqualsCreateGraph) {
  manual_seed(3);
  nn::Linear trunk(3, 4, true, kF64), head_a(4, 1, true, kF64), head_b(4, 2, true, kF64);
  Tensor x = randn({5, 3}, kF64), ya = randn({5, 1}, kF64), yb = randn({5, 2}, kF64);
  auto losses = [&] {
    Tensor h = tanh(trunk(x));
    return std::vector<Tensor>{mse_loss(head_a(h), ya), mse_loss(head_b(h), yb) * 3.0};
  };
  int calls = 0;
  auto plain = make_weighting("gradnorm-squared", 2, {.lr = 0.01});
  auto ddp = make_weighting("gradnorm-squared", 2, {.lr = 0.01, .allreduce_mean = [&](std::vector<Tensor>&) { ++calls; }});
  for (int step = 0; step < 3; ++step) {
    WeightingStep a = plain->observe(losses(), trunk.weight(), step);
    WeightingStep b = ddp->observe(losses(), trunk.weight(), step);
    EXPECT_NEAR(a.total_grad_norm, b.total_grad_norm, 1e-13);
    expect_near_all(a.weight_grads, b.weight_grads, 1e-12, "d balance / dw, step " + std::to_string(step));
    expect_near_all(a.weights, b.weights, 1e-13, "w, step " + std::to_string(step));
  }
  EXPECT_EQ(calls, 6);   // per step: the loss values, then the task gradients
}

// Note [GradNorm never touches the network's .grad] (gradnorm.h): after observe() and total.backward(), every
// network parameter's .grad equals that of sum_i w_i(t) L_i computed by hand, bit for bit, with and without an
// update in the step.
TEST(GradNormBothVariants, NetworkGradIsExactlyGradOfWeightedSum) {
  for (const std::string kind : {"gradnorm", "gradnorm-squared"}) {
    for (int update_every : {1, 2}) {
      manual_seed(11);
      auto trunk = std::make_shared<nn::Sequential>(nn::Linear(3, 6, true, kF64), nn::ReLU(), nn::Linear(6, 6, true, kF64),
                                                    nn::ReLU());
      nn::Linear head_a(6, 1, true, kF64), head_b(6, 3, true, kF64);
      std::vector<Tensor> params = trunk->parameters();
      for (const Tensor& p : head_a.parameters()) params.push_back(p);
      for (const Tensor& p : head_b.parameters()) params.push_back(p);
      Tensor W = trunk->at<nn::Linear>(2)->weight();
      auto weighting = make_weighting(kind, 2, {.lr = 0.05, .update_every = update_every});
      for (int step = 0; step < 3; ++step) {
        Tensor x = randn({7, 3}, kF64), ya = randn({7, 1}, kF64) * 10.0, yb = randint(0, 3, {7});
        auto losses = [&] {
          Tensor h = (*trunk)(x);
          return std::vector<Tensor>{mse_loss(head_a(h), ya), cross_entropy(head_b(h), yb)};
        };
        // The reference: a fresh forward, the weights of this step as plain numbers.
        const std::vector<double> w = weighting->weights();
        for (const Tensor& p : params) p.set_grad(Tensor());
        std::vector<Tensor> ref_losses = losses();
        (ref_losses[0] * w[0] + ref_losses[1] * w[1]).backward();
        std::vector<std::vector<double>> expected;
        for (const Tensor& p : params) expected.push_back(p.grad().to_vector<double>());

        for (const Tensor& p : params) p.set_grad(Tensor());
        std::vector<Tensor> L = losses();
        WeightingStep rec = weighting->observe(L, W, step);
        EXPECT_EQ(rec.updated, step % update_every == 0);
        for (const Tensor& p : params) EXPECT_FALSE(p.grad().defined()) << kind << ": observe() wrote a .grad";
        weighting->total_loss(L).backward();
        for (size_t i = 0; i < params.size(); ++i) {
          EXPECT_EQ(params[i].grad().to_vector<double>(), expected[i])
              << kind << ", update_every " << update_every << ", step " << step << ", parameter " << i;
        }
        if (rec.updated) {
          EXPECT_NE(weighting->weights(), w) << "the update should have moved w";
        }
      }
    }
  }
}

TEST(GradNormBothVariants, WeightsStayPositiveAndSumToTOver200RandomSteps) {
  std::mt19937_64 rng(123);
  std::lognormal_distribution<double> scale(0.0, 1.5);
  for (const std::string kind : {"gradnorm", "gradnorm-squared"}) {
    const int T = 4;
    Tensor W = from_vector<double>({0.3, -1.2, 0.7}, {3}, kF64).requires_grad_();
    // A large lr drives weights into the clamp: they must still be > 0 and sum to T.
    auto weighting = make_weighting(
        kind, T, {.alpha = 1.5, .lr = kind == "gradnorm" ? 0.5 : 0.02, .weights_optimizer = WeightsOptimizer::sgd});
    for (int step = 0; step < 200; ++step) {
      std::vector<Tensor> L;
      for (int i = 0; i < T; ++i) {
        Tensor c = from_vector<double>({scale(rng), scale(rng), scale(rng)}, {3}, kF64);
        L.push_back((W * c).pow(2.0).sum() * scale(rng) + 1e-3);
      }
      WeightingStep rec = weighting->observe(L, W, step);
      ASSERT_TRUE(rec.updated) << kind << " step " << step;
      for (double w : rec.weights) ASSERT_TRUE(std::isfinite(w) && w > 0) << kind << " step " << step << ": " << w;
      ASSERT_NEAR(sum_of(rec.weights), T, 1e-12) << kind << " step " << step;
    }
  }
}

TEST(GradNormBothVariants, ZeroOrTinyBaselineThrowsOrIsSkipped) {
  for (const std::string kind : {"gradnorm", "gradnorm-squared"}) {
    QuadraticTasks q;
    auto strict = make_weighting(kind, 2, {.task_names = {"depth", "seg"}});
    const std::string message = error_of([&] { strict->observe(q.losses({1.0, 0.0}), q.W, 0); });
    EXPECT_NE(message.find("baseline loss L_i(0) = 0"), std::string::npos) << message;
    EXPECT_NE(message.find("task 'seg'"), std::string::npos) << message;
    EXPECT_NE(message.find("warmup_steps"), std::string::npos) << message;
    EXPECT_NE(message.find("skip_nonfinite"), std::string::npos) << message;
    error_of([&] { strict->observe(q.losses({1.0, 1e-10}), q.W, 0); });   // 1.25e-9 <= epsilon 1e-8

    auto lenient = make_weighting(kind, 2, {.skip_nonfinite = true});
    WeightingStep s0 = lenient->observe(q.losses({1.0, 0.0}), q.W, 0);
    EXPECT_FALSE(s0.updated);
    EXPECT_NE(s0.skipped.find("baseline"), std::string::npos);
    EXPECT_EQ(lenient->weights(), (std::vector<double>{1, 1}));
    // The baseline is re-taken at the next step, which then updates.
    WeightingStep s1 = lenient->observe(q.losses({1.0, 2.0}), q.W, 1);
    EXPECT_TRUE(s1.updated);
    expect_near_all(s1.baseline, {12.5, 25}, 1e-12, "re-taken baseline");
    for (double w : s1.weights) EXPECT_TRUE(std::isfinite(w) && w > 0);
  }
}

TEST(GradNormBothVariants, NonfiniteLossThrowsOrIsSkippedNeverNaNWeights) {
  for (const std::string kind : {"gradnorm", "gradnorm-squared"}) {
    for (double bad : {std::nan(""), static_cast<double>(INFINITY)}) {
      QuadraticTasks q;
      auto strict = make_weighting(kind, 2);
      strict->observe(q.losses({1, 2}), q.W, 0);
      const std::string message = error_of([&] { strict->observe(q.losses({1, bad}), q.W, 1); });
      EXPECT_NE(message.find("not finite at step 1"), std::string::npos) << message;
      for (double w : strict->weights()) EXPECT_TRUE(std::isfinite(w));

      auto lenient = make_weighting(kind, 2, {.skip_nonfinite = true});
      lenient->observe(q.losses({1, 2}), q.W, 0);
      const std::vector<double> before = lenient->weights();
      WeightingStep rec = lenient->observe(q.losses({1, bad}), q.W, 1);
      EXPECT_FALSE(rec.updated);
      EXPECT_FALSE(rec.skipped.empty());
      EXPECT_EQ(lenient->weights(), before);
      // NaN at the very first step: no baseline is taken from it.
      auto first = make_weighting(kind, 2, {.skip_nonfinite = true});
      EXPECT_FALSE(first->observe(q.losses({bad, 1}), q.W, 0).updated);
      EXPECT_TRUE(dynamic_cast<GradNormBase&>(*first).baseline().empty());
    }
  }
}

TEST(GradNormPaper, WrongSharedWeightAndDetachedLossesAreClearErrors) {
  QuadraticTasks q;
  Tensor other = from_vector<double>({1.0}, {1}, kF64).requires_grad_();
  auto gn = make_weighting("gradnorm", 2);
  std::string message = error_of([&] { gn->observe(q.losses({1, 2}), other, 0); });
  EXPECT_NE(message.find("does not depend on the shared weight W"), std::string::npos) << message;
  std::vector<Tensor> detached = q.losses({1, 2});
  for (Tensor& l : detached) l = l.detach();
  message = error_of([&] { make_weighting("gradnorm", 2)->observe(detached, q.W, 0); });
  EXPECT_NE(message.find("does not require grad"), std::string::npos) << message;
  message = error_of([&] { make_weighting("gradnorm", 3)->observe(q.losses({1, 2}), q.W, 0); });
  EXPECT_NE(message.find("expected 3 task losses"), std::string::npos) << message;
  message = error_of([&] { make_weighting("gradnorm-cubed", 2); });
  EXPECT_NE(message.find("expected one of: fixed, uncertainty, gradnorm, gradnorm-squared"), std::string::npos);
}

// ---- options: each changes behaviour as documented ----

// The losses for steps 0..5 of the option tests: task 1 falls, task 0 stays.
std::vector<double> k_at(int step) { return {1.0, 2.0 * std::pow(0.7, step)}; }

TEST(GradNormOptions, UpdateEveryUpdatesOnlyAtMultiples) {
  QuadraticTasks q;
  auto gn = make_weighting("gradnorm", 2, {.update_every = 3});
  std::vector<double> w = gn->weights();
  for (int step = 0; step < 7; ++step) {
    WeightingStep rec = gn->observe(q.losses(k_at(step)), q.W, step);
    EXPECT_EQ(rec.updated, step % 3 == 0) << step;
    EXPECT_EQ(rec.grad_norms.empty(), step % 3 != 0) << "non-update steps take no per-task gradients";
    if (step % 3 != 0) {
      EXPECT_EQ(gn->weights(), w) << step;
    } else {
      EXPECT_NE(gn->weights(), w) << step;
    }
    w = gn->weights();
  }
}

TEST(GradNormOptions, EmaSmoothsTheLossRatios) {
  QuadraticTasks q;
  auto gn = make_weighting("gradnorm", 2, {.update_every = 2, .ema = 0.5});
  std::vector<double> expected_r;
  for (int step = 0; step < 4; ++step) {
    const std::vector<double> k = k_at(step);
    // Instantaneous r: L~ = k / k(0); r = L~ / mean L~.
    std::vector<double> inv{k[0] / 1.0, k[1] / 2.0};
    const double mean = (inv[0] + inv[1]) / 2;
    std::vector<double> r{inv[0] / mean, inv[1] / mean};
    if (expected_r.empty()) {
      expected_r = r;
    } else {
      for (int i = 0; i < 2; ++i) expected_r[i] = 0.5 * expected_r[i] + 0.5 * r[i];   // advances every step
    }
    WeightingStep rec = gn->observe(q.losses(k), q.W, step);
    expect_near_all(rec.loss_ratios, expected_r, 1e-14, "EMA r at step " + std::to_string(step));
    if (step > 0) {
      EXPECT_GT(std::abs(rec.loss_ratios[0] - r[0]), 1e-3) << "smoothed r differs from instantaneous";
    }
  }
  // And the update uses the smoothed r: the targets at the update step 2 are mean(G) r_ema^alpha, not
  // mean(G) r^alpha (the weights may still agree: L_grad's gradient sees only which side of its target each G_i is on).
  QuadraticTasks q2, q3;
  auto smoothed = make_weighting("gradnorm", 2, {.update_every = 2, .ema = 0.5});
  auto plain = make_weighting("gradnorm", 2, {.update_every = 2});
  WeightingStep a, b;
  for (int step = 0; step < 3; ++step) {
    a = smoothed->observe(q2.losses(k_at(step)), q2.W, step);
    b = plain->observe(q3.losses(k_at(step)), q3.W, step);
  }
  ASSERT_TRUE(a.updated && b.updated);
  const double mean_G = (a.grad_norms[0] + a.grad_norms[1]) / 2;
  for (int i = 0; i < 2; ++i) {
    EXPECT_NEAR(a.targets[i], mean_G * std::pow(a.loss_ratios[i], 1.5), 1e-12);
    EXPECT_GT(std::abs(a.targets[i] - b.targets[i]), 1e-2) << i;
  }
}

TEST(GradNormOptions, WarmupTakesTheMeanBaselineAndDoesNotUpdate) {
  QuadraticTasks q;
  auto gn = make_weighting("gradnorm", 2, {.warmup_steps = 3});
  for (int step = 0; step < 3; ++step) {
    WeightingStep rec = gn->observe(q.losses(k_at(step)), q.W, step);
    EXPECT_FALSE(rec.updated) << step;
    EXPECT_TRUE(rec.baseline.empty());
    EXPECT_EQ(gn->weights(), (std::vector<double>{1, 1}));
  }
  WeightingStep rec = gn->observe(q.losses(k_at(3)), q.W, 3);
  EXPECT_TRUE(rec.updated);
  // Baseline: 12.5 * mean of k over steps 0..2.
  const double b1 = 12.5 * (k_at(0)[1] + k_at(1)[1] + k_at(2)[1]) / 3;
  expect_near_all(rec.baseline, {12.5, b1}, 1e-12, "warm-up baseline");
  const double inv0 = 1.0, inv1 = 12.5 * k_at(3)[1] / b1, mean = (inv0 + inv1) / 2;
  expect_near_all(rec.loss_ratios, {inv0 / mean, inv1 / mean}, 1e-12, "r against the warm-up baseline");
}

TEST(GradNormOptions, FreezeAfterStopsUpdates) {
  QuadraticTasks q;
  auto gn = make_weighting("gradnorm", 2, {.freeze_after = 2});
  for (int step = 0; step < 6; ++step) {
    const std::vector<double> before = gn->weights();
    WeightingStep rec = gn->observe(q.losses(k_at(step)), q.W, step);
    EXPECT_EQ(rec.updated, step <= 2) << step;
    if (step > 2) {
      EXPECT_EQ(gn->weights(), before) << step;
    }
  }
}

TEST(GradNormOptions, MinWeightClampsBeforeRenormalizing) {
  QuadraticTasks q;
  // SGD, lr 1: w = (1 + 5, 1 - 10) = (6, -9) -> clamp (6, 0.01) -> * 2/6.01.
  auto gn = make_weighting("gradnorm", 2, {.lr = 1.0, .weights_optimizer = WeightsOptimizer::sgd, .min_weight = 0.01});
  WeightingStep rec = gn->observe(q.losses({1, 2}), q.W, 0);
  expect_near_all(rec.weights, {6 * 2 / 6.01, 0.01 * 2 / 6.01}, 1e-12, "clamped");
  EXPECT_EQ(rec.clamped, 1) << "the clamp raised w_1 = -9";
  // The same step at lr 0.025 stays clear of the clamp: w = (1.125, 0.75).
  auto calm = make_weighting("gradnorm", 2, {.lr = 0.025, .weights_optimizer = WeightsOptimizer::sgd});
  EXPECT_EQ(calm->observe(q.losses({1, 2}), q.W, 0).clamped, 0);
}

TEST(GradNormOptions, AllreduceMeanSeesLossesThenGradients) {
  QuadraticTasks q;
  std::vector<size_t> sizes;
  // A fake 2-rank mean where the other rank saw twice these values: mean = 1.5x.
  auto gn = make_weighting("gradnorm", 2, {.allreduce_mean = [&](std::vector<Tensor>& ts) {
                                              sizes.push_back(ts.size());
                                              for (Tensor& t : ts) {
                                                NoGradGuard no_grad;
                                                t.mul_(1.5);
                                              }
                                            }});
  WeightingStep rec = gn->observe(q.losses({1, 2}), q.W, 0);
  EXPECT_EQ(sizes, (std::vector<size_t>{1, 2}));
  expect_near_all(rec.losses, {18.75, 37.5}, 1e-12, "averaged losses");
  expect_near_all(rec.grad_norms, {7.5, 15}, 1e-12, "G from the averaged gradients");
}

}  // namespace
}  // namespace tinyddp::models
