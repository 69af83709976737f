// The multi-task models that loss weightings train (models/multitask): structure, parameter names, the
// shared layer W, and per-task losses equal to the losses computed by hand from the heads.
#include <gtest/gtest.h>

#include "models/multitask/multitask.h"
#include "models/weighting/loss_weighting.h"
#include "tests/models/test_util.h"

namespace tinyddp::models {
namespace {

using testing_util::error_of;

constexpr DType kF64 = DType::f64;

std::vector<std::string> names_of(const nn::Module& m) {
  std::vector<std::string> names;
  for (const auto& [name, p] : m.named_parameters()) names.push_back(name);
  return names;
}

TEST(SharedBottomMLP, StructureSharedWeightAndLosses) {
  manual_seed(5);
  SharedBottomMLP m(4, {8, 6}, 3, kF64);
  EXPECT_EQ(names_of(m), (std::vector<std::string>{"trunk.0.weight", "trunk.0.bias", "trunk.2.weight", "trunk.2.bias",
                                                   "reg_head.weight", "reg_head.bias", "cls_head.weight",
                                                   "cls_head.bias"}));
  EXPECT_TRUE(m.last_shared_weight().is_same(m.parameter("trunk.2.weight")));
  EXPECT_EQ(m.last_shared_weight().shape(), (Shape{6, 8}));
  EXPECT_EQ(m.num_tasks(), 2);
  EXPECT_EQ(m.task_names(), (std::vector<std::string>{"regression", "classification"}));

  Tensor x = randn({5, 4}, kF64), y = randn({5, 1}, kF64), c = randint(0, 3, {5});
  std::vector<Tensor> L = m.task_losses({x, {y, c}});
  ASSERT_EQ(L.size(), 2u);
  Tensor h = relu(addmm(m.parameter("trunk.2.bias"), relu(addmm(m.parameter("trunk.0.bias"), x,
                                                                 m.parameter("trunk.0.weight").t())),
                        m.parameter("trunk.2.weight").t()));
  EXPECT_DOUBLE_EQ(L[0].item(), mse_loss(addmm(m.parameter("reg_head.bias"), h, m.parameter("reg_head.weight").t()), y).item());
  EXPECT_DOUBLE_EQ(L[1].item(),
                   cross_entropy(addmm(m.parameter("cls_head.bias"), h, m.parameter("cls_head.weight").t()), c).item());
  // Both tasks reach W; a 1-D regression target is accepted as (N, 1).
  for (const Tensor& l : L) EXPECT_TRUE(autograd::grad({l}, {m.last_shared_weight()}, {}, {.retain_graph = true})[0].defined());
  EXPECT_DOUBLE_EQ(m.task_losses({x, {y.reshape({5}), c}})[0].item(), L[0].item());
  const std::string message = error_of([&] { m.task_losses({x, {y}}); });
  EXPECT_NE(message.find("expected 2 target tensor(s) (y_reg (N, 1) and y_cls (N,) int64)"), std::string::npos)
      << message;
}

TEST(MultiRegressionMLP, PaperToyNetworkTaskIsOutputColumn) {
  manual_seed(6);
  // The paper's toy network: 4 ReLU layers of 100 on 250 inputs, an affine head with T = 10 outputs.
  MultiRegressionMLP m(250, 100, 4, 10, 1, kF64);
  EXPECT_EQ(names_of(m).size(), 10u);
  EXPECT_EQ(names_of(m).back(), "head.bias");
  EXPECT_TRUE(m.last_shared_weight().is_same(m.parameter("trunk.6.weight")));
  EXPECT_EQ(m.last_shared_weight().shape(), (Shape{100, 100}));
  EXPECT_EQ(m.parameter("head.weight").shape(), (Shape{10, 100}));
  EXPECT_EQ(m.task_names()[9], "task9");
  Tensor x = randn({3, 250}, kF64), y = randn({3, 10}, kF64);
  std::vector<Tensor> L = m.task_losses({x, {y}});
  ASSERT_EQ(L.size(), 10u);
  Tensor prediction = m(x);
  for (int i = 0; i < 10; ++i) {
    EXPECT_DOUBLE_EQ(L[i].item(), mse_loss(prediction.narrow(1, i, 1), y.narrow(1, i, 1)).item()) << i;
  }
  const std::string message = error_of([&] { m.task_losses({x, {randn({3, 9}, kF64)}}); });
  EXPECT_NE(message.find("targets[0] must be (N, 10)"), std::string::npos) << message;
}

TEST(MultiRegressionMLP, OutputsPerTaskAreColumnBlocks) {
  manual_seed(7);
  MultiRegressionMLP m(5, 4, 2, 3, 2, kF64);   // T = 3 tasks of K = 2 outputs each: head Linear(4, 6)
  EXPECT_TRUE(m.last_shared_weight().is_same(m.parameter("trunk.2.weight")));
  Tensor x = randn({4, 5}, kF64), y = randn({4, 6}, kF64);
  std::vector<Tensor> L = m.task_losses({x, {y}});
  Tensor prediction = m(x);
  EXPECT_DOUBLE_EQ(L[2].item(), mse_loss(prediction.narrow(1, 4, 2), y.narrow(1, 4, 2)).item());
}

// One GradNorm training step on each model runs and trains: every parameter gets a gradient.
TEST(MultiTaskModels, OneGradNormStepReachesEveryParameter) {
  manual_seed(8);
  SharedBottomMLP m(4, {8, 8}, 3, kF64);
  auto weighting = make_weighting("gradnorm", m.num_tasks(), {.task_names = m.task_names()});
  Tensor x = randn({6, 4}, kF64), y = randn({6, 1}, kF64), c = randint(0, 3, {6});
  std::vector<Tensor> L = m.task_losses({x, {y, c}});
  EXPECT_TRUE(weighting->observe(L, m.last_shared_weight(), 0).updated);
  weighting->total_loss(L).backward();
  for (const auto& [name, p] : m.named_parameters()) EXPECT_TRUE(p.grad().defined()) << name;
}

}  // namespace
}  // namespace tinyddp::models
