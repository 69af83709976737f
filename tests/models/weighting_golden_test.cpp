// GradNorm (paper and squared variant) against the PyTorch 1.13 reference of tests/golden/gen_gradnorm.py:
// 10 steps of a float64 SharedBottomMLP, each a weight update followed by an SGD step of the network on
// sum_i w_i(t) L_i. Every recorded quantity (losses, G_i, targets, r_i, dw, L_grad, w) and the final network
// parameters must agree to 1e-9 (absolute, or relative above magnitude 1).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>

#include "models/multitask/multitask.h"
#include "models/weighting/loss_weighting.h"
#include "tests/models/test_util.h"

namespace tinyddp::models {
namespace {

using nlohmann::json;

constexpr DType kF64 = DType::f64;
// f64 on both sides; the only differences are summation orders (~1e-15 relative), compounded over 10 steps
// of a network whose weights feed back into the losses.
constexpr double kTolerance = 1e-9;

using testing_util::load_json;
using testing_util::tensor_of;

void expect_close(const std::string& what, const std::vector<double>& actual, const std::vector<double>& expected) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  double max_diff = 0;
  size_t worst = 0;
  bool ok = true;
  for (size_t i = 0; i < actual.size(); ++i) {
    const double diff = std::abs(actual[i] - expected[i]);
    if (!(diff <= kTolerance * std::max(1.0, std::abs(expected[i])))) ok = false;   // NaN fails too
    if (!(diff <= max_diff)) max_diff = diff, worst = i;
  }
  EXPECT_TRUE(ok) << what << ": max |difference| " << max_diff << " at element " << worst << " (expected "
                  << expected[worst] << ", got " << actual[worst] << "), tolerance " << kTolerance;
}

void replay(const std::string& variant, const std::string& kind) {
  const json golden = load_json("tests/golden/gradnorm_" + variant + ".json");
  SharedBottomMLP model(4, {8, 8}, 3, kF64);
  nn::load_parameters(model, golden.at("params").get<std::string>());
  // gen_gradnorm.py steps the weights by plain SGD (the Adam default is checked by gen_gradnorm_toy.py's golden).
  WeightingOptions options{.lr = golden.at("lr").get<double>(), .weights_optimizer = WeightsOptimizer::sgd,
                           .min_weight = golden.at("min_weight").get<double>()};
  if (golden.contains("alpha")) options.alpha = golden.at("alpha").get<double>();
  auto weighting = make_weighting(kind, golden.at("T").get<int>(), options);
  optim::SGD sgd(model.parameters(), {.lr = golden.at("net_lr").get<double>()});

  const json& batches = golden.at("batches");
  const json& steps = golden.at("steps");
  ASSERT_EQ(steps.size(), 10u);
  for (size_t t = 0; t < steps.size(); ++t) {
    SCOPED_TRACE(variant + " step " + std::to_string(t));
    const json& b = batches.at(t);
    const json& e = steps.at(t);
    MultiTaskBatch batch{tensor_of(b.at("x")),
                         {tensor_of(b.at("y_reg")),
                          from_vector<int64_t>(b.at("y_cls").get<std::vector<int64_t>>(),
                                               {static_cast<int64_t>(b.at("y_cls").size())}, DType::i64)}};
    std::vector<Tensor> L = model.task_losses(batch);
    WeightingStep rec = weighting->observe(L, model.last_shared_weight(), static_cast<int64_t>(t));
    ASSERT_TRUE(rec.updated) << rec.skipped;
    expect_close("losses", rec.losses, e.at("losses"));
    expect_close("baseline", rec.baseline, e.at("baseline"));
    expect_close("G", rec.grad_norms, e.at("grad_norms"));
    expect_close("targets", rec.targets, e.at("targets"));
    expect_close("r", rec.loss_ratios, e.at("loss_ratios"));
    expect_close("d balance / dw", rec.weight_grads, e.at("weight_grads"));
    expect_close("balance loss", {rec.balance_loss}, {e.at("balance_loss").get<double>()});
    if (e.contains("total_grad_norm")) {
      expect_close("G_W", {rec.total_grad_norm}, {e.at("total_grad_norm").get<double>()});
    }
    expect_close("w(t), the weights total_loss applies", weighting->loss_weights(), e.at("loss_weights"));
    expect_close("w(t+1)", rec.weights, e.at("weights"));

    sgd.zero_grad();
    weighting->total_loss(L).backward();
    sgd.step();
  }
  for (const auto& [name, p] : model.named_parameters()) {
    expect_close("final " + name, p.to_vector<double>(),
                 golden.at("final_params").at(name).at("values").get<std::vector<double>>());
  }
}

TEST(GradNormGolden, PaperVariantMatchesPyTorchReferenceFor10Updates) { replay("paper", "gradnorm"); }

TEST(GradNormGolden, SquaredVariantMatchesPyTorchReferenceFor10Updates) { replay("squared", "gradnorm-squared"); }

}  // namespace
}  // namespace tinyddp::models
