// The reducer's invariants, checked on the trace of every named `tinyddp repro` scenario (apps/tinyddp/repro/
// scenarios.h), each with its own options and with find_unused_parameters flipped, 2 thread ranks,
// 3 iterations:
//   1. buckets launch in index order: within a DDP iteration, 0, 1, 2, ... until every parameter's bucket
//      has launched (Note [Why buckets launch in index order], dist/reducer.h);
//   2. a bucket launches only after the hooks of all its parameters fired, armed, in that iteration (or
//      the parameter was marked unused in it);
//   3. a finalize that completes comes after the completion of every bucket allreduce of its iteration;
//   4. in a failing run, the error event is the last thing the rank that raised did: nothing on its compute
//      track ends after it, and no collective of that rank starts after it (a collective it launched may
//      still complete later: the other ranks complete it);
// and that tracing changes nothing: the result (outcome, messages, timeline, warnings, sync) is identical
// with tracing off and on.
#include <gtest/gtest.h>

#include <set>

#include "apps/tinyddp/repro/scenarios.h"
#include "trace_test_util.h"

namespace tinyddp::app {
namespace {

using testing::TraceEv;
using testing::trace_events;

// Rounding to nanoseconds in the file: compare times with this slack.
constexpr double kSlackUs = 0.002;

struct Case {
  std::string name;
  bool flip_find_unused = false;
};

std::vector<Case> all_cases() {
  std::vector<Case> out;
  for (const Scenario& s : scenarios()) {
    // The invariants are one reducer's; a GAN's two reducers share the rank's trace lanes without naming which
    // reducer an event is from.
    if (s.options.gan) continue;
    out.push_back({s.name, false});
    out.push_back({s.name, true});
  }
  return out;
}

ReproOptions options_for(const Scenario& s, bool flip) {
  ReproOptions o;
  static_cast<PlanOptions&>(o) = s.options;
  o.find_unused_parameters = s.options.find_unused_parameters != flip;
  o.timeout_ms = 10000;
  return o;
}

class TraceInvariants : public ::testing::TestWithParam<Case> {};

TEST_P(TraceInvariants, HoldInTheScenario) {
  const Case& c = GetParam();
  const Scenario& s = *find_scenario(c.name);
  const ReproOptions o = options_for(s, c.flip_find_unused);
  ReproResult result;
  const nlohmann::json trace = testing::traced_repro(s.name, s.plan, o, &result);
  const std::vector<TraceEv> events = trace_events(trace);
  const size_t num_params = result.param_names.size();

  // Tracing changes nothing. (The order in which find_unused_parameters marks several unused parameters
  // follows the reducer's map from AccumulateGrad node addresses, which differs between runs: compared as sets.)
  trace::stop();
  const ReproResult untraced = run_repro(s.name, s.plan, o);
  auto comparable = [](const ReproResult& r) {
    nlohmann::json j = to_json(r);
    for (auto& rank : j["timeline"])
      for (auto& call : rank) std::sort(call["marked_unused"].begin(), call["marked_unused"].end());
    return j.dump();
  };
  EXPECT_EQ(comparable(result), comparable(untraced));

  for (const RankResult& rank : result.ranks) {
    const int r = rank.rank;
    SCOPED_TRACE("rank " + std::to_string(r));
    std::vector<const TraceEv*> mine;
    for (const TraceEv& e : events)
      if (e.pid == r) mine.push_back(&e);
    ASSERT_FALSE(mine.empty());

    // 1 and 2: launches.
    std::map<int64_t, std::pair<int64_t, std::set<int64_t>>> runs;   // iteration -> (next index, params covered)
    int launches = 0;
    for (const TraceEv* e : mine) {
      if (e->cat != "bucket" || !e->name.starts_with("launch bucket")) continue;
      ++launches;
      const int64_t it = e->i("iteration"), b = e->i("bucket");
      auto& [next, covered] = runs[it];
      EXPECT_EQ(b, next) << "iteration " << it << ": bucket " << b << " launched when bucket " << next << " was next";
      const auto params = e->args["params"].get<std::vector<int64_t>>();
      for (int64_t p : params) {
        bool ready = false;
        for (const TraceEv* h : mine) {
          if (h->ts > e->ts + kSlackUs || h->i("param") != p || h->i("iteration") != it) continue;
          ready |= h->cat == "hook" && h->args.value("armed", false);
          ready |= h->cat == "reducer" && h->name == "marked unused";
        }
        EXPECT_TRUE(ready) << "iteration " << it << ": bucket " << b << " launched before parameter " << p
                           << "'s hook fired (or it was marked unused)";
        covered.insert(p);
      }
      next = b + 1;
      if (covered.size() == num_params) next = 0, covered.clear();   // every bucket launched: a full round
    }

    // Every launched bucket's allreduce is on the comm track, completed or marked never completed. (A joined
    // rank's shadows of the others' buckets are comms too, launched by no hook.)
    int comms = 0;
    for (const TraceEv* e : mine)
      if (e->tid == trace::kCommTrack && e->args.contains("bucket") && e->name.find("join shadow") == std::string::npos) ++comms;
    EXPECT_EQ(comms, launches);

    // 3: finalize after the completions of its iteration.
    for (const TraceEv* f : mine) {
      if (f->cat != "reducer" || f->name != "finalize" || f->args.value("exception", false)) continue;
      const int64_t it = f->i("iteration");
      int waited = 0;
      for (const TraceEv* e : mine) {
        if (e->tid != trace::kCommTrack || !e->args.contains("bucket") || e->i("iteration") != it || e->ts > f->end())
          continue;
        ++waited;
        EXPECT_EQ(e->ph, "X") << "a bucket of iteration " << it << " never completed, yet finalize did";
        EXPECT_LE(e->end(), f->end() + kSlackUs) << e->name << " of iteration " << it << " completed after finalize";
      }
      EXPECT_GT(waited, 0) << "finalize of iteration " << it << " with no bucket allreduce before it";
    }

    // Every hook span nests inside an AccumulateGrad span (the engine runs the reducer's hook as its post hook).
    for (const TraceEv* h : mine) {
      if (h->cat != "hook") continue;
      bool nested = false;
      for (const TraceEv* a : mine)
        nested |= a->cat == "accumulate_grad" && a->ts <= h->ts + kSlackUs && h->end() <= a->end() + kSlackUs;
      EXPECT_TRUE(nested) << "hook of parameter " << h->i("param") << " outside any AccumulateGrad span";
    }

    // 4: the error is the last thing the raising rank did.
    std::vector<const TraceEv*> errors;
    for (const TraceEv* e : mine)
      if (e->cat == "error") errors.push_back(e);
    if (!rank.error) {
      EXPECT_TRUE(errors.empty()) << "an error event on a rank that did not raise";
      continue;
    }
    ASSERT_EQ(errors.size(), 1u);
    const TraceEv& err = *errors[0];
    EXPECT_EQ(err.ph, "i");
    EXPECT_EQ(err.name, rank.error->type);
    EXPECT_EQ(err.args["message"], rank.error->message);
    EXPECT_EQ(err.args["raised_at"], rank.error->raised_at);
    for (const TraceEv* e : mine) {
      if (e == &err) continue;
      if (e->tid == trace::kCommTrack) {
        EXPECT_LE(e->ts, err.ts + kSlackUs) << e->name << " started after the error";
      } else {
        EXPECT_LE(e->end(), err.ts + kSlackUs) << e->cat << " " << e->name << " ended after the error";
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllScenarios, TraceInvariants, ::testing::ValuesIn(all_cases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           std::string n = info.param.name + (info.param.flip_find_unused ? "_flipped" : "");
                           for (char& ch : n)
                             if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return n;
                         });

// The scenario suite raises in some scenarios and not in others: the invariants are checked on both kinds.
TEST(TraceInvariantsSuite, CoversFailingAndPassingRuns) {
  int failing = 0, passing = 0;
  for (const Case& c : all_cases()) {
    const Scenario& s = *find_scenario(c.name);
    const ReproResult r = run_repro(s.name, s.plan, options_for(s, c.flip_find_unused));
    (r.error ? failing : passing) += 1;
  }
  EXPECT_GE(failing, 5);
  EXPECT_GE(passing, 5);
}

}  // namespace
}  // namespace tinyddp::app
