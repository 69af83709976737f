// Fixed and uncertainty weighting: hand-computed totals and updates.
#include <gtest/gtest.h>

#include <cmath>

#include "models/nn/nn.h"
#include "models/weighting/uncertainty.h"
#include "tests/models/test_util.h"

namespace tinyddp::models {
namespace {

using testing_util::error_of;

constexpr DType kF64 = DType::f64;

TEST(FixedWeighting, TotalIsWeightedSumAndObserveOnlyRecords) {
  Tensor a = scalar_tensor(2.0, kF64).requires_grad_(), b = scalar_tensor(3.0, kF64).requires_grad_();
  auto fixed = make_weighting("fixed", 2, {.initial_weights = {0.25, 4.0}});
  WeightingStep rec = fixed->observe({a * 1.0, b * 1.0}, Tensor(), 0);
  EXPECT_EQ(rec.losses, (std::vector<double>{2, 3}));
  EXPECT_FALSE(rec.updated);
  Tensor total = fixed->total_loss({a * 1.0, b * 1.0});
  EXPECT_DOUBLE_EQ(total.item(), 0.25 * 2 + 4.0 * 3);
  total.backward();
  EXPECT_DOUBLE_EQ(a.grad().item(), 0.25);
  EXPECT_DOUBLE_EQ(b.grad().item(), 4.0);
  EXPECT_EQ(fixed->weights(), (std::vector<double>{0.25, 4.0}));
  EXPECT_TRUE(fixed->parameters().empty());
  EXPECT_EQ(make_weighting("fixed", 3)->weights(), (std::vector<double>{1, 1, 1}));
  const std::string message = error_of([] { make_weighting("fixed", 2, {.initial_weights = {1.0, -1.0}}); });
  EXPECT_NE(message.find("initial_weights[1] (task 1) must be finite and > 0"), std::string::npos) << message;
}

TEST(UncertaintyWeighting, HandComputedTotalGradientAndStep) {
  auto unc = make_weighting("uncertainty", 2, {.dtype = kF64});
  ASSERT_EQ(unc->parameters().size(), 1u);
  Tensor s = unc->parameters()[0];
  EXPECT_EQ(s.to_vector<double>(), (std::vector<double>{0, 0}));
  EXPECT_EQ(unc->weights(), (std::vector<double>{1, 1}));

  Tensor a = scalar_tensor(4.0, kF64).requires_grad_(), b = scalar_tensor(0.5, kF64).requires_grad_();
  // total = 0.5 e^{-s1} 4 + 0.5 s1 + 0.5 e^{-s2} 0.5 + 0.5 s2 = 2 + 0.25 at s = 0.
  // d/ds_i = 0.5 (1 - e^{-s_i} L_i) = (-1.5, 0.25);  d/dL_i = 0.5 e^{-s_i} = 0.5.
  unc->observe({a * 1.0, b * 1.0}, Tensor(), 0);
  Tensor total = unc->total_loss({a * 1.0, b * 1.0});
  EXPECT_DOUBLE_EQ(total.item(), 2.25);
  total.backward();
  EXPECT_EQ(s.grad().to_vector<double>(), (std::vector<double>{-1.5, 0.25}));
  EXPECT_DOUBLE_EQ(a.grad().item(), 0.5);
  optim::SGD opt(unc->parameters(), {.lr = 0.1});
  opt.step();
  // s = (0.15, -0.025): weights exp(-s).
  const std::vector<double> w = unc->weights();
  EXPECT_NEAR(w[0], std::exp(-0.15), 1e-15);
  EXPECT_NEAR(w[1], std::exp(0.025), 1e-15);
  // initial_weights set s = -log w.
  auto init = make_weighting("uncertainty", 2, {.initial_weights = {2.0, 0.5}, .dtype = kF64});
  EXPECT_NEAR(init->weights()[0], 2.0, 1e-15);
  EXPECT_NEAR(init->parameters()[0].to_vector<double>()[1], std::log(2.0), 1e-15);
}

TEST(UncertaintyWeighting, MinimumIsAtLogLoss) {
  // For constant losses the optimum is s_i = log L_i (w_i = 1/L_i): plain gradient descent gets there.
  auto unc = make_weighting("uncertainty", 2, {.dtype = kF64});
  optim::SGD opt(unc->parameters(), {.lr = 0.5});
  for (int step = 0; step < 400; ++step) {
    opt.zero_grad();
    unc->total_loss({scalar_tensor(4.0, kF64), scalar_tensor(0.25, kF64)}).backward();
    opt.step();
  }
  EXPECT_NEAR(unc->weights()[0], 0.25, 1e-9);
  EXPECT_NEAR(unc->weights()[1], 4.0, 1e-9);
}

TEST(UncertaintyWeighting, ClearErrorsForDtypeAndNonfiniteLosses) {
  auto unc = make_weighting("uncertainty", 2);   // f32 log-variances
  std::string message = error_of([&] { unc->total_loss({scalar_tensor(1.0, kF64), scalar_tensor(1.0, kF64)}); });
  EXPECT_NE(message.find("WeightingOptions{.dtype"), std::string::npos) << message;
  message = error_of([&] { unc->observe({scalar_tensor(1.0), scalar_tensor(NAN)}, Tensor(), 4); });
  EXPECT_NE(message.find("not finite at step 4"), std::string::npos) << message;
  auto lenient = make_weighting("uncertainty", 2, {.skip_nonfinite = true});
  EXPECT_FALSE(lenient->observe({scalar_tensor(1.0), scalar_tensor(NAN)}, Tensor(), 4).skipped.empty());
}

}  // namespace
}  // namespace tinyddp::models
