// `tinyddp train --experiment toy2 --dtype f64 --steps 50` against its PyTorch 1.13 copy
// (tests/golden/gen_gradnorm_toy.py -> gradnorm_toy2.json): the same data stream, tinyddp's initial parameters,
// the same loop. For the task weights stepped by Adam (the default) and by SGD, every one of the 50 GradNorm
// updates must agree: the losses, G_i = ||grad_W w_i L_i||, the weights after the update (1e-6, absolute for the
// weights, relative for losses and norms), and which updates the clamp caught.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <unistd.h>

#include "apps/tinyddp/train/train.h"
#include "engine/hash.h"

namespace tinyddp::app {
namespace {

using nlohmann::json;

// f64 on both sides: the losses differ by summation order (~1e-15 relative), which 50 Adam steps of the network
// compound; 1e-6 leaves room for that and still fails on any wrong update rule (Adam moves w by ~0.025 a step).
constexpr double kTolerance = 1e-6;

json load_golden() {
  std::ifstream in("tests/golden/gradnorm_toy2.json");
  if (!in) in.open(std::string(TINYDDP_SOURCE_DIR) + "/tests/golden/gradnorm_toy2.json");
  EXPECT_TRUE(in.good()) << "tests/golden/gradnorm_toy2.json not found (run from the repository root)";
  return json::parse(in);
}

struct MaxDiff {
  double value = 0;
  std::string where;
  void add(double actual, double expected, double scale, const std::string& what) {
    const double d = std::abs(actual - expected) / scale;
    if (!(d <= value)) value = d, where = what;   // NaN is the worst
  }
};

TrainResult run_like_the_golden(const json& g, const std::string& weights_optimizer, const std::string& params_path) {
  TrainOptions o;
  o.experiment = g.at("experiment");
  o.weighting = "gradnorm";
  o.weights_optimizer = weights_optimizer;
  o.dtype = DType::f64;
  o.steps = g.at("steps").get<int64_t>();
  o.model_seed = g.at("model_seed").get<uint64_t>();
  o.data_seed = g.at("data_seed").get<uint64_t>();
  o.history_every = 1;
  o.test_rows = 100;   // held-out rows come after the training rows in the data stream: the batches are unchanged
  o.progress = false;
  o.save_initial_params = params_path;
  return run_train(o);
}

class TrainGradNormGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(TrainGradNormGolden, First50UpdatesMatchPyTorch) {
  const json g = load_golden();
  const std::string optimizer = GetParam();
  const std::filesystem::path params =
      std::filesystem::temp_directory_path() / ("tinyddp_golden_toy2_" + std::to_string(::getpid()) + ".params");
  const TrainResult r = run_like_the_golden(g, optimizer, params.string());

  // The golden started from these very parameters (the generator read the file this option writes).
  {
    std::ifstream in(params, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    char digest[17];
    std::snprintf(digest, sizeof digest, "%016llx", static_cast<unsigned long long>(fnv1a(bytes.data(), bytes.size())));
    EXPECT_EQ(digest, g.at("initial_params_fnv1a").get<std::string>())
        << "tinyddp's initial toy2 parameters changed; regenerate with /usr/bin/python3 tests/golden/gen_gradnorm_toy.py";
    std::filesystem::remove(params);
  }

  EXPECT_EQ(r.options.alpha.value(), g.at("alpha").get<double>());
  EXPECT_EQ(r.options.lr_weights, g.at("lr_weights").get<double>());
  EXPECT_EQ(r.options.batch_size.value(), g.at("batch_size").get<int64_t>());
  EXPECT_EQ(r.lr, g.at("net_lr").get<double>());
  const json& steps = g.at("runs").at(optimizer);
  ASSERT_EQ(steps.size(), 50u);
  ASSERT_EQ(r.history.size(), 51u);
  MaxDiff losses, norms, weights;
  int64_t clamped = 0;
  for (size_t t = 0; t < steps.size(); ++t) {
    const json& e = steps.at(t);
    const HistoryRow& now = r.history[t];       // iteration t: its losses and G_i, the weights w(t) it started from
    const HistoryRow& next = r.history[t + 1];  // the weights after iteration t's update
    ASSERT_EQ(now.step, static_cast<int64_t>(t));
    for (size_t i = 0; i < 2; ++i) {
      const std::string at = "step " + std::to_string(t) + ", task " + std::to_string(i);
      const double L = e.at("losses")[i], G = e.at("grad_norms")[i];
      losses.add(now.losses[i], L, std::abs(L), "loss, " + at);
      norms.add(now.grad_norms[i], G, std::abs(G), "G, " + at);
      weights.add(now.weights[i], e.at("loss_weights")[i].get<double>(), 1.0, "w(t), " + at);
      weights.add(next.weights[i], e.at("weights")[i].get<double>(), 1.0, "w(t+1), " + at);
    }
    clamped += e.at("clamped").get<int>() > 0;
  }
  EXPECT_LE(losses.value, kTolerance) << "max relative loss difference, at " << losses.where;
  EXPECT_LE(norms.value, kTolerance) << "max relative G_i difference, at " << norms.where;
  EXPECT_LE(weights.value, kTolerance) << "max weight difference, at " << weights.where;
  EXPECT_EQ(r.weight_updates, 50);
  EXPECT_EQ(r.clamped_updates, clamped) << "updates whose step the clamp caught";
  std::cout << "[ golden ] " << optimizer << ": max |dw| " << weights.value << " (" << weights.where
            << "), max rel dL " << losses.value << ", max rel dG " << norms.value << ", clamped updates "
            << r.clamped_updates << " of 50\n";
}

INSTANTIATE_TEST_SUITE_P(WeightsOptimizer, TrainGradNormGolden, ::testing::Values("adam", "sgd"));

}  // namespace
}  // namespace tinyddp::app
