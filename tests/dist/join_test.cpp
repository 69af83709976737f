// Uneven inputs with DistributedDataParallel::join() (dist/join.h), on thread ranks with different numbers of
// batches: nobody hangs, the running ranks' gradients are averaged over the world size or over the ranks
// still running, and the replicas agree at the end. Checked against PyTorch 1.13.1 (tests/golden/ddp_join.json,
// made by gen_ddp_join.py) and against one process trained on the concatenated batches of the running ranks.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "dist/comm_hooks.h"
#include "dist/ddp.h"
#include "dist/join.h"
#include "dist/thread_process_group.h"
#include "engine/tinyddp.h"
#include "tests/dist/tiny_mlp.h"

namespace tinyddp::dist {
namespace {

// A wedged test fails in seconds, not after the default minute.
constexpr std::chrono::milliseconds kTimeout{10'000};

std::shared_ptr<ProcessGroup> borrow(ProcessGroup& pg) { return {&pg, [](ProcessGroup*) {}}; }

double max_abs_diff(const Tensor& a, const Tensor& b) {
  auto x = a.to_vector<double>(), y = b.to_vector<double>();
  EXPECT_EQ(x.size(), y.size());
  double m = 0;
  for (size_t i = 0; i < x.size() && i < y.size(); ++i) m = std::max(m, std::abs(x[i] - y[i]));
  return m;
}

std::string what(const std::exception_ptr& e) {
  try {
    if (e) std::rethrow_exception(e);
  } catch (const std::exception& ex) {
    return ex.what();
  }
  return "";
}

// ---------------------------------------------------------------------------------------------------------
// PyTorch's golden: Linear (+u) on 2 ranks, rank 0 with 3 batches and rank 1 with 2 (gen_ddp_join.py).

const nlohmann::json& golden() {
  static const nlohmann::json g = [] {
    std::ifstream f("tests/golden/ddp_join.json");
    EXPECT_TRUE(f.good()) << "run the tests from the repository root";
    return nlohmann::json::parse(f);
  }();
  return g;
}

Tensor from_json(const nlohmann::json& t) {
  return from_vector(t["values"].get<std::vector<double>>(), t["shape"].get<Shape>(), DType::f64);
}

struct RankResult {
  std::vector<std::map<std::string, Tensor>> grads;   // per backward; an undefined Tensor where .grad was None
  std::map<std::string, Tensor> params;               // after the join
  std::string raised_at;                              // "forward k" or "join exit" where it raised
};

void expect_matches_golden(const std::string& id) {
  const nlohmann::json* run = nullptr;
  for (const auto& r : golden()["runs"])
    if (r["id"] == id) run = &r;
  ASSERT_NE(run, nullptr) << id;
  const auto& opt = (*run)["options"];
  std::vector<RankResult> got(2);
  const auto errors = ThreadWorld::run(2, [&](ProcessGroup& pg) {
    const int rank = pg.rank();
    std::map<std::string, Tensor> p;
    for (const std::string name : golden()["param_order"]) p[name] = from_json((*run)["params"][name]);
    bool use_u = false;
    for (int r : opt["u_used_on_ranks"]) use_u |= r == rank;
    NamedParameters named{{"w", p["w"].requires_grad_()}, {"b", p["b"].requires_grad_()}};
    if (!opt["u_used_on_ranks"].empty()) named.emplace_back("u", p["u"].requires_grad_());
    DistributedDataParallel ddp(named, borrow(pg),
                                {.find_unused_parameters = opt["find_unused_parameters"].get<bool>(),
                                 .print_warnings = false});
    RankResult& out = got[rank];
    out.raised_at = "join exit";
    Join join = ddp.join({.throw_on_early_termination = opt["throw_on_early_termination"].get<bool>(),
                          .divide_by_initial_world_size = opt["divide_by_initial_world_size"].get<bool>()});
    const auto& batches = (*run)["ranks"][rank]["batches"];
    // After the join, or where it raised (the generator records them after the `with` either way).
    auto record_params = [&] {
      for (auto& [name, t] : p) out.params[name] = t;
    };
    try {
    for (size_t k = 0; k < batches.size(); ++k) {
      for (auto& [name, t] : p) t.set_grad(Tensor());
      const Tensor x = from_json(batches[k]["x"]), y = from_json(batches[k]["y"]);
      out.raised_at = "forward " + std::to_string(k + 1);
      auto pred = ddp.forward([&] {
        const Tensor h = addmm(p["b"], x, t(p["w"]));
        return std::vector<Tensor>{use_u ? h + p["u"] : h};
      });
      out.raised_at = "backward " + std::to_string(k + 1);
      mse_loss(pred[0], y).backward();
      std::map<std::string, Tensor> grads;
      for (auto& [name, t] : p) grads[name] = t.grad();
      out.grads.push_back(grads);
      NoGradGuard no_grad;
      for (auto& [name, t] : p)
        if (t.grad().defined()) t.add_(t.grad(), -golden()["lr"].get<double>());
      out.raised_at = "join exit";
    }
    join.finish();
    } catch (...) {
      record_params();
      throw;
    }
    record_params();
  }, kTimeout);
  for (int rank = 0; rank < 2; ++rank) {
    const auto& want = (*run)["ranks"][rank];
    if (want["error"].is_null()) {
      ASSERT_FALSE(errors[rank]) << id << " rank " << rank << ": " << what(errors[rank]);
    } else {
      EXPECT_EQ(what(errors[rank]), want["error"]["message"].get<std::string>()) << id << " rank " << rank;
      EXPECT_EQ(got[rank].raised_at, want["error"]["raised_at"].get<std::string>()) << id << " rank " << rank;
    }
    ASSERT_EQ(got[rank].grads.size(), want["grads"].size()) << id << " rank " << rank;
    for (size_t k = 0; k < want["grads"].size(); ++k)
      for (const auto& [name, g] : want["grads"][k].items()) {
        const Tensor& mine = got[rank].grads[k].at(name);
        ASSERT_EQ(mine.defined(), !g.is_null()) << id << " rank " << rank << " backward " << k + 1 << " " << name;
        if (mine.defined())
          EXPECT_LT(max_abs_diff(mine, from_json(g)), 1e-6) << id << " rank " << rank << " backward " << k + 1 << " "
                                                           << name;
      }
    for (const auto& [name, v] : want["params"].items())
      EXPECT_LT(max_abs_diff(got[rank].params.at(name), from_json(v)), 1e-6) << id << " rank " << rank << " " << name;
  }
}

TEST(JoinGolden, DivideByInitialWorldSize) { expect_matches_golden("divide-initial"); }
TEST(JoinGolden, DivideByRanksStillRunning) { expect_matches_golden("divide-effective"); }
// The joined rank's shadow of the local-used map sends its last reduced map: u, used by rank 1 in the last
// iteration it ran, counts as used in rank 0's third iteration, whose u.grad becomes zeros instead of None.
TEST(JoinGolden, FindUnusedParametersShadowsTheLocalUsedMap) { expect_matches_golden("find-unused"); }
TEST(JoinGolden, ThrowOnEarlyTermination) { expect_matches_golden("throw"); }

// ---------------------------------------------------------------------------------------------------------
// N ranks, closed form: the MLP of tiny_mlp.h (f64) with batches[r] of 2 rows per iteration. At iteration k the
// running ranks are those with more than k batches; one process on their concatenated batches has the mean
// gradient over them (equal batch sizes), which is DDP's with divide_by_initial_world_size=false and
// running/world times it with true.

struct Mlp : test::TinyMlp {
  explicit Mlp(uint64_t seed) : TinyMlp(seed, DType::f64) {}
};

struct Batch {
  Tensor x, y;   // (2, 4), (2, 3)
};

std::vector<std::vector<Batch>> make_batches(const std::vector<int>& counts) {
  manual_seed(11);
  std::vector<std::vector<Batch>> out(counts.size());
  for (size_t r = 0; r < counts.size(); ++r)
    for (int k = 0; k < counts[r]; ++k) out[r].push_back({randn({2, 4}, DType::f64), randn({2, 3}, DType::f64)});
  return out;
}

// Per iteration the reference's gradients (w1, b1, w2, b2), then its parameters after the last step.
struct Reference {
  std::vector<std::vector<Tensor>> grads;
  Mlp model{1};
};

Reference reference(const std::vector<std::vector<Batch>>& batches, bool divide_by_initial_world_size) {
  Reference ref;
  const int world = static_cast<int>(batches.size());
  for (size_t k = 0;; ++k) {
    std::vector<Tensor> xs, ys;
    for (const auto& mine : batches)
      if (k < mine.size()) xs.push_back(mine[k].x), ys.push_back(mine[k].y);
    if (xs.empty()) break;
    ref.model.zero_grad();
    mse_loss(ref.model.forward(cat(xs, 0)), cat(ys, 0)).backward();
    const double scale = divide_by_initial_world_size ? static_cast<double>(xs.size()) / world : 1.0;
    {
      NoGradGuard no_grad;
      for (const Tensor& p : ref.model.params()) {
        Tensor g = p.grad();
        g.mul_(scale);
      }
    }
    std::vector<Tensor> g;
    for (const Tensor& p : ref.model.params()) g.push_back(p.grad().clone());
    ref.grads.push_back(g);
    ref.model.sgd(0.1);
  }
  return ref;
}

struct UnevenRun {
  std::vector<std::vector<std::vector<Tensor>>> grads;   // per rank, per own iteration
  std::vector<Mlp> replicas;
  std::vector<std::exception_ptr> errors;
};

// Each rank trains on its own batches inside a Join and calls finish(); `before_finish` runs on each rank
// after its last step.
UnevenRun run_uneven(const std::vector<std::vector<Batch>>& batches, DDPOptions ddp_options, JoinOptions join_options,
                     const std::function<void(int rank, Mlp&)>& before_finish = {}) {
  const int world = static_cast<int>(batches.size());
  UnevenRun run;
  run.grads.resize(world);
  for (int r = 0; r < world; ++r) run.replicas.emplace_back(100 + r);
  run.replicas[0] = Mlp(1);
  ddp_options.print_warnings = false;
  run.errors = ThreadWorld::run(world, [&](ProcessGroup& pg) {
    const int rank = pg.rank();
    Mlp& m = run.replicas[rank];
    DistributedDataParallel ddp(m.named(), borrow(pg), ddp_options);
    Join join = ddp.join(join_options);
    for (const Batch& b : batches[rank]) {
      m.zero_grad();
      auto out = ddp.forward([&] { return std::vector<Tensor>{m.forward(b.x)}; });
      mse_loss(out[0], b.y).backward();
      std::vector<Tensor> g;
      for (const Tensor& p : m.params()) g.push_back(p.grad().clone());
      run.grads[rank].push_back(g);
      m.sgd(0.1);
    }
    if (before_finish) before_finish(rank, m);
    join.finish();
  }, kTimeout);
  return run;
}

void expect_matches_reference(const std::vector<int>& counts, DDPOptions ddp_options, bool divide_initial) {
  const auto batches = make_batches(counts);
  const Reference ref = reference(batches, divide_initial);
  UnevenRun run = run_uneven(batches, ddp_options, {.divide_by_initial_world_size = divide_initial});
  for (size_t r = 0; r < counts.size(); ++r) {
    ASSERT_FALSE(run.errors[r]) << "rank " << r << ": " << what(run.errors[r]);
    ASSERT_EQ(run.grads[r].size(), static_cast<size_t>(counts[r]));
    for (size_t k = 0; k < run.grads[r].size(); ++k)
      for (size_t i = 0; i < 4; ++i)
        EXPECT_LT(max_abs_diff(run.grads[r][k][i], ref.grads[k][i]), 1e-12) << "rank " << r << " iteration " << k + 1
                                                                           << " param " << i;
    // The final sync: every rank holds the model of the last to join, the reference's.
    for (size_t i = 0; i < 4; ++i)
      EXPECT_LT(max_abs_diff(run.replicas[r].params()[i], ref.model.params()[i]), 1e-12) << "rank " << r << " " << i;
  }
}

TEST(Join, TwoRanksDivideByInitialWorldSize) { expect_matches_reference({3, 1}, {}, true); }
TEST(Join, TwoRanksDivideByRanksStillRunning) { expect_matches_reference({1, 4}, {}, false); }
TEST(Join, ThreeRanksDivideByInitialWorldSize) { expect_matches_reference({3, 1, 2}, {}, true); }
TEST(Join, ThreeRanksDivideByRanksStillRunning) { expect_matches_reference({2, 4, 1}, {}, false); }
TEST(Join, ThreeRanksFindUnusedParameters) {
  expect_matches_reference({1, 3, 2}, {.find_unused_parameters = true}, false);
}
// A rank with no batch at all joins before the first iteration: its shadow records every parameter for the
// bucket rebuild after the first iteration, so that it takes part in the others' rebuild and reduces the same
// (many, tiny) buckets afterwards.
TEST(Join, RankWithoutBatchesFollowsTheBucketRebuild) {
  expect_matches_reference({0, 3, 3}, {.bucket_cap_mb = 1e-4}, true);
}
TEST(Join, StaticGraphAfterItsFirstIteration) { expect_matches_reference({1, 3}, {.static_graph = true}, true); }

// A registered comm hook runs on the joined rank's zero buckets too, and does its own division (by the world
// size, whatever divide_by_initial_world_size says, as in 1.13).
TEST(Join, CommHookDividesByTheWorldSize) {
  const auto batches = make_batches({1, 3});
  const Reference ref = reference(batches, /*divide_by_initial_world_size=*/true);
  const int world = 2;
  std::vector<Mlp> replicas{Mlp(1), Mlp(1)};
  std::vector<std::vector<Tensor>> last(world);
  auto errors = ThreadWorld::run(world, [&](ProcessGroup& pg) {
    Mlp& m = replicas[pg.rank()];
    DistributedDataParallel ddp(m.named(), borrow(pg), {.print_warnings = false});
    ddp.register_comm_hook(allreduce_hook());
    Join join = ddp.join({.divide_by_initial_world_size = false});
    for (const Batch& b : batches[pg.rank()]) {
      m.zero_grad();
      mse_loss(ddp.forward([&] { return std::vector<Tensor>{m.forward(b.x)}; })[0], b.y).backward();
      last[pg.rank()] = {m.w1.grad().clone()};
      m.sgd(0.1);
    }
    join.finish();
  }, kTimeout);
  ASSERT_FALSE(errors[0]) << what(errors[0]);
  ASSERT_FALSE(errors[1]) << what(errors[1]);
  EXPECT_LT(max_abs_diff(last[1][0], ref.grads[2][0]), 1e-12);
  EXPECT_LT(max_abs_diff(replicas[0].w1, ref.model.w1), 1e-12);
}

// no_sync() on the running ranks: the joined rank reads the sync flag and skips the buckets of that iteration.
TEST(Join, NoSyncIterationsAreNotShadowed) {
  const auto batches = make_batches({3, 1});
  std::vector<Mlp> replicas{Mlp(1), Mlp(1)};
  std::vector<Tensor> accumulated(2);
  auto errors = ThreadWorld::run(2, [&](ProcessGroup& pg) {
    Mlp& m = replicas[pg.rank()];
    DistributedDataParallel ddp(m.named(), borrow(pg), {.print_warnings = false});
    Join join = ddp.join();
    m.zero_grad();
    for (size_t k = 0; k < batches[pg.rank()].size(); ++k) {
      const Batch& b = batches[pg.rank()][k];
      std::optional<DistributedDataParallel::NoSyncGuard> no_sync;
      if (k == 1) no_sync.emplace(ddp);   // iteration 2 accumulates locally, iteration 3 averages both
      mse_loss(ddp.forward([&] { return std::vector<Tensor>{m.forward(b.x)}; })[0], b.y).backward();
    }
    accumulated[pg.rank()] = m.w1.grad().clone();
    join.finish();
  }, kTimeout);
  ASSERT_FALSE(errors[0]) << what(errors[0]);
  ASSERT_FALSE(errors[1]) << what(errors[1]);
  // Closed form, gk_r = rank r's k-th gradient (no step: all at the initial parameters). Iteration 3 averages
  // all of rank 0's .grad with rank 1's zeros: ((g1_0 + g1_1) / 2 + g2_0 + g3_0) / 2.
  Mlp m(1);
  auto grad_of = [&](const Batch& b) {
    m.zero_grad();
    mse_loss(m.forward(b.x), b.y).backward();
    return m.w1.grad().clone();
  };
  const Tensor want = ((grad_of(batches[0][0]) + grad_of(batches[1][0])) * 0.5 + grad_of(batches[0][1]) +
                       grad_of(batches[0][2])) * 0.5;
  EXPECT_LT(max_abs_diff(accumulated[0], want), 1e-12);
}

// Two ranks join last together: the final model comes from the higher-ranked one.
TEST(Join, FinalModelComesFromTheHighestRankedLastJoiner) {
  const auto batches = make_batches({3, 1, 3});
  UnevenRun run = run_uneven(batches, {}, {}, [](int rank, Mlp& m) {
    NoGradGuard no_grad;
    m.w1.add_(ones({6, 4}, DType::f64), static_cast<double>(rank));   // ranks 0 and 2 (the candidates) now differ
  });
  Tensor want = reference(batches, true).model.w1.detach() + full({6, 4}, 2.0, DType::f64);   // rank 2's
  for (int r = 0; r < 3; ++r) {
    ASSERT_FALSE(run.errors[r]) << what(run.errors[r]);
    EXPECT_LT(max_abs_diff(run.replicas[r].w1, want), 1e-12) << "rank " << r;
  }
}

// throw_on_early_termination: the rank that runs out raises in finish(), the others at their next forward.
TEST(Join, ThrowOnEarlyTerminationRaisesOnEveryRank) {
  const auto batches = make_batches({2, 1, 2});
  std::vector<int> forwards_started(3, 0);
  auto errors = ThreadWorld::run(3, [&](ProcessGroup& pg) {
    Mlp m(1);
    DistributedDataParallel ddp(m.named(), borrow(pg), {.print_warnings = false});
    Join join = ddp.join({.throw_on_early_termination = true});
    for (const Batch& b : batches[pg.rank()]) {
      ++forwards_started[pg.rank()];
      mse_loss(ddp.forward([&] { return std::vector<Tensor>{m.forward(b.x)}; })[0], b.y).backward();
    }
    forwards_started[pg.rank()] += 100;   // reached finish()
    join.finish();
  }, kTimeout);
  EXPECT_EQ(what(errors[1]), "Rank 1 exhausted all inputs.");
  EXPECT_EQ(forwards_started[1], 101);
  for (int r : {0, 2}) {
    EXPECT_EQ(what(errors[r]), "Detected at least one rank that exhausted inputs. Throwing across all ranks.") << r;
    EXPECT_EQ(forwards_started[r], 2) << "rank " << r << " raises in its second forward";
  }
}

// Counts the collectives a rank issues, forwarding them to the thread backend.
class CountingGroup : public ProcessGroup {
 public:
  explicit CountingGroup(ProcessGroup& inner) : inner_(inner) { timeout_ = inner.timeout(); }
  int rank() const override { return inner_.rank(); }
  int size() const override { return inner_.size(); }
  std::string backend() const override { return inner_.backend(); }
  std::shared_ptr<Work> allreduce(std::vector<Tensor> t, ReduceOp op) override { return ++n, inner_.allreduce(t, op); }
  std::shared_ptr<Work> broadcast(std::vector<Tensor> t, int root) override { return ++n, inner_.broadcast(t, root); }
  std::shared_ptr<Work> allgather(std::vector<Tensor> o, Tensor i) override { return ++n, inner_.allgather(o, i); }
  std::shared_ptr<Work> barrier() override { return ++n, inner_.barrier(); }
  int n = 0;

 private:
  ProcessGroup& inner_;
};

// enable=false: the same collectives (and results) as without a Join; finish() issues none.
TEST(Join, DisabledBehavesAsNoJoin) {
  const auto batches = make_batches({2, 2});
  auto train = [&](std::optional<JoinOptions> join_options) {
    std::vector<int> counts(2);
    std::vector<Tensor> w1(2);
    auto errors = ThreadWorld::run(2, [&](ProcessGroup& pg) {
      auto counting = std::make_shared<CountingGroup>(pg);
      Mlp m(1);
      DistributedDataParallel ddp(m.named(), counting, {.print_warnings = false});
      std::optional<Join> join;
      if (join_options) join.emplace(std::vector<Joinable*>{&ddp}, *join_options);
      for (const Batch& b : batches[pg.rank()]) {
        m.zero_grad();
        mse_loss(ddp.forward([&] { return std::vector<Tensor>{m.forward(b.x)}; })[0], b.y).backward();
        m.sgd(0.1);
      }
      const int before_finish = counting->n;
      if (join) join->finish();
      if (join_options && !join_options->enable)
        EXPECT_EQ(counting->n, before_finish) << "finish() of a disabled Join issued a collective";
      counts[pg.rank()] = counting->n;
      w1[pg.rank()] = m.w1;
    }, kTimeout);
    for (auto& e : errors) EXPECT_FALSE(e) << what(e);
    return std::pair{counts, w1};
  };
  const auto [plain_counts, plain_w1] = train(std::nullopt);
  const auto [off_counts, off_w1] = train(JoinOptions{.enable = false});
  const auto [on_counts, on_w1] = train(JoinOptions{});
  EXPECT_EQ(off_counts, plain_counts);
  EXPECT_GT(on_counts[0], plain_counts[0]);   // the check can fail: an enabled Join adds its collectives
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(max_abs_diff(off_w1[r], plain_w1[r]), 0.0);
    EXPECT_EQ(max_abs_diff(on_w1[r], plain_w1[r]), 0.0);
  }
}

// 1.13 warns (once) when a joined rank has shadowed more than 1000 iterations.
TEST(Join, WarnsOnceAboutASkewOfMoreThanAThousandIterations) {
  std::vector<std::vector<std::string>> warnings(2);
  auto errors = ThreadWorld::run(2, [&](ProcessGroup& pg) {
    Tensor w = ones({1}, DType::f64).requires_grad_();
    DistributedDataParallel ddp({{"w", w}}, borrow(pg), {.print_warnings = false});
    Join join = ddp.join();
    const Tensor x = ones({1}, DType::f64);
    for (int k = 0; k < (pg.rank() == 1 ? 1003 : 0); ++k)
      sum(ddp.forward([&] { return std::vector<Tensor>{w * x}; })[0]).backward();
    join.finish();
    warnings[pg.rank()] = join.warnings();
  }, kTimeout);
  ASSERT_FALSE(errors[0]) << what(errors[0]);
  ASSERT_FALSE(errors[1]) << what(errors[1]);
  EXPECT_TRUE(warnings[1].empty());
  ASSERT_EQ(warnings[0].size(), 1u);
  EXPECT_EQ(warnings[0][0], "Detected uneven input skew of greater than 1000. This means that rank 0 has at least 1000 "
                            "fewer inputs than other currently-active ranks. This level of skew could lead to "
                            "performance degradation during training.");
}

TEST(Join, ChecksItsArguments) {
  EXPECT_THROW(Join(std::vector<Joinable*>{}), Error);
  auto errors = ThreadWorld::run(1, [&](ProcessGroup& pg) {
    Mlp m(1);
    DistributedDataParallel ddp(m.named(), borrow(pg), {.print_warnings = false});
    Join join = ddp.join();
    join.finish();   // alone: nobody to shadow
    try {
      join.finish();
      ADD_FAILURE() << "a second finish() was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("already called"), std::string::npos) << e.what();
    }
  }, kTimeout);
  EXPECT_FALSE(errors[0]) << what(errors[0]);
}

}  // namespace
}  // namespace tinyddp::dist
