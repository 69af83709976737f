// `tinyddp repro`'s explanation never contradicts the outcome (issue 14, point 9): for every named scenario
// under every option that can change its outcome, the written why is shown only when the run ends as the
// scenario says, and a derived why starts with the run's own outcome. Custom plans get a why derived from
// the timeline and a fix checked by running again (point 6); plan mistakes are usage errors with a caret
// (points 4 and 10); warnings are counted over every rank (point 8).
#include <gtest/gtest.h>

#include "apps/tinyddp/repro/plan.h"
#include "apps/tinyddp/repro/repro.h"
#include "apps/tinyddp/repro/repro_explain.h"
#include "apps/tinyddp/repro/scenarios.h"

namespace tinyddp::app {
namespace {

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

struct Variant {
  std::string name;
  void (*apply)(ReproOptions&);
};

const std::vector<Variant>& variants() {
  static const std::vector<Variant> all = {
      {"as named", [](ReproOptions&) {}},
      {"--unsynced-grads error", [](ReproOptions& o) { o.unsynced_grads = dist::UnsyncedGradPolicy::error; }},
      {"--unsynced-grads ignore", [](ReproOptions& o) { o.unsynced_grads = dist::UnsyncedGradPolicy::ignore; }},
      {"find_unused toggled", [](ReproOptions& o) { o.find_unused_parameters = !o.find_unused_parameters; }},
      {"static_graph toggled", [](ReproOptions& o) { o.static_graph = !o.static_graph; }},
      {"--iterations 1", [](ReproOptions& o) {
         o.iterations = 1;
         o.rank_iterations.clear();
       }},
      {"--same-data", [](ReproOptions& o) { o.same_data = true; }},
  };
  return all;
}

TEST(ReproExplain, WhyNeverContradictsTheOutcomeForEveryScenarioAndOption) {
  int written = 0, derived = 0;
  for (const Scenario& s : scenarios()) {
    for (const Variant& v : variants()) {
      SCOPED_TRACE(s.name + " with " + v.name);
      ReproOptions o;
      static_cast<PlanOptions&>(o) = s.options;
      v.apply(o);
      ReproResult r;
      try {
        r = run_repro(s.name, s.plan, o);
      } catch (const PlanError&) {
        continue;   // e.g. iterations per rank with --iterations 1 cleared: not a run
      }
      const Explanation x = explain(r, /*try_alternatives=*/false);
      const std::string outcome = outcome_summary(r);
      if (!x.scenario.empty()) {
        ++written;
        EXPECT_EQ(x.scenario, s.name);
        EXPECT_EQ(outcome, s.outcome) << "the written why of a scenario shown for another outcome";
        EXPECT_EQ(x.why, s.why);
      } else {
        ++derived;
        if (r.error) {
          EXPECT_TRUE(starts_with(x.why, outcome)) << x.why;
        } else {
          EXPECT_TRUE(starts_with(x.why, "No error")) << x.why;
          EXPECT_EQ(x.why.find(r.replicas_in_sync ? "end apart" : "end in sync"), std::string::npos) << x.why;
        }
        EXPECT_NE(x.note.find("derived from this run"), std::string::npos) << x.note;
      }
      if (r.error) {
        EXPECT_FALSE(starts_with(x.why, "No error")) << x.why;
      }
    }
  }
  // Every scenario as named keeps its written explanation; some variants change the outcome.
  EXPECT_GE(written, static_cast<int>(scenarios().size()));
  EXPECT_GT(derived, 0);
}

TEST(ReproExplain, FindUnusedWithUnsyncedGradsErrorIsExplainedAsTheErrorItIs) {
  ReproOptions o;
  o.find_unused_parameters = true;
  o.unsynced_grads = dist::UnsyncedGradPolicy::error;
  const Scenario& s = *find_scenario("find-unused");
  const ReproResult r = run_repro(s.name, s.plan, o);
  ASSERT_TRUE(r.error);
  const Explanation x = explain(r, false);
  EXPECT_TRUE(x.scenario.empty());
  EXPECT_TRUE(starts_with(x.why, "RuntimeError at backward #2 of iteration 1")) << x.why;
  EXPECT_NE(x.why.find("--unsynced-grads error"), std::string::npos) << x.why;
  EXPECT_NE(x.note.find("--unsynced-grads error"), std::string::npos) << x.note;
}

TEST(ReproExplain, ACustomPlanThatIsANamedScenarioSaysWhich) {
  const ReproResult r = run_repro("custom", "forward;backward(a,retain);backward(b + t);step", {});
  const Explanation x = explain(r, false);
  EXPECT_NE(x.note.find("the named scenario 'two-backward'"), std::string::npos) << x.note;
  EXPECT_EQ(x.scenario, "two-backward");
  ReproOptions o;
  o.static_graph = true;
  const Explanation other = explain(run_repro("custom", "forward; backward(a+b+t); step", o), false);
  EXPECT_NE(other.note.find("This is the plan of the named scenario 'combined-loss'"), std::string::npos) << other.note;
}

TEST(ReproExplain, ParametersMarkedTwiceAreNamedWithTheirCalls) {
  const ReproResult r = run_repro("custom", "forward; backward(a, retain); backward(a+b+t); step", {});
  ASSERT_TRUE(r.error);
  const Explanation x = explain(r, true);
  EXPECT_NE(x.why.find("Parameter head_a.bias (5) was marked ready twice: in backward #1 of iteration 1 and again "
                       "in backward #2 of iteration 1 (on every rank)"),
            std::string::npos)
      << x.why;
  EXPECT_NE(x.fix.find("Call backward once per forward"), std::string::npos) << x.fix;
  ASSERT_EQ(x.alternatives.size(), 2u);
  EXPECT_TRUE(starts_with(x.alternatives[0], "--find-unused-parameters: ")) << x.alternatives[0];
}

TEST(ReproExplain, ParametersThatNeverGetAGradientAndTheOptionThatFixesIt) {
  const ReproResult r = run_repro("custom", "forward(no_text); backward(a); step", {});
  ASSERT_TRUE(r.error);
  const Explanation x = explain(r, true);
  EXPECT_TRUE(starts_with(x.why, "RuntimeError at forward #1 of iteration 2")) << x.why;
  EXPECT_NE(x.why.find("No gradient reached head_b.weight (6), head_b.bias (7), text_decoder.weight (8), "
                       "text_decoder.bias (9) after the forward of iteration 1"),
            std::string::npos)
      << x.why;
  EXPECT_TRUE(starts_with(x.fix, "This plan runs with the replicas in sync with --find-unused-parameters")) << x.fix;
}

TEST(ReproExplain, AnOkRunNeedsNoFix) {
  const Explanation x = explain(run_repro("custom", "forward; backward(b+a+t); step", {}), true);
  EXPECT_EQ(x.why, "No error, and the replicas end in sync.");
  EXPECT_TRUE(x.fix.empty());
  EXPECT_TRUE(x.alternatives.empty());
}

// Warnings: each distinct one once, with how often and where, counted alike on every rank.
TEST(ReproWarnings, CountedOverEveryRankAndIteration) {
  const Scenario& s = *find_scenario("find-unused");
  ReproOptions o;
  static_cast<PlanOptions&>(o) = s.options;
  const ReproResult r = run_repro(s.name, s.plan, o);
  bool unsynced = false;
  for (const auto& w : r.warning_counts) {
    if (w.text.find("unsynchronized gradients on rank <r>") == std::string::npos) continue;
    unsynced = true;
    EXPECT_EQ(w.count, 6);   // 3 iterations x 2 ranks
    EXPECT_EQ(w.ranks, (std::vector<int>{0, 1}));
  }
  EXPECT_TRUE(unsynced);
  for (size_t i = 0; i < r.warning_counts.size(); ++i)
    for (size_t j = i + 1; j < r.warning_counts.size(); ++j) EXPECT_NE(r.warning_counts[i].text, r.warning_counts[j].text);
}

// Plan mistakes: usage errors naming the place, not a reproduced ValueError.
std::string plan_error_of(const std::string& plan, ReproOptions o = {}) {
  try {
    run_repro("custom", plan, o);
  } catch (const PlanError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no PlanError for " << plan;
  return "";
}

TEST(ReproPlanErrors, AScaleOutOfRangeIsAPlanErrorWithACaret) {
  const std::string e = plan_error_of("forward; backward(1e400*a); step");
  EXPECT_TRUE(starts_with(e, "plan: expected a scale: a finite number above 0")) << e;
  EXPECT_NE(e.find("but found '1e400'"), std::string::npos) << e;
  EXPECT_NE(e.find("\n  forward; backward(1e400*a); step\n                    ^~~~~\n"), std::string::npos) << e;
  EXPECT_EQ(plan_text(parse_plan("backward(2.5e-1*a+1e3*b)")), "backward(0.25*a+1000*b)");
}

TEST(ReproPlanErrors, AMisspeltWordGetsDidYouMean) {
  EXPECT_NE(plan_error_of("forward; backwrd(a); step").find("did you mean 'backward'?\n  forward; backwrd(a); step\n           ^~~~~~~\n"),
            std::string::npos);
  EXPECT_NE(plan_error_of("forward(no_txt); backward(a)").find("did you mean 'no_text'?"), std::string::npos);
  EXPECT_NE(plan_error_of("forward; backward(a+dumy)").find("did you mean 'dummy'?"), std::string::npos);
  EXPECT_NE(plan_error_of("freeze(head_c)").find("did you mean 'head_a'?\n  freeze(head_c)\n         ^~~~~~\n"),
            std::string::npos);
  EXPECT_EQ(plan_error_of("forward; zzz").find("did you mean"), std::string::npos);
  EXPECT_EQ(closest_word("stpe", {"step", "forward"}), "step");
  EXPECT_EQ(closest_word("x", {"a", "b"}), "");   // one letter off a one-letter word is no typo
}

TEST(ReproPlanErrors, BackwardBeforeForwardIsAUsageError) {
  const std::string e = plan_error_of("backward(a); forward; step");
  EXPECT_TRUE(starts_with(e, "plan: a loss term before any forward")) << e;
  EXPECT_NE(e.find("(backward #1 of iteration 1 on rank 0)\n  backward(a); forward; step\n  ^\n"), std::string::npos) << e;
}

TEST(ReproPlanErrors, TAfterNoTextIsAUsageError) {
  const std::string e = plan_error_of("forward(no_text); backward(a+t)");
  EXPECT_NE(e.find("term t used after a forward that did not return t"), std::string::npos) << e;
  EXPECT_NE(e.find("\n  forward(no_text); backward(a+t)\n                    ^\n"), std::string::npos) << e;
}

TEST(ReproPlanErrors, OnlyTheRankThatRunsTheStepRaisesIt) {
  ReproOptions o;
  const std::string e = plan_error_of("forward; rank(1){ backward(a@2) }; backward(a+b+t); step", o);
  EXPECT_NE(e.find("on rank 1)"), std::string::npos) << e;
}

}  // namespace
}  // namespace tinyddp::app
