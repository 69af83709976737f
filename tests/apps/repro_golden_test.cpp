// Every scenario PyTorch 1.13.1 was run on (tests/golden/ddp_scenarios.json, made by gen_ddp_scenarios.py
// with gloo, 2 processes) gives the same outcome under `tinyddp repro` on 2 thread ranks: the same
// exception type, the exact message, the same call (raised_at), the same replicas_in_sync and the same
// per-iteration gradient synchronization. PyTorch's warnings appear too, and wherever PyTorch silently
// left gradients un-averaged, tinyddp warns.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "apps/tinyddp/repro/repro.h"
#include "apps/tinyddp/repro/scenarios.h"

namespace tinyddp::app {
namespace {

const nlohmann::json& golden() {
  static const nlohmann::json g = [] {
    std::ifstream f("tests/golden/ddp_scenarios.json");
    EXPECT_TRUE(f.good()) << "run the tests from the repository root";
    return nlohmann::json::parse(f);
  }();
  return g;
}

ReproOptions options_of(const nlohmann::json& o) {
  ReproOptions r;
  r.find_unused_parameters = o["find_unused_parameters"];
  r.static_graph = o["static_graph"];
  r.extra_unused_parameter = o["extra_unused_parameter"];
  r.same_data = o["same_data"];
  r.iterations = o["iterations"];
  r.bucket_cap_mb = o["bucket_cap_mb"];
  const std::string d = o["debug"];
  r.debug = d == "INFO" ? dist::DebugLevel::info : d == "DETAIL" ? dist::DebugLevel::detail : dist::DebugLevel::off;
  r.timeout_ms = 10000;
  return r;
}

// PyTorch's warnings as the golden file keeps them, printed by c10's stderr handler: "Warning: " + the
// TORCH_WARN text + " (function operator())" (the lambda that warned). Both decorations are stripped, nothing
// else; a warning without them is reported.
std::string pytorch_warning_text(const std::string& printed) {
  static const std::string prefix = "Warning: ", suffix = " (function operator())";
  const bool decorated = printed.size() >= prefix.size() + suffix.size() && printed.rfind(prefix, 0) == 0 &&
                         printed.compare(printed.size() - suffix.size(), suffix.size(), suffix) == 0;
  EXPECT_TRUE(decorated) << "not as c10 prints a warning: " << printed;
  if (!decorated) return printed;
  return printed.substr(prefix.size(), printed.size() - prefix.size() - suffix.size());
}

// tinyddp's own warnings, which PyTorch 1.13 does not give (it stays silent): the reports of gradients that are
// never averaged (reducer.h, Note [Hooks the reducer does not expect]; DDP's check before step), all prefixed
// "tinyddp: ", and the reducer's note that no_sync() around a backward alone has no effect.
bool is_tinyddp_addition(const std::string& w) {
  return w.rfind("tinyddp: ", 0) == 0 || w.rfind("backward() ran inside no_sync() but the forward", 0) == 0;
}

// One of PyTorch's debug-level INFO log lines that tinyddp gives as a warning (it has no INFO log): at DETAIL, the
// static graph's parameters unused in the first iteration (reducer.cpp, delay_all_reduce).
bool is_info_log_tinyddp_warns(const std::string& message) {
  return message.find("is(are) unused during first iteration. Since static_graph=True") != std::string::npos;
}

bool has_unsynced_warning(const ReproResult& r) {
  for (const auto& w : r.warnings)
    if (w.find("unsynchronized gradients") != std::string::npos || w.find("not averaged") != std::string::npos) return true;
  return false;
}

class ReproGolden : public ::testing::TestWithParam<size_t> {};

TEST_P(ReproGolden, MatchesPyTorch) {
  const auto& run = golden()["runs"][GetParam()];
  SCOPED_TRACE(run["id"].get<std::string>() + ": " + run["plan"].get<std::string>());
  const ReproResult r = run_repro(run["scenario"], run["plan"], options_of(run["options"]));
  EXPECT_EQ(r.outcome, run["outcome"]);
  if (run["error"].is_null()) {
    EXPECT_FALSE(r.error) << r.error->message;
  } else {
    ASSERT_TRUE(r.error);
    EXPECT_EQ(r.error->type, run["error"]["type"]);
    EXPECT_EQ(r.error->raised_at, run["error"]["raised_at"]);
    EXPECT_EQ(r.error->message, run["error"]["message"]);
    // Every rank that raised in PyTorch raises the same here (the message names the rank).
    for (const auto& [rank, e] : run["errors_by_rank"].items()) {
      const RankResult& mine = r.ranks.at(std::stoul(rank));
      ASSERT_TRUE(mine.error) << "rank " << rank;
      EXPECT_EQ(mine.error->message, e["message"]) << "rank " << rank;
    }
  }
  EXPECT_EQ(r.replicas_in_sync, run["replicas_in_sync"].get<bool>());
  EXPECT_EQ(r.grads_in_sync_per_iteration, run["grads_in_sync_per_iteration"].get<std::vector<bool>>());
  // PyTorch's warnings, exactly: the same set, with tinyddp's additions set aside.
  std::set<std::string> pytorch, mine;
  for (const auto& w : run["warnings"]) pytorch.insert(pytorch_warning_text(w.get<std::string>()));
  for (const auto& log : run["info_logs"])
    if (is_info_log_tinyddp_warns(log["message"])) pytorch.insert(log["message"].get<std::string>());
  for (const auto& w : r.warnings)
    if (!is_tinyddp_addition(w)) mine.insert(w);
  EXPECT_EQ(mine, pytorch);
  // Beyond PyTorch: silent drift is reported. A run with no error whose gradients were not averaged in
  // some iteration must carry tinyddp's warning, and a run whose gradients were always averaged must not.
  if (!r.error) {
    bool drift = false;
    for (bool in_sync : run["grads_in_sync_per_iteration"]) drift |= !in_sync;
    EXPECT_EQ(has_unsynced_warning(r), drift);
  }
}

std::string run_name(const ::testing::TestParamInfo<size_t>& info) {
  std::string id = golden()["runs"][info.param]["id"];
  for (char& c : id)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return id;
}

INSTANTIATE_TEST_SUITE_P(AllRuns, ReproGolden, ::testing::Range<size_t>(0, golden()["runs"].size()), run_name);

// Every named scenario of `tinyddp repro --list` was run against PyTorch with the same plan and options.
TEST(ReproScenarios, EveryNamedScenarioHasGoldenData) {
  for (const Scenario& s : scenarios()) {
    bool found = false;
    for (const auto& run : golden()["runs"]) {
      const auto& o = run["options"];
      found |= run["plan"] == s.plan && o["find_unused_parameters"] == s.find_unused_parameters &&
               o["static_graph"] == s.static_graph && o["extra_unused_parameter"] == s.extra_unused_parameter;
    }
    EXPECT_TRUE(found) << s.name << " has no PyTorch golden run";
  }
}

// The plan language rejects what it cannot run, saying where.
TEST(ReproPlan, ParseErrorsNamePosition) {
  try {
    parse_plan("forward; backwards(a)");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("position"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("backwards"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_plan("forward; backward(a + q)"), Error);
  EXPECT_THROW(parse_plan("no_sync{ no_sync{ forward } }"), Error);
  EXPECT_EQ(plan_text(parse_plan(" forward ;backward( a+0.5*b , retain );step")), "forward; backward(a+0.5*b, retain); step");
}

TEST(ReproPlan, TermTAfterForwardWithoutTextIsAValueError) {
  const ReproResult r = run_repro("custom", "forward(no_text); backward(a+t)", {});
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->type, "ValueError");
  EXPECT_EQ(r.error->raised_at, "backward #1 of iteration 1");
}

}  // namespace
}  // namespace tinyddp::app
