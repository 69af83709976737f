// optim::Adam and AdamW against a hand-written double-precision transcription of torch.optim.Adam's single-tensor
// update and against values printed by PyTorch 1.13 (torch.optim.Adam on the same parameter and gradients).
//
// Step 1 by hand, lr 0.1, betas (0.9, 0.999), eps 1e-8, p = [1, -2], g = [0.5, -1]:
//   m = 0.1 g, v = 0.001 g^2, bias corrections 1 - 0.9 = 0.1 and 1 - 0.999 = 0.001, so
//   denom = sqrt(0.001 g^2) / sqrt(0.001) + eps = |g| + 1e-8 and p -= (0.1 / 0.1) * 0.1 g / denom:
//   p = [1 - 0.05 / 0.50000001, -2 + 0.1 / 1.00000001] = [0.900000002, -1.900000001].
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "models/optim/adam.h"
#include "tests/models/test_util.h"

namespace tinyddp::optim {
namespace {

constexpr DType kF64 = DType::f64;
const std::vector<std::vector<double>> kGrads = {{0.5, -1.0}, {0.1, 0.3}, {-0.2, 0.0}};

// The update of adam.h's comment, in plain doubles, for one element (AdamW's with decoupled).
std::vector<std::vector<double>> by_hand(const AdamOptions& o, bool decoupled = false) {
  std::vector<double> p{1.0, -2.0}, m(2, 0.0), v(2, 0.0), vmax(2, 0.0);
  std::vector<std::vector<double>> out;
  for (size_t t = 1; t <= kGrads.size(); ++t) {
    for (size_t i = 0; i < 2; ++i) {
      double g = o.maximize ? -kGrads[t - 1][i] : kGrads[t - 1][i];
      if (decoupled) {
        p[i] *= 1 - o.lr * o.weight_decay;
      } else {
        g += o.weight_decay * p[i];
      }
      m[i] = o.betas.first * m[i] + (1 - o.betas.first) * g;
      v[i] = o.betas.second * v[i] + (1 - o.betas.second) * g * g;
      vmax[i] = std::max(vmax[i], v[i]);
      const double bc1 = 1 - std::pow(o.betas.first, t), bc2 = 1 - std::pow(o.betas.second, t);
      const double denom = std::sqrt(o.amsgrad ? vmax[i] : v[i]) / std::sqrt(bc2) + o.eps;
      p[i] -= o.lr / bc1 * m[i] / denom;
    }
    out.push_back(p);
  }
  return out;
}

std::vector<std::vector<double>> run(const AdamOptions& o, DType dtype = kF64) {
  Tensor p = from_vector<double>({1.0, -2.0}, {2}, dtype).requires_grad_();
  Adam adam({p}, o);
  std::vector<std::vector<double>> out;
  for (const auto& g : kGrads) {
    p.set_grad(from_vector<double>(g, {2}, dtype));
    adam.step();
    out.push_back(p.to_vector<double>());
  }
  EXPECT_EQ(adam.step_count(0), 3);
  return out;
}

struct Case {
  const char* name;
  AdamOptions options;
  std::vector<std::vector<double>> pytorch;   // torch.optim.Adam(**options), float64, after steps 1, 2, 3
};

TEST(Adam, ThreeStepsEqualHandComputedAndPyTorch) {
  const std::vector<Case> cases = {
      {"lr=0.1", {.lr = 0.1},
       {{0.900000002, -1.900000001}, {0.8196959063846518, -1.8572151424292265}, {0.785260531835489, -1.8241423228510014}}},
      {"weight_decay=0.1", {.lr = 0.1, .weight_decay = 0.1},
       {{0.9000000016666666, -1.9000000008333333}, {0.8136483454297575, -1.8400703555381717},
        {0.7598997572221902, -1.7846241917957342}}},
      // amsgrad differs from plain Adam only where v falls (element 1 at step 3: g = 0).
      {"amsgrad", {.lr = 0.1, .amsgrad = true},
       {{0.900000002, -1.900000001}, {0.8196959063846518, -1.8572151424292265}, {0.785260531835489, -1.8241588633966868}}},
      {"betas=(0.5, 0.9), eps=1e-3, maximize", {.lr = 0.05, .betas = {0.5, 0.9}, .eps = 1e-3, .maximize = true},
       {{1.0499001996007984, -2.04995004995005}, {1.0829795158749915, -2.0591729331998896},
        {1.0806424855793408, -2.0641471075121767}}},
  };
  for (const Case& c : cases) {
    const auto ours = run(c.options);
    const auto hand = by_hand(c.options);
    for (size_t t = 0; t < 3; ++t) {
      for (size_t i = 0; i < 2; ++i) {
        EXPECT_NEAR(ours[t][i], hand[t][i], 1e-15) << c.name << " step " << t + 1 << " element " << i;
        EXPECT_NEAR(ours[t][i], c.pytorch[t][i], 1e-15) << c.name << " step " << t + 1 << " element " << i;
      }
    }
  }
}

// AdamW: the decay multiplies p before the moments and never enters them (1.13's _single_tensor_adamw).
TEST(AdamW, ThreeStepsEqualHandComputedAndPyTorch) {
  struct WCase {
    const char* name;
    AdamWOptions options;
    std::vector<std::vector<double>> pytorch;   // torch.optim.AdamW(**options), float64, after steps 1, 2, 3
  };
  const std::vector<WCase> cases = {
      {"lr=0.1 (weight_decay 1e-2 by default)", {.lr = 0.1},
       {{0.899000002, -1.898000001}, {0.8177969063826518, -1.8533171424282264},
        {0.7825437349271064, -1.8183910057075732}}},
      {"weight_decay=0.5, amsgrad", {.lr = 0.1, .weight_decay = 0.5, .amsgrad = true},
       {{0.8500000019999999, -1.800000001}, {0.7271959062846518, -1.6672151423792263},
        {0.6564007364212564, -1.5507981062277252}}},
      {"betas=(0.5, 0.9), maximize", {.lr = 0.05, .betas = {0.5, 0.9}, .maximize = true},
       {{1.049499999, -2.0489999995000003}, {1.0821486231227744, -2.057211159534456},
        {1.0792628470977634, -2.06116540312635}}},
  };
  for (const WCase& c : cases) {
    Tensor p = from_vector<double>({1.0, -2.0}, {2}, kF64).requires_grad_();
    AdamW adamw({p}, c.options);
    const AdamWOptions& w = c.options;
    const auto hand = by_hand({w.lr, w.betas, w.eps, w.weight_decay, w.amsgrad, w.maximize}, /*decoupled=*/true);
    for (size_t t = 0; t < 3; ++t) {
      p.set_grad(from_vector<double>(kGrads[t], {2}, kF64));
      adamw.step();
      const auto ours = p.to_vector<double>();
      for (size_t i = 0; i < 2; ++i) {
        EXPECT_NEAR(ours[i], hand[t][i], 1e-15) << c.name << " step " << t + 1 << " element " << i;
        EXPECT_NEAR(ours[i], c.pytorch[t][i], 1e-15) << c.name << " step " << t + 1 << " element " << i;
      }
    }
    EXPECT_EQ(adamw.step_count(0), 3);
  }
  Tensor p = zeros({1}, kF64).requires_grad_();
  EXPECT_EQ(AdamW({p}).options().weight_decay, 1e-2);   // 1.13's default
  EXPECT_EQ(testing_util::error_of([&] { AdamW({p}, {.weight_decay = -1}); }), "Invalid weight_decay value: -1");
}

// adam_update refuses state that does not match its parameter (a loaded state_dict of other shapes), rather
// than reading past a buffer.
TEST(Adam, UpdateRejectsMismatchedState) {
  Tensor p = zeros({2}, kF64).requires_grad_();
  const Tensor g = ones({2}, kF64);
  EXPECT_THAT(testing_util::error_of([&] {
                adam_update(p, g, zeros({3}, kF64), zeros({2}, kF64), Tensor(), 1.0, {}, false);
              }),
              testing::HasSubstr("Adam: the state 'exp_avg' of a parameter of dtype float64 and shape [2] is float64 "
                                 "of shape [3]"));
  EXPECT_THAT(testing_util::error_of([&] {
                adam_update(p, g, zeros({2}, kF64), zeros({2}, kF64), Tensor(), 1.0, {.amsgrad = true}, true);
              }),
              testing::HasSubstr("AdamW: the state 'max_exp_avg_sq' of a parameter of dtype float64 and shape [2] is "
                                 "missing"));
  EXPECT_EQ(p.to_vector<double>(), (std::vector<double>{0.0, 0.0}));
}

// In float32 the elementwise work follows PyTorch's kernels' operation order, so the results are PyTorch's
// float32 values bit for bit (torch.optim.Adam(lr=0.1), printed as float).
TEST(Adam, Float32MatchesPyTorchBitForBit) {
  const auto ours = run({.lr = 0.1}, DType::f32);
  const std::vector<std::vector<float>> pytorch = {{0.9000000357627869f, -1.899999976158142f},
                                                   {0.8196959495544434f, -1.857215166091919f},
                                                   {0.7852605581283569f, -1.824142336845398f}};
  for (size_t t = 0; t < 3; ++t) {
    for (size_t i = 0; i < 2; ++i) EXPECT_EQ(static_cast<float>(ours[t][i]), pytorch[t][i]) << t << " " << i;
  }
}

TEST(Adam, SkipsParametersWithoutGradAndKeepsIdentity) {
  Tensor a = from_vector<double>({1.0}, {1}, kF64).requires_grad_();
  Tensor b = from_vector<double>({2.0}, {1}, kF64).requires_grad_();
  Adam adam({a, b}, {.lr = 0.5});
  a.set_grad(from_vector<double>({1.0}, {1}, kF64));
  const uint64_t version = a.version();
  adam.step();
  EXPECT_NEAR(a.item(), 0.5, 1e-7);   // first step: p -= lr * g / (|g| + eps)
  EXPECT_GT(a.version(), version);
  EXPECT_EQ(b.item(), 2.0);
  EXPECT_EQ(adam.step_count(1), 0);
  EXPECT_FALSE(adam.exp_avg(1).defined());
}

TEST(Adam, RejectsInvalidOptionsWithPyTorchTexts) {
  using testing_util::error_of;
  Tensor p = zeros({1}, kF64).requires_grad_();
  EXPECT_EQ(error_of([&] { Adam({p}, {.lr = -1}); }), "Invalid learning rate: -1");
  EXPECT_EQ(error_of([&] { Adam({p}, {.betas = {1.0, 0.999}}); }), "Invalid beta parameter at index 0: 1");
  EXPECT_EQ(error_of([&] { Adam({p}, {.eps = -1e-8}); }), "Invalid epsilon value: -1e-08");
}

}  // namespace
}  // namespace tinyddp::optim
