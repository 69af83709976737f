// DDP on N ranks computes what one process computes on the whole batch: after k SGD steps the parameters
// agree (f64, 1e-12 here; the issue asks for 1e-6). Also the bucket assignment and process-group basics.
#include <gtest/gtest.h>

#include <mutex>

#include "dist/ddp.h"
#include "dist/thread_process_group.h"
#include "engine/tinyddp.h"
#include "tests/dist/tiny_mlp.h"

namespace tinyddp::dist {
namespace {

// One process or N ranks train the same MLP (tests/dist/tiny_mlp.h), in f64.
struct Mlp : test::TinyMlp {
  explicit Mlp(uint64_t seed) : TinyMlp(seed, DType::f64) {}
};

double max_abs_diff(const Tensor& a, const Tensor& b) {
  auto x = a.to_vector<double>(), y = b.to_vector<double>();
  double m = 0;
  for (size_t i = 0; i < x.size(); ++i) m = std::max(m, std::abs(x[i] - y[i]));
  return m;
}

// late_static_graph: DDP built without static_graph, then set_static_graph() before the first iteration
// (1.13's _set_static_graph()).
void expect_ddp_matches_single_process(int ranks, DDPOptions options, bool late_static_graph = false) {
  constexpr int kSteps = 4, kPerRank = 5;
  manual_seed(7);
  const Tensor x = randn({ranks * kPerRank, 4}, DType::f64), y = randn({ranks * kPerRank, 3}, DType::f64);
  // Reference: one process, the whole batch. mse over all rows = mean over ranks of per-rank mse.
  Mlp ref(1);
  for (int s = 0; s < kSteps; ++s) {
    ref.zero_grad();
    mse_loss(ref.forward(x), y).backward();
    ref.sgd(0.1);
  }
  std::vector<Mlp> replicas;
  for (int r = 0; r < ranks; ++r) replicas.emplace_back(100 + r);   // different init: DDP must broadcast rank 0's
  replicas[0] = Mlp(1);
  std::mutex mu;
  auto errors = ThreadWorld::run(ranks, [&](ProcessGroup& pg) {
    Mlp& m = replicas[pg.rank()];
    DistributedDataParallel ddp(m.named(), pg.rank() >= 0 ? std::shared_ptr<ProcessGroup>(&pg, [](ProcessGroup*) {}) : nullptr,
                                options);
    if (late_static_graph) ddp.set_static_graph();
    const Tensor xr = x.narrow(0, pg.rank() * kPerRank, kPerRank), yr = y.narrow(0, pg.rank() * kPerRank, kPerRank);
    for (int s = 0; s < kSteps; ++s) {
      m.zero_grad();
      auto out = ddp.forward([&] { return std::vector<Tensor>{m.forward(xr)}; });
      mse_loss(out[0], yr).backward();
      m.sgd(0.1);
    }
  });
  for (int r = 0; r < ranks; ++r) {
    ASSERT_FALSE(errors[r]) << "rank " << r << " failed";
    const Mlp& m = replicas[r];
    EXPECT_LT(max_abs_diff(m.w1, ref.w1), 1e-12) << "rank " << r;
    EXPECT_LT(max_abs_diff(m.b1, ref.b1), 1e-12) << "rank " << r;
    EXPECT_LT(max_abs_diff(m.w2, ref.w2), 1e-12) << "rank " << r;
    EXPECT_LT(max_abs_diff(m.b2, ref.b2), 1e-12) << "rank " << r;
  }
}

TEST(DdpEquivalence, TwoRanksMatchOneProcess) { expect_ddp_matches_single_process(2, {}); }
TEST(DdpEquivalence, ThreeRanksMatchOneProcess) { expect_ddp_matches_single_process(3, {}); }
TEST(DdpEquivalence, StaticGraphSetAfterConstruction) { expect_ddp_matches_single_process(2, {}, true); }

TEST(DdpEquivalence, SetStaticGraphWarnsTwiceAndRefusesAfterTheFirstIteration) {
  auto errors = ThreadWorld::run(1, [&](ProcessGroup& pg) {
    Mlp m(1);
    DistributedDataParallel ddp(m.named(), std::shared_ptr<ProcessGroup>(&pg, [](ProcessGroup*) {}),
                                {.find_unused_parameters = true});
    ddp.set_static_graph();
    EXPECT_TRUE(ddp.static_graph());
    ddp.set_static_graph();
    ASSERT_EQ(ddp.warnings().size(), 2u);
    EXPECT_NE(ddp.warnings()[0].find("`_set_static_graph` will detect unused parameters"), std::string::npos);
    EXPECT_EQ(ddp.warnings()[1], "You've set static_graph to be True, no need to set it again.");

    DistributedDataParallel late(m.named(), std::shared_ptr<ProcessGroup>(&pg, [](ProcessGroup*) {}));
    auto out = late.forward([&] { return std::vector<Tensor>{m.forward(ones({2, 4}, DType::f64))}; });
    sum(out[0]).backward();
    try {
      late.set_static_graph();
      ADD_FAILURE() << "set_static_graph after an iteration must be refused";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("should be called before training loop starts"), std::string::npos);
    }
  });
  ASSERT_FALSE(errors[0]);
}

TEST(DdpEquivalence, FindUnusedParameters) { expect_ddp_matches_single_process(2, {.find_unused_parameters = true}); }
TEST(DdpEquivalence, StaticGraph) { expect_ddp_matches_single_process(2, {.static_graph = true}); }
TEST(DdpEquivalence, GradientAsBucketView) { expect_ddp_matches_single_process(3, {.gradient_as_bucket_view = true}); }
TEST(DdpEquivalence, TinyBucketsManyBuckets) { expect_ddp_matches_single_process(2, {.bucket_cap_mb = 1e-4}); }

}  // namespace
}  // namespace tinyddp::dist
