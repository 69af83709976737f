// GradNorm's Gram-matrix norm (WeightingOptions::grad_norm = gram, Note [GradNorm's Gram-matrix norm] in
// models/weighting/gradnorm.h): ||g_i|| from the shared layer's input and output gradient equals the norm of
// g_i formed directly, on 2-D and on 3-D layer inputs, step after step, and so do the squared variant's G_W
// and weights; and every way of calling it wrongly is a clear error. The DDP form (allgather_rows) is in
// tests/dist/gradnorm_ddp_test.cpp.
#include <gtest/gtest.h>

#include <cmath>

#include "models/multitask/multitask.h"
#include "models/optim/sgd.h"
#include "models/weighting/gradnorm.h"
#include "models/weighting/linear_tap.h"
#include "tests/models/test_util.h"

namespace tinyddp::models {
namespace {

using testing_util::error_of;

WeightingOptions with(GradNormMethod method) {
  WeightingOptions o;
  o.alpha = 1.5;
  o.lr = 0.025;
  o.grad_norm = method;
  return o;
}

void expect_relative(const std::vector<double>& actual, const std::vector<double>& expected, double rtol,
                     const std::string& what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  for (size_t i = 0; i < actual.size(); ++i) {
    EXPECT_GT(expected[i], 0.0) << what << "[" << i << "]: a zero norm would make the comparison vacuous";
    EXPECT_NEAR(actual[i], expected[i], rtol * std::abs(expected[i])) << what << "[" << i << "]";
  }
}

// Both methods observe the same losses of the same network at every step; the network trains with the direct
// weighting's total loss, so the states move as in real training.
void compare_on_mlp(const std::string& kind, DType dtype, double rtol) {
  manual_seed(11);
  SharedBottomMLP net(12, {16, 8}, 3, dtype);
  MultiTaskBatch batch{.x = randn({10, 12}, dtype), .targets = {randn({10, 1}, dtype), randint(0, 3, {10})}};
  LinearTap tap(net.last_shared_layer());
  auto direct = make_weighting(kind, 2, with(GradNormMethod::direct));
  auto gram = make_weighting(kind, 2, with(GradNormMethod::gram));
  ASSERT_FALSE(direct->needs_layer_io());
  ASSERT_TRUE(gram->needs_layer_io());
  optim::SGD sgd(net.parameters(), {.lr = 0.1});
  for (int step = 0; step < 4; ++step) {
    const std::vector<Tensor> L = net.task_losses(batch);
    const WeightingStep a = direct->observe(L, net.last_shared_weight(), step);
    const WeightingStep b = gram->observe_shared(
        L, {.weight = net.last_shared_weight(), .layer_input = tap.input(), .layer_output = tap.output()}, step);
    ASSERT_TRUE(a.updated && b.updated) << step;
    expect_relative(b.grad_norms, a.grad_norms, rtol, "G at step " + std::to_string(step));
    if (kind == "gradnorm-squared") {
      expect_relative({b.total_grad_norm}, {a.total_grad_norm}, rtol, "G_W at step " + std::to_string(step));
    }
    expect_relative(b.weights, a.weights, rtol, "w after step " + std::to_string(step));
    sgd.zero_grad();
    direct->total_loss(L).backward();
    sgd.step();
  }
}

TEST(GradNormGram, NormsEqualTheDirectOnesOnAnMLPInF64) {
  compare_on_mlp("gradnorm", DType::f64, 1e-10);
  compare_on_mlp("gradnorm-squared", DType::f64, 1e-10);   // G_W from <g_i, g_j> against create_graph's
}

// f32: both form their products in f32 (g_i, or the Gram matrices), so they agree to f32's rounding.
TEST(GradNormGram, NormsEqualTheDirectOnesOnAnMLPInF32) {
  compare_on_mlp("gradnorm", DType::f32, 1e-5);
  compare_on_mlp("gradnorm-squared", DType::f32, 1e-5);
}

// A layer applied to (N, S, I): the rows are all N S positions, and g_i = sum over all of them.
TEST(GradNormGram, LeadingDimsAreFlattenedIntoRows) {
  manual_seed(5);
  auto layer = std::make_shared<nn::Linear>(4, 3, true, DType::f64);
  LinearTap tap(layer);
  const Tensor x = randn({5, 2, 4}, DType::f64);
  const Tensor z = (*layer)(x);
  ASSERT_TRUE(tap.input().defined() && tap.output().defined());
  EXPECT_EQ(tap.output().shape(), (Shape{5, 2, 3}));
  const Tensor act = tanh(z);
  const std::vector<Tensor> L{(act * act).sum() / 10.0, (z * z).mean()};   // nonnegative, as GradNorm needs
  auto direct = make_weighting("gradnorm", 2, with(GradNormMethod::direct));
  auto gram = make_weighting("gradnorm", 2, with(GradNormMethod::gram));
  const WeightingStep a = direct->observe(L, layer->weight(), 0);
  const WeightingStep b = gram->observe_shared(
      L, {.weight = layer->weight(), .layer_input = tap.input(), .layer_output = tap.output()}, 0);
  expect_relative(b.grad_norms, a.grad_norms, 1e-12, "G");
}

TEST(GradNormGram, TheTapSeesTheLatestCallOnlyAndStopsWhenDestroyed) {
  auto layer = std::make_shared<nn::Linear>(2, 2);
  const Tensor x1 = randn({3, 2}), x2 = randn({4, 2});
  {
    LinearTap tap(layer);
    EXPECT_FALSE(tap.input().defined());
    (*layer)(x1);
    const Tensor z2 = (*layer)(x2);
    EXPECT_TRUE(tap.input().is_same(x2));
    EXPECT_TRUE(tap.output().is_same(z2));
    layer->forward(x1);   // a direct forward() runs no hook, as in PyTorch
    EXPECT_TRUE(tap.input().is_same(x2));
  }
  LinearTap later(layer);
  (*layer)(x1);
  EXPECT_TRUE(later.input().is_same(x1));
}

TEST(GradNormGram, MissingWrongOrDetachedLayerTensorsAreClearErrors) {
  manual_seed(2);
  auto layer = std::make_shared<nn::Linear>(4, 3);
  auto other = std::make_shared<nn::Linear>(3, 5);
  LinearTap tap(layer), other_tap(other);
  const Tensor z = (*layer)(randn({6, 4}));
  const Tensor y = (*other)(z);
  const std::vector<Tensor> L{(y * y).mean(), (y * y).sum()};
  auto gram = [] { return make_weighting("gradnorm", 2, with(GradNormMethod::gram)); };

  std::string message = error_of([&] { gram()->observe(L, layer->weight(), 0); });
  EXPECT_NE(message.find("needs the input and the output of W's layer"), std::string::npos) << message;
  EXPECT_NE(message.find("LinearTap"), std::string::npos) << message;
  // Another layer's tensors for W: the shapes say so.
  message = error_of([&] {
    gram()->observe_shared(L, {.weight = layer->weight(), .layer_input = other_tap.input(),
                               .layer_output = other_tap.output()}, 0);
  });
  EXPECT_NE(message.find("Pass the tensors of W's own layer"), std::string::npos) << message;
  message = error_of([&] {
    gram()->observe_shared(L, {.weight = layer->weight(), .layer_input = tap.input(),
                               .layer_output = tap.output().detach()}, 0);
  });
  EXPECT_NE(message.find("does not require grad"), std::string::npos) << message;
  // A DDP callback that does not stack every rank's rows.
  WeightingOptions bad_gather = with(GradNormMethod::gram);
  bad_gather.allgather_rows = [](const Tensor& rows) { return cat({rows, rows.narrow(0, 0, 1)}, 0); };
  message = error_of([&] {
    make_weighting("gradnorm", 2, bad_gather)
        ->observe_shared(L, {.weight = layer->weight(), .layer_input = tap.input(), .layer_output = tap.output()}, 0);
  });
  EXPECT_NE(message.find("allgather_rows returned [7, 10] for this rank's (6, 10)"), std::string::npos) << message;
  message = error_of([] { parse_grad_norm_method("ghost"); });
  EXPECT_NE(message.find("expected direct (the default"), std::string::npos) << message;
  EXPECT_EQ(parse_grad_norm_method(grad_norm_method_name(GradNormMethod::gram)), GradNormMethod::gram);
  EXPECT_EQ(parse_grad_norm_method(grad_norm_method_name(GradNormMethod::direct)), GradNormMethod::direct);
}

}  // namespace
}  // namespace tinyddp::models
