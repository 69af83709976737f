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
#include "tests/apps/repro_golden.h"

namespace tinyddp::app {
namespace {

// The golden files' runs, in order: the seed's multi-task patterns, the patterns of issue 11, then create_graph
// and autograd.grad with static_graph (issue 18), gradient surgery (issue 16).
const std::vector<nlohmann::json>& golden_runs() {
  static const std::vector<nlohmann::json> runs = [] {
    std::vector<nlohmann::json> all;
    for (const char* file : {"ddp_scenarios.json", "ddp_patterns.json", "ddp_create_graph.json", "ddp_surgery.json"}) {
      const nlohmann::json golden = testing::read_golden(file);
      for (const auto& run : golden["runs"]) all.push_back(run);
    }
    return all;
  }();
  return runs;
}

using testing::options_of;

// A gloo transport error, which a rank gets when its peer's process exits while it waits in a collective:
// tinyddp's thread backend gives its own text there (the peer left), at the same call.
bool is_transport_error(const std::string& message) {
  return message.find("Connection closed by peer") != std::string::npos || message.find("gloo") != std::string::npos;
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

// What PyTorch prints under create_graph that tinyddp does not give as a warning: reducer.cpp's note is a C++
// glog line (C10_LOG_EVERY_N in Reducer::mark_variable_ready_dense), not a TORCH_WARN; `tinyddp repro
// create-graph` explains it instead. The engine's reference-cycle UserWarning (torch/csrc/autograd/engine.cpp) is
// the autograd engine's, which tinyddp's engine does not give.
bool is_create_graph_note(const nlohmann::json& w) {
  const std::string m = w["message"];
  return (w["source"] == "stderr" && w["level"] == "W" &&
          m.rfind("Using DistributedDataParallel with create_graph=True  is not well-supported.", 0) == 0) ||
         (w["source"] == "python" && m.rfind("Using backward() with create_graph=True will create a reference cycle", 0) == 0);
}

bool has_unsynced_warning(const ReproResult& r) {
  for (const auto& w : r.warnings)
    if (w.find("unsynchronized gradients") != std::string::npos || w.find("not averaged") != std::string::npos) return true;
  return false;
}

class ReproGolden : public ::testing::TestWithParam<size_t> {};

TEST_P(ReproGolden, MatchesPyTorch) {
  const auto& run = golden_runs()[GetParam()];
  SCOPED_TRACE(run["id"].get<std::string>() + ": " + run["plan"].get<std::string>());
  const ReproResult r = run_repro(run["scenario"], run["plan"], options_of(run["options"]));
  // PyTorch's rank left waiting for a peer that exited is "hung" (or raises gloo's transport error): tinyddp
  // releases it with an error, so the run's outcome is an error.
  EXPECT_EQ(r.outcome, run["outcome"] == "hang" ? "error" : run["outcome"]);
  if (run["error"].is_null()) {
    EXPECT_EQ(run["outcome"] == "hang", r.error.has_value());
  } else {
    ASSERT_TRUE(r.error);
    EXPECT_EQ(r.error->type, run["error"]["type"]);
    EXPECT_EQ(r.error->raised_at, run["error"]["raised_at"]);
    if (!is_transport_error(run["error"]["message"])) {
      EXPECT_EQ(r.error->message, run["error"]["message"]);
    }
  }
  // Every rank's own outcome: the same error at the same call, or released where PyTorch's rank waited.
  for (const auto& [rank, e] : run["errors_by_rank"].items()) {
    const RankResult& mine = r.ranks.at(std::stoul(rank));
    ASSERT_TRUE(mine.error) << "rank " << rank;
    EXPECT_EQ(mine.error->type, e["type"]) << "rank " << rank;
    EXPECT_EQ(mine.error->raised_at, e["raised_at"]) << "rank " << rank;
    if (is_transport_error(e["message"])) {
      EXPECT_NE(mine.error->message.find("left the process group"), std::string::npos) << mine.error->message;
    } else {
      EXPECT_EQ(mine.error->message, e["message"]) << "rank " << rank;
    }
  }
  if (run.contains("hung_ranks")) {
    for (const auto& [rank, h] : run["hung_ranks"].items()) {
      const RankResult& mine = r.ranks.at(std::stoul(rank));
      ASSERT_TRUE(mine.error) << "rank " << rank << " waited in PyTorch and must be released here";
      EXPECT_EQ(mine.error->raised_at, h["inside"]) << "rank " << rank;
      EXPECT_NE(mine.error->message.find("left the process group"), std::string::npos) << mine.error->message;
    }
  }
  if (run.contains("outcome_by_rank"))
    for (const auto& [rank, outcome] : run["outcome_by_rank"].items())
      if (outcome == "ok") {
        EXPECT_FALSE(r.ranks.at(std::stoul(rank)).error) << "rank " << rank;
      }
  EXPECT_EQ(r.replicas_in_sync, run["replicas_in_sync"].get<bool>());
  // Per iteration, where PyTorch's ranks all completed a backward (null elsewhere: grad(), uneven inputs).
  const auto& grads_in_sync = run["grads_in_sync_per_iteration"];
  bool drift = false;
  for (size_t it = 0; it < grads_in_sync.size(); ++it) {
    if (grads_in_sync[it].is_null()) continue;
    ASSERT_LT(it, r.grads_in_sync_per_iteration.size());
    ASSERT_TRUE(r.grads_in_sync_per_iteration[it].has_value()) << "iteration " << it + 1;
    EXPECT_EQ(*r.grads_in_sync_per_iteration[it], grads_in_sync[it].get<bool>()) << "iteration " << it + 1;
    drift |= !grads_in_sync[it].get<bool>();
  }
  // PyTorch's warnings, exactly: the same set, with tinyddp's additions set aside.
  std::set<std::string> pytorch, mine;
  // Python's warnings.warn texts as they are; c10's TORCH_WARN texts as printed to stderr.
  for (const auto& w : run["warnings_detail"])
    if (!is_create_graph_note(w)) pytorch.insert(w["source"] == "python" ? w["message"].get<std::string>() : pytorch_warning_text(w["message"]));
  for (const auto& log : run["info_logs"])
    if (is_info_log_tinyddp_warns(log["message"])) pytorch.insert(log["message"].get<std::string>());
  for (const auto& w : r.warnings)
    if (!is_tinyddp_addition(w)) mine.insert(w);
  EXPECT_EQ(mine, pytorch);
  // Beyond PyTorch: silent drift is reported. A run with no error whose gradients were not averaged (some
  // iteration's differ, or the replicas end apart) must carry tinyddp's warning, and any other run must not.
  if (!r.error) {
    drift |= !run["replicas_in_sync"].get<bool>();
    EXPECT_EQ(has_unsynced_warning(r), drift);
  }
}

std::string run_name(const ::testing::TestParamInfo<size_t>& info) {
  std::string id = golden_runs()[info.param]["id"];
  for (char& c : id)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return id;
}

INSTANTIATE_TEST_SUITE_P(AllRuns, ReproGolden, ::testing::Range<size_t>(0, golden_runs().size()), run_name);

// Every named scenario of `tinyddp repro --list` was run against PyTorch with the same plan and options.
TEST(ReproScenarios, EveryNamedScenarioHasGoldenData) {
  for (const Scenario& s : scenarios()) {
    bool found = false;
    for (const auto& run : golden_runs()) {
      const ReproOptions o = options_of(run["options"]);
      found |= run["plan"] == s.plan && static_cast<const PlanOptions&>(o) == s.options && o.debug == dist::DebugLevel::off;
    }
    EXPECT_TRUE(found) << s.name << " has no PyTorch golden run";
  }
}

// What `--list` says each named scenario does is what it does (and the golden runs above say PyTorch agrees).
TEST(ReproScenarios, ListedOutcomeIsWhatRuns) {
  for (const Scenario& s : scenarios()) {
    ReproOptions o;
    static_cast<PlanOptions&>(o) = s.options;
    o.timeout_ms = 10000;
    EXPECT_EQ(outcome_summary(run_repro(s.name, s.plan, o)), s.outcome) << s.name;
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
  EXPECT_EQ(plan_text(parse_plan("backward(a,create_graph);grad(b, retain ,create_graph)")),
            "backward(a, create_graph); grad(b, retain, create_graph)");
  EXPECT_THROW(parse_plan("backward(a, create_graph, retain)"), Error);   // retain first
  EXPECT_THROW(parse_plan("backward(a, retain, retain)"), Error);
  EXPECT_THROW(parse_plan("backward(a, keep)"), Error);
  EXPECT_THROW(parse_plan("forward(no_text, detach)"), Error);    // two text modes
  EXPECT_THROW(parse_plan("forward(ckpt2)"), Error);
  EXPECT_THROW(parse_plan("freeze(head_c)"), Error);
  EXPECT_THROW(parse_plan("iter(0){ step }"), Error);
  EXPECT_THROW(parse_plan("rank(1){ }"), Error);
  EXPECT_THROW(parse_plan("backward(a@0)"), Error);
  EXPECT_THROW(parse_plan("rank(0){ no_sync{ forward; no_sync{ forward } } }"), Error);
  EXPECT_EQ(plan_text(parse_plan("iter(2+){freeze(trunk.0)};rank(1){forward( features,no_text )};grad(a@1+0.5*t_outside, retain)")),
            "iter(2+){ freeze(trunk.0) }; rank(1){ forward(no_text, features) }; grad(a@1+0.5*t_outside, retain)");
}

// A term bound to a forward that did not run is a mistake in the plan: a usage error, not the program's.
TEST(ReproPlan, TermBoundToAForwardThatDidNotRunIsAPlanError) {
  try {
    run_repro("custom", "forward; backward(a@2)", {});
    ADD_FAILURE() << "no PlanError";
  } catch (const PlanError& e) {
    EXPECT_NE(std::string(e.what()).find("forward #2 of iteration 1"), std::string::npos) << e.what();
  }
}

TEST(ReproPlan, PerRankIterationCountsMustMatchTheRanks) {
  ReproOptions o;
  o.rank_iterations = {3, 2, 1};
  EXPECT_THROW(run_repro("custom", "forward; backward(a+b+t); step", o), Error);
}

TEST(ReproPlan, TermTAfterForwardWithoutTextIsAPlanError) {
  EXPECT_THROW(run_repro("custom", "forward(no_text); backward(a+t)", {}), PlanError);
}

}  // namespace
}  // namespace tinyddp::app
