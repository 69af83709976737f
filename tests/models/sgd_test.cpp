// optim::SGD against PyTorch 1.13's update written out with plain doubles, and its option checks.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "models/nn/nn.h"
#include "tests/models/test_util.h"

namespace tinyddp {
namespace {

using ::testing::HasSubstr;
using testing_util::error_of;

// Fixed gradients for three steps of a two-element parameter starting at (1, -2).
const std::vector<double> kP0 = {1.0, -2.0};
const std::vector<std::vector<double>> kGrads = {{0.5, -0.25}, {-1.0, 0.75}, {0.125, 2.0}};

// PyTorch 1.13's _single_tensor_sgd for one scalar, by hand:
//   d = g + wd * p;  buf = d (first step) or momentum * buf + (1 - dampening) * d;
//   d = nesterov ? d + momentum * buf : buf;  p = p - lr * d.
std::vector<std::vector<double>> expected_trajectory(const optim::SGDOptions& o) {
  std::vector<double> p = kP0, buf(p.size());
  std::vector<std::vector<double>> out;
  for (size_t step = 0; step < kGrads.size(); ++step) {
    for (size_t j = 0; j < p.size(); ++j) {
      double d = kGrads[step][j] + o.weight_decay * p[j];
      if (o.momentum != 0.0) {
        buf[j] = step == 0 ? d : o.momentum * buf[j] + (1.0 - o.dampening) * d;
        d = o.nesterov ? d + o.momentum * buf[j] : buf[j];
      }
      p[j] = p[j] - o.lr * d;
    }
    out.push_back(p);
  }
  return out;
}

// Runs three SGD steps with the fixed gradients and checks p after each against `expected`.
void check_three_steps(const optim::SGDOptions& o, const std::vector<std::vector<double>>& expected) {
  Tensor p = from_vector<double>(kP0, {2}).requires_grad_();
  const void* storage = p.raw_data();
  optim::SGD opt({p}, o);
  for (size_t step = 0; step < kGrads.size(); ++step) {
    p.set_grad(from_vector<double>(kGrads[step], {2}));
    opt.step();
    const auto got = p.to_vector<double>();
    for (size_t j = 0; j < got.size(); ++j)
      EXPECT_NEAR(got[j], expected[step][j], 1e-14) << "step " << step + 1 << ", element " << j;
  }
  EXPECT_EQ(p.raw_data(), storage) << "step() must update the parameter in place";
  EXPECT_TRUE(p.is_leaf());
}

TEST(SGD, MomentumAndWeightDecayMatchHandComputedSteps) {
  const optim::SGDOptions o{.lr = 0.1, .momentum = 0.9, .dampening = 0.0, .weight_decay = 0.01};
  // Step 1 written out for element 0: d = 0.5 + 0.01 * 1 = 0.51, buf = 0.51, p = 1 - 0.1 * 0.51 = 0.949.
  // Step 2: d = -1 + 0.01 * 0.949 = -0.99051, buf = 0.9 * 0.51 - 0.99051 = -0.53151, p = 0.949 + 0.053151.
  const auto expected = expected_trajectory(o);
  EXPECT_NEAR(expected[0][0], 0.949, 1e-15);
  EXPECT_NEAR(expected[1][0], 0.949 + 0.053151, 1e-15);
  check_three_steps(o, expected);
}

TEST(SGD, NesterovMatchesHandComputedSteps) {
  const optim::SGDOptions o{.lr = 0.1, .momentum = 0.9, .dampening = 0.0, .weight_decay = 0.01, .nesterov = true};
  // Step 1, element 0: d = 0.51, buf = 0.51, d = 0.51 + 0.9 * 0.51 = 0.969, p = 1 - 0.0969 = 0.9031.
  const auto expected = expected_trajectory(o);
  EXPECT_NEAR(expected[0][0], 0.9031, 1e-15);
  check_three_steps(o, expected);
}

TEST(SGD, DampeningAndPlainSteps) {
  check_three_steps({.lr = 0.05, .momentum = 0.5, .dampening = 0.25}, expected_trajectory({.lr = 0.05, .momentum = 0.5,
                                                                                           .dampening = 0.25}));
  // No momentum: p -= lr * g exactly.
  check_three_steps({.lr = 0.5}, {{0.75, -1.875}, {1.25, -2.25}, {1.1875, -3.25}});
}

TEST(SGD, SkipsParametersWithoutGradAndKeepsBuffers) {
  Tensor a = from_vector<double>({1.0}, {1}).requires_grad_();
  Tensor b = from_vector<double>({2.0}, {1}).requires_grad_();
  optim::SGD opt({a, b}, {.lr = 1.0, .momentum = 0.5});
  a.set_grad(from_vector<double>({0.25}, {1}));
  opt.step();
  EXPECT_EQ(a.item(), 0.75);
  EXPECT_EQ(b.item(), 2.0);
  EXPECT_TRUE(opt.momentum_buffer(0).defined());
  EXPECT_FALSE(opt.momentum_buffer(1).defined());
  // The first buffer is a copy of d_p, not an alias of .grad: changing .grad must not change it.
  NoGradGuard no_grad;
  Tensor g = a.grad();
  g.fill_(100.0);
  EXPECT_EQ(opt.momentum_buffer(0).item(), 0.25);
}

TEST(SGD, ZeroGradBothModes) {
  nn::Linear lin(2, 2);
  optim::SGD opt(lin.parameters(), {.lr = 0.1});
  lin(ones({1, 2})).sum().backward();
  const void* storage = lin.weight().grad().raw_data();
  opt.zero_grad();
  ASSERT_TRUE(lin.weight().grad().defined());
  EXPECT_EQ(lin.weight().grad().raw_data(), storage);
  EXPECT_THAT(lin.weight().grad().to_vector<float>(), ::testing::Each(0.0f));
  opt.zero_grad(true);
  EXPECT_FALSE(lin.weight().grad().defined());
  EXPECT_FALSE(lin.bias().grad().defined());
}

TEST(SGD, RejectsInvalidOptionsWithPyTorchMessages) {
  auto make = [](optim::SGDOptions o) { return error_of([&] { optim::SGD({zeros({1}).requires_grad_()}, o); }); };
  EXPECT_EQ(make({.lr = -1}), "Invalid learning rate: -1");
  EXPECT_EQ(make({.lr = 0.1, .momentum = -0.5}), "Invalid momentum value: -0.5");
  EXPECT_EQ(make({.lr = 0.1, .weight_decay = -0.01}), "Invalid weight_decay value: -0.01");
  EXPECT_EQ(make({.lr = 0.1, .nesterov = true}), "Nesterov momentum requires a momentum and zero dampening");
  EXPECT_EQ(make({.lr = 0.1, .momentum = 0.9, .dampening = 0.1, .nesterov = true}),
            "Nesterov momentum requires a momentum and zero dampening");
  EXPECT_THAT(make({}), HasSubstr("learning rate is required"));
  EXPECT_EQ(error_of([] { optim::SGD({}, {.lr = 0.1}); }), "optimizer got an empty parameter list");
  Tensor leaf = zeros({1}).requires_grad_();
  EXPECT_THAT(error_of([&] { optim::SGD({leaf * 2.0}, {.lr = 0.1}); }), HasSubstr("can't optimize a non-leaf Tensor"));
}

}  // namespace
}  // namespace tinyddp
