// `tinyddp train --grad-report` and `--trace`: the report works with every weighting, on 2 DDP ranks it equals
// the one-process report (it is computed from the global gradient), it agrees with GradNorm's own G_i, it is in
// the text and the JSON; bad steps are refused; --trace writes a trace with both ranks' steps.
// (Constructed cases -- a detached head, opposite gradients, closed forms -- are in tests/models/grad_report_test.)
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <filesystem>
#include <set>
#include <sstream>

#include "apps/tinyddp/commands.h"
#include "apps/tinyddp/train/train.h"
#include "dist/trace_file.h"
#include "tests/apps/train_test_util.h"

namespace tinyddp::app {
namespace {

using test::run_cli;

// 20 steps of 20 rows over 200 training rows, f64 so that 2 ranks and 1 process agree to rounding.
TrainOptions small_toy2(const std::string& weighting) {
  TrainOptions o;
  o.experiment = "toy2";
  o.weighting = weighting;
  o.steps = 20;
  o.batch_size = 20;
  o.train_rows = 200;
  o.test_rows = 40;
  o.report_steps = {0, 20};
  o.grad_report_steps = {0, 10};
  o.progress = false;
  o.dtype = DType::f64;
  return o;
}

TEST(TrainGradReport, EveryWeightingReportsEveryTask) {
  for (const std::string weighting : {"fixed", "uncertainty", "gradnorm", "gradnorm-squared"}) {
    SCOPED_TRACE(weighting);
    const TrainResult r = run_train(small_toy2(weighting));
    ASSERT_EQ(r.grad_reports.size(), 2u);
    EXPECT_EQ(r.grad_reports[0].step, 0);
    EXPECT_EQ(r.grad_reports[1].step, 10);
    for (const models::GradReport& g : r.grad_reports) {
      ASSERT_EQ(g.tasks.size(), 2u);
      EXPECT_TRUE(g.flagged().empty());
      for (const models::TaskGradRow& t : g.tasks) {
        EXPECT_GT(t.grad_norm, 0);
        EXPECT_GT(t.weight, 0);
        EXPECT_NEAR(t.weighted_grad_norm, t.weight * t.grad_norm, 1e-12 * t.grad_norm);
        EXPECT_TRUE(std::isfinite(t.target));
      }
      ASSERT_TRUE(g.cosine[0][1].has_value());
      EXPECT_LE(std::abs(*g.cosine[0][1]), 1.0);
    }
    // Step 0 is the baseline: L~ = r = 1 and the target is mean(w G).
    const models::GradReport& g0 = r.grad_reports[0];
    EXPECT_EQ(g0.tasks[0].ratio, 1.0);
    EXPECT_NEAR(g0.tasks[1].target, (g0.tasks[0].weighted_grad_norm + g0.tasks[1].weighted_grad_norm) / 2, 1e-12);
    EXPECT_EQ(g0.tasks[0].name, "task0");
    // What the step's backward applies at step 0: 1, or exp(-0)/2 for uncertainty weighting.
    EXPECT_EQ(g0.tasks[0].weight, weighting == "uncertainty" ? 0.5 : 1.0);
  }
}

TEST(TrainGradReport, TwoRanksReportWhatOneProcessReports) {
  const TrainResult one = run_train(small_toy2("gradnorm"));
  TrainOptions o = small_toy2("gradnorm");
  o.ranks = 2;
  const TrainResult two = run_train(o);
  ASSERT_EQ(two.world, 2);
  ASSERT_EQ(two.grad_reports.size(), one.grad_reports.size());
  for (size_t k = 0; k < one.grad_reports.size(); ++k)
    for (size_t i = 0; i < 2; ++i) {
      const models::TaskGradRow &a = one.grad_reports[k].tasks[i], &b = two.grad_reports[k].tasks[i];
      EXPECT_NEAR(a.loss, b.loss, 1e-10 * a.loss);
      EXPECT_NEAR(a.grad_norm, b.grad_norm, 1e-9 * a.grad_norm) << "step " << one.grad_reports[k].step;
      EXPECT_NEAR(a.target, b.target, 1e-9 * a.target);
      EXPECT_NEAR(a.ratio, b.ratio, 1e-10);
      EXPECT_NEAR(*one.grad_reports[k].cosine[0][1], *two.grad_reports[k].cosine[0][1], 1e-9);
    }
}

TEST(TrainGradReport, AgreesWithGradNormsHistory) {
  // GradNorm (no EMA, no warm-up, updates every step) records its G_i = ||grad_W w_i L_i|| in the history.
  const TrainResult r = run_train(small_toy2("gradnorm"));
  for (const models::GradReport& g : r.grad_reports) {
    const HistoryRow* h = nullptr;
    for (const HistoryRow& row : r.history)
      if (row.step == g.step) h = &row;
    ASSERT_NE(h, nullptr);
    ASSERT_EQ(h->grad_norms.size(), 2u);
    for (size_t i = 0; i < 2; ++i) {
      EXPECT_NEAR(g.tasks[i].weighted_grad_norm, h->grad_norms[i], 1e-12 * h->grad_norms[i]);
      EXPECT_NEAR(g.tasks[i].weight, h->weights[i], 1e-15);
    }
  }
}

TEST(TrainGradReport, StepsOutsideTheRunAreRefused) {
  TrainOptions o = small_toy2("fixed");
  o.grad_report_steps = {20};   // 20 steps: iterations 0..19
  try {
    run_train(o);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--grad-report step 20 is outside 0..19"), std::string::npos) << e.what();
  }
}

TEST(TrainGradReport, TextAndJson) {
  auto [code, text] = run_cli({"train", "--experiment", "toy2", "--weighting", "gradnorm", "--steps", "6",
                               "--report-steps", "0,6", "--grad-report", "0,5", "--quiet"});
  ASSERT_EQ(code, 0) << text;
  EXPECT_NE(text.find("Per-task gradients on the shared layer W"), std::string::npos) << text;
  EXPECT_NE(text.find("cosine between task gradients"), std::string::npos) << text;
  EXPECT_NE(text.find("\nstep 5\n"), std::string::npos) << text;

  auto [jcode, out] = run_cli({"train", "--experiment", "toy2", "--steps", "6", "--report-steps", "0,6",
                               "--grad-report", "3", "--json", "--quiet"});
  ASSERT_EQ(jcode, 0) << out;
  const nlohmann::json j = nlohmann::json::parse(out);
  ASSERT_EQ(j["grad_report"].size(), 1u);
  const nlohmann::json& g = j["grad_report"][0];
  EXPECT_EQ(g["step"], 3);
  ASSERT_EQ(g["tasks"].size(), 2u);
  for (const char* key : {"name", "loss", "inverse_rate", "ratio", "grad_norm", "weight", "weighted_grad_norm",
                          "target", "reaches_shared", "status", "causes"})
    EXPECT_TRUE(g["tasks"][0].contains(key)) << key;
  EXPECT_EQ(g["tasks"][1]["status"], "ok");
  EXPECT_EQ(g["cosine"].size(), 2u);
  EXPECT_EQ(g["cosine"][0][0], 1.0);

  // Without the flag the JSON has no grad_report key (the schema of plain runs is unchanged).
  auto [pcode, plain] = run_cli({"train", "--experiment", "toy2", "--steps", "2", "--report-steps", "0,2", "--json",
                                 "--quiet"});
  ASSERT_EQ(pcode, 0);
  EXPECT_FALSE(nlohmann::json::parse(plain).contains("grad_report"));
}

TEST(TrainGradReport, DetachedHeadIsFlaggedOnEveryRank) {
  // --detach-task task1: task1's head reads trunk.detach(). Its loss still trains the head, but has no path to
  // W; the report flags it at every step, on 2 ranks as in one process. The run itself is unaffected otherwise
  // (every parameter still gets a gradient, so DDP sees nothing wrong).
  for (int ranks : {1, 2}) {
    SCOPED_TRACE("ranks " + std::to_string(ranks));
    TrainOptions o = small_toy2("fixed");
    o.ranks = ranks;
    o.detach_tasks = {"task1"};
    const TrainResult r = run_train(o);
    ASSERT_EQ(r.grad_reports.size(), 2u);
    for (const models::GradReport& g : r.grad_reports) {
      EXPECT_EQ(g.tasks[0].status, "ok");
      EXPECT_EQ(g.tasks[1].status, "disconnected");
      EXPECT_FALSE(g.tasks[1].reaches_shared);
      EXPECT_EQ(g.tasks[1].grad_norm, 0.0);
      EXPECT_NE(g.tasks[1].causes.at(0).find(".detach()"), std::string::npos);
      EXPECT_FALSE(g.cosine[0][1].has_value());
    }
    EXPECT_TRUE(r.replicas_in_sync);
    EXPECT_TRUE(r.warnings.empty());
  }
  std::ostringstream text;
  TrainOptions o = small_toy2("uncertainty");
  o.detach_tasks = {"task1"};
  print_grad_reports(text, run_train(o));
  EXPECT_NE(text.str().find("! task1: disconnected from the shared layer"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("- a .detach() (a stop-gradient)"), std::string::npos) << text.str();

  o.detach_tasks = {"task7"};
  try {
    run_train(o);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("its tasks are task0, task1"), std::string::npos) << e.what();
  }
}

TEST(TrainTrace, TwoThreadRanksInOneFile) {
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("tinyddp_train_trace_" + std::to_string(::getpid()) + ".json");
  auto [code, out] = run_cli({"train", "--experiment", "toy2", "--ranks", "2", "--steps", "3", "--report-steps",
                              "0,3", "--quiet", "--json", "--trace", path.string()});
  ASSERT_EQ(code, 0) << out;
  const nlohmann::json t = dist::read_trace(path.string());
  EXPECT_EQ(t["otherData"]["command"], "tinyddp train");
  std::set<int> pids;
  std::set<std::pair<int, int64_t>> iterations;   // (rank, iteration)
  int hooks = 0, buckets = 0, optimizer_steps = 0;
  for (const auto& e : t["traceEvents"]) {
    if (e["ph"] == "M") continue;
    pids.insert(e["pid"].get<int>());
    if (e["cat"] == "iteration") iterations.insert({e["pid"].get<int>(), e["args"]["iteration"].get<int64_t>()});
    hooks += e["cat"] == "hook";
    buckets += e["cat"] == "bucket";
    optimizer_steps += e["name"] == "optimizer step";
  }
  EXPECT_EQ(pids, (std::set<int>{0, 1}));
  EXPECT_EQ(iterations.size(), 6u) << "3 steps on each of 2 ranks, iterations 1..3";
  EXPECT_TRUE(iterations.count({1, 3}));
  EXPECT_GT(hooks, 0);
  EXPECT_GT(buckets, 0);
  EXPECT_EQ(optimizer_steps, 6);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace tinyddp::app
