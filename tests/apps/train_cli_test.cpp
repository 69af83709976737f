// `tinyddp train` end to end, short: the command line runs a toy2 GradNorm run and its --json has the schema
// DESIGN.md promises; the CSV and the plot are written; two runs are identical; 2 DDP ranks (threads) train
// what 1 process trains, with the task weights bitwise equal on both ranks.
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "apps/tinyddp/commands.h"
#include "apps/tinyddp/train/train.h"
#include "tests/apps/train_test_util.h"

namespace tinyddp::app {
namespace {

using test::run_cli;

// A short toy2 run: 30 steps of 20 rows over 200 training rows, 50 held out.
TrainOptions short_toy2(const std::string& weighting = "gradnorm") {
  TrainOptions o;
  o.experiment = "toy2";
  o.weighting = weighting;
  o.steps = 30;
  o.batch_size = 20;
  o.train_rows = 200;
  o.test_rows = 50;
  o.report_steps = {0, 10, 30};
  o.history_every = 5;
  o.progress = false;
  return o;
}

std::filesystem::path temp_path(const std::string& name) {
  return std::filesystem::temp_directory_path() / ("tinyddp_train_test_" + std::to_string(::getpid()) + "_" + name);
}

TEST(TrainCli, ShortToy2RunPrintsTheJsonSchema) {
  // The CLI has no --train-rows (the experiments' sizes are fixed); 40 steps of the real toy2 data are quick.
  auto [code, out] = run_cli({"train", "--experiment", "toy2", "--weighting", "gradnorm", "--steps", "40",
                              "--report-steps", "0,20,40", "--json", "--quiet"});
  ASSERT_EQ(code, 0) << out;
  const nlohmann::json j = nlohmann::json::parse(out);
  EXPECT_EQ(j["experiment"], "toy2");
  EXPECT_EQ(j["weighting"], "gradnorm");
  EXPECT_EQ(j["steps"], 40);
  ASSERT_TRUE(j["weights"].is_array());
  ASSERT_EQ(j["weights"].size(), 2u);
  double sum = 0;
  for (const auto& w : j["weights"]) {
    EXPECT_GT(w.get<double>(), 0.0);
    sum += w.get<double>();
  }
  EXPECT_NEAR(sum, 2.0, 1e-9) << "GradNorm keeps sum w = T";
  ASSERT_TRUE(j["history"].is_array());
  ASSERT_FALSE(j["history"].empty());
  for (const auto& row : j["history"]) {
    ASSERT_TRUE(row.contains("step") && row.contains("weights") && row.contains("losses")) << row.dump();
    EXPECT_EQ(row["weights"].size(), 2u);
    EXPECT_EQ(row["losses"].size(), 2u);
  }
  EXPECT_EQ(j["history"].front()["step"], 0);
  EXPECT_EQ(j["history"].back()["step"], 40);
  ASSERT_TRUE(j["metric"].is_number());
  EXPECT_TRUE(std::isfinite(j["metric"].get<double>()));
  EXPECT_LT(j["metric"].get<double>(), 2.0) << "40 steps must make some progress on held-out data";
  ASSERT_EQ(j["report"].size(), 3u);
  EXPECT_EQ(j["report"][0]["weights_normalized"], nlohmann::json({0.5, 0.5}));
  // The values, not only the shapes: the command prints what the library call computes.
  TrainOptions o;
  o.experiment = "toy2";
  o.weighting = "gradnorm";
  o.steps = 40;
  o.report_steps = {0, 20, 40};
  o.progress = false;
  EXPECT_EQ(j, train_to_json(run_train(o)));
}

TEST(TrainCli, TableNamesTheStepsAndTheMetric) {
  auto [code, out] = run_cli({"train", "--experiment", "recsys", "--weighting", "fixed", "--steps", "20",
                              "--report-steps", "0,10,20", "--quiet"});
  ASSERT_EQ(code, 0);
  EXPECT_NE(out.find("regression"), std::string::npos) << out;
  EXPECT_NE(out.find("classification"), std::string::npos) << out;
  EXPECT_NE(out.find("0.500 (1)"), std::string::npos) << out;
  EXPECT_NE(out.find("Final metric"), std::string::npos) << out;
  // The whole table is the library's report of the same run, but for the wall time in its header.
  const auto without_time = [](const std::string& table) {
    return std::regex_replace(table, std::regex(R"(, [0-9][0-9.e+-]* s\n)"), ", <wall time> s\n");
  };
  TrainOptions o;
  o.experiment = "recsys";
  o.weighting = "fixed";
  o.steps = 20;
  o.report_steps = {0, 10, 20};
  o.progress = false;
  std::ostringstream expected;
  print_train_report(expected, run_train(o));
  EXPECT_EQ(without_time(out), without_time(expected.str()));
  EXPECT_NE(without_time(out), out) << "the header's wall time moved";
}

TEST(TrainCli, RejectsUnknownWeighting) {
  CLI::App app;
  int exit_code = -1;
  add_train_command(app, &exit_code);
  std::vector<std::string> args{"tinyddp", "train", "--weighting", "gradnrom"};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  EXPECT_THROW(app.parse(static_cast<int>(argv.size()), argv.data()), CLI::ValidationError);
}

TEST(TrainCli, WeightsOptimizerFlagSelectsSgdAndRejectsOthers) {
  auto [code, out] = run_cli({"train", "--experiment", "recsys", "--weighting", "gradnorm", "--steps", "5",
                              "--weights-optimizer", "sgd", "--lr-weights", "0.01", "--json", "--quiet"});
  ASSERT_EQ(code, 0) << out;
  const nlohmann::json j = nlohmann::json::parse(out);
  EXPECT_EQ(j["options"]["weights_optimizer"], "sgd");
  EXPECT_EQ(j["options"]["lr_weights"], 0.01);
  TrainOptions o;
  o.experiment = "recsys";
  o.steps = 5;
  o.weights_optimizer = "sgd";
  o.lr_weights = 0.01;
  o.progress = false;
  EXPECT_EQ(j, train_to_json(run_train(o)));
  o.weights_optimizer = "adam";
  EXPECT_NE(j["weights"], train_to_json(run_train(o))["weights"]) << "the flag changed nothing";

  CLI::App app;
  int exit_code = -1;
  add_train_command(app, &exit_code);
  std::vector<std::string> args{"tinyddp", "train", "--weights-optimizer", "adagrad"};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  EXPECT_THROW(app.parse(static_cast<int>(argv.size()), argv.data()), CLI::ValidationError);
}

TEST(Train, CsvHasAHeaderAndOneLinePerHistoryRow) {
  const TrainResult r = run_train(short_toy2());
  const auto path = temp_path("run.csv");
  write_csv(path.string(), r);
  std::ifstream f(path);
  std::string header;
  std::getline(f, header);
  EXPECT_EQ(header.rfind("step,w_task0,w_task1,wn_task0,wn_task1,loss_task0,loss_task1,ratio_task0,ratio_task1", 0), 0u)
      << header;
  size_t lines = 0;
  std::string line, last;
  while (std::getline(f, line)) ++lines, last = line;
  EXPECT_EQ(lines, r.history.size());
  EXPECT_EQ(last.rfind("30,", 0), 0u) << last;
  std::filesystem::remove(path);
}

TEST(Train, SvgPlotIsWritten) {
  const TrainResult r = run_train(short_toy2());
  const auto path = temp_path("plot.svg");
  EXPECT_EQ(write_plot(path.string(), r), path.string());
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  EXPECT_NE(s.str().find("<svg"), std::string::npos);
  EXPECT_NE(s.str().find("<polyline"), std::string::npos);
  std::filesystem::remove(path);
}

TEST(Train, TwoRunsAreIdentical) {
  for (const char* kind : {"gradnorm", "uncertainty"}) {
    const nlohmann::json a = train_to_json(run_train(short_toy2(kind)));
    const nlohmann::json b = train_to_json(run_train(short_toy2(kind)));
    EXPECT_EQ(a.dump(), b.dump()) << kind;
  }
}

// Both GradNorm variants, with the task weights stepped by Adam (the default) and by SGD.
TEST(Train, TwoThreadRanksEqualOneProcessAndKeepWeightsIdentical) {
  for (const char* kind : {"gradnorm", "gradnorm-squared"}) {
    for (const char* weights_optimizer : {"adam", "sgd"}) {
      SCOPED_TRACE(std::string(kind) + ", weights " + weights_optimizer);
      TrainOptions o = short_toy2(kind);
      o.weights_optimizer = weights_optimizer;
      o.dtype = DType::f64;
      o.optimizer = "sgd";   // the network's; Adam's sqrt(v) + eps would also agree, SGD keeps it simple
      o.lr = 1e-4;
      o.history_every = 1;
      const TrainResult one = run_train(o);
      o.ranks = 2;
      const TrainResult two = run_train(o);
      EXPECT_EQ(two.world, 2);
      EXPECT_EQ(two.options.weights_optimizer, weights_optimizer);
      EXPECT_TRUE(two.weights_identical_across_ranks);
      EXPECT_TRUE(two.replicas_in_sync);
      EXPECT_TRUE(two.warnings.empty()) << ::testing::PrintToString(two.warnings);
      EXPECT_EQ(one.weight_updates, 30);
      EXPECT_EQ(one.clamped_updates, two.clamped_updates);
      ASSERT_EQ(one.history.size(), two.history.size());
      for (size_t k = 0; k < one.history.size(); ++k)
        for (size_t i = 0; i < 2; ++i) {
          EXPECT_NEAR(one.history[k].weights[i], two.history[k].weights[i], 1e-9) << "step " << one.history[k].step;
          EXPECT_NEAR(one.history[k].losses[i], two.history[k].losses[i], 1e-9 * std::abs(one.history[k].losses[i]));
        }
      EXPECT_GT(std::abs(one.final_weights[0] - 1.0), 0.05) << "the weights barely moved: the comparison shows little";
      EXPECT_NEAR(one.metric, two.metric, 1e-9);
    }
  }
}

// --grad-norm gram: the same training as direct to rounding (f64), for both GradNorm variants, on one process
// and on 2 thread ranks (the rows allgathered), with the weights identical across ranks; refused for the
// weightings it does not apply to.
TEST(Train, GramGradNormTrainsLikeDirectOnOneAndTwoRanks) {
  for (const char* kind : {"gradnorm", "gradnorm-squared"}) {
    SCOPED_TRACE(kind);
    TrainOptions o = short_toy2(kind);
    o.dtype = DType::f64;
    o.optimizer = "sgd";
    o.lr = 1e-4;
    o.history_every = 1;
    const TrainResult direct = run_train(o);
    o.grad_norm = "gram";
    const TrainResult gram = run_train(o);
    o.ranks = 2;
    const TrainResult gram_two = run_train(o);
    EXPECT_EQ(train_to_json(gram).at("options").at("grad_norm"), "gram");
    EXPECT_TRUE(gram_two.weights_identical_across_ranks);
    EXPECT_TRUE(gram_two.replicas_in_sync);
    EXPECT_EQ(gram.weight_updates, 30);
    ASSERT_EQ(direct.history.size(), gram.history.size());
    ASSERT_EQ(gram.history.size(), gram_two.history.size());
    size_t measured = 0;   // history rows with G_i (the final row has none)
    for (size_t k = 0; k < direct.history.size(); ++k) {
      const HistoryRow &d = direct.history[k], &g = gram.history[k], &g2 = gram_two.history[k];
      ASSERT_EQ(g.grad_norms.size(), d.grad_norms.size()) << d.step;
      for (size_t i = 0; i < d.grad_norms.size(); ++i)
        EXPECT_NEAR(g.grad_norms[i], d.grad_norms[i], 1e-9 * d.grad_norms[i]) << "step " << d.step;
      measured += !d.grad_norms.empty();
      for (size_t i = 0; i < 2; ++i) {
        EXPECT_NEAR(g.weights[i], d.weights[i], 1e-9) << "step " << d.step;
        EXPECT_NEAR(g2.weights[i], g.weights[i], 1e-9) << "step " << g.step;
      }
    }
    EXPECT_EQ(measured, 30u);
    EXPECT_GT(std::abs(gram.final_weights[0] - 1.0), 0.05) << "the weights barely moved: the comparison shows little";
  }

  TrainOptions fixed = short_toy2("fixed");
  fixed.grad_norm = "gram";
  try {
    run_train(fixed);
    ADD_FAILURE() << "--grad-norm gram was accepted with --weighting fixed";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("applies to --weighting gradnorm and gradnorm-squared only"),
              std::string::npos) << e.what();
  }
}

// Adam moves a weight by at most about lr per update; SGD by lr * ||grad_W L_i||, which on toy2 (n_1 in the
// hundreds) throws w_1 into the clamp.
TEST(Train, WeightsOptimizerOptionReachesGradNorm) {
  TrainOptions o = short_toy2();
  o.history_every = 1;
  const TrainResult adam = run_train(o);
  EXPECT_EQ(adam.options.weights_optimizer, "adam") << "the default";
  for (size_t k = 1; k < adam.history.size(); ++k)
    EXPECT_LT(std::abs(adam.history[k].weights[0] - adam.history[k - 1].weights[0]), 0.06) << adam.history[k].step;
  EXPECT_EQ(adam.clamped_updates, 0);
  o.weights_optimizer = "sgd";
  const TrainResult sgd = run_train(o);
  EXPECT_GT(sgd.clamped_updates, 0);
  const nlohmann::json j = train_to_json(sgd);
  EXPECT_EQ(j.at("options").at("weights_optimizer"), "sgd");
  EXPECT_EQ(j.at("clamped_updates").get<int64_t>(), sgd.clamped_updates);
  o.weights_optimizer = "rmsprop";
  try {
    run_train(o);
    ADD_FAILURE() << "an unknown weights optimizer was accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("expected adam"), std::string::npos) << e.what();
  }
}

// --freeze-after K: updates at steps 0..K only, then the learned weights stay.
TEST(Train, FreezeAfterKeepsTheWeightsLearnedByStepK) {
  TrainOptions o = short_toy2();
  o.history_every = 1;
  o.freeze_after = 9;
  const TrainResult r = run_train(o);
  EXPECT_EQ(r.weight_updates, 10);
  ASSERT_EQ(r.history.size(), 31u);
  EXPECT_NE(r.history[10].weights, r.history[0].weights);
  for (size_t k = 11; k < r.history.size(); ++k) EXPECT_EQ(r.history[k].weights, r.history[10].weights) << k;
  EXPECT_TRUE(r.history[20].grad_norms.empty()) << "a frozen step takes no per-task gradients";
}

}  // namespace
}  // namespace tinyddp::app
