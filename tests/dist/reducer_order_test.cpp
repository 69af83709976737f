// Note [Why buckets launch in index order], tested: ranks whose gradients become ready in different
// orders must still launch their buckets in the same (index) order, or collectives pair up the wrong
// buckets. Every other test has one ready order on all ranks, so a reducer that launched in ready order
// would pass them all; this one fails then (the thread backend sees a 300,000-float allreduce meet a
// 4-float one).
#include <gtest/gtest.h>

#include <vector>

#include "dist/ddp.h"
#include "dist/thread_process_group.h"
#include "engine/tinyddp.h"

namespace tinyddp::dist {
namespace {

std::shared_ptr<ProcessGroup> borrow(ProcessGroup& pg) { return {&pg, [](ProcessGroup*) {}}; }

// Index 0 small, index 1 larger than the 1 MiB cap. The first iteration uses one bucket; the rebuild
// after it follows rank 0's ready order (large first), so bucket 0 holds the large parameter alone and
// bucket 1 the small one, and rank 1's small gradient, ready first, has to wait for bucket 0.
constexpr int64_t kSmall = 4;
constexpr int64_t kLarge = 300'000;   // 1.2 MB of f32 > 1 MiB

struct RankLog {
  std::vector<std::vector<size_t>> hooks, launches;   // per iteration: parameter / bucket indices, in order
  std::vector<std::vector<size_t>> buckets;           // the bucket layout in the last iteration
  std::vector<float> small_grad, large_grad;
};

TEST(ReducerOrder, BucketsLaunchInIndexOrderWhenRanksDisagreeOnReadyOrder) {
  constexpr int kRanks = 2, kIterations = 3;
  std::vector<RankLog> logs(kRanks);
  const auto errors = ThreadWorld::run(kRanks, [&](ProcessGroup& pg) {
    RankLog& log = logs[pg.rank()];
    const Tensor small = zeros({kSmall}).requires_grad_(), large = zeros({kLarge}).requires_grad_();
    DistributedDataParallel ddp({{"small", small}, {"large", large}}, borrow(pg),
                                {.bucket_cap_mb = 1.0, .print_warnings = false});
    ddp.reducer().set_event_observer([&](const ReducerEvent& e) {
      if (e.kind == ReducerEvent::Kind::hook) log.hooks.back().push_back(e.index);
      if (e.kind == ReducerEvent::Kind::bucket_launched) log.launches.back().push_back(e.index);
    });
    const double r = pg.rank();
    for (int it = 0; it < kIterations; ++it) {
      log.hooks.emplace_back();
      log.launches.emplace_back();
      small.set_grad(Tensor());
      large.set_grad(Tensor());
      // dL/d small = r + 1, dL/d large = 2 (r + 1). Each rank builds its two terms in its own order, and
      // the term built last runs first in the backward (highest sequence numbers): rank 0's large
      // gradient is ready first, rank 1's small one.
      auto out = ddp.forward([&] {
        std::vector<Tensor> terms(2);
        const auto build_small = [&] { terms[0] = sum(small * (r + 1)); };
        const auto build_large = [&] { terms[1] = sum(large * (2 * (r + 1))); };
        if (pg.rank() == 0) {
          build_small();
          build_large();
        } else {
          build_large();
          build_small();
        }
        return terms;
      });
      (out[0] + out[1]).backward();
    }
    log.buckets = ddp.reducer().bucket_indices();
    log.small_grad = small.grad().to_vector<float>();
    log.large_grad = large.grad().to_vector<float>();
  });
  for (int r = 0; r < kRanks; ++r) ASSERT_FALSE(errors[r]) << "rank " << r << " failed";

  // The premise: the ranks' ready orders differ (else this test shows nothing).
  for (int it = 0; it < kIterations; ++it) {
    EXPECT_EQ(logs[0].hooks[it], (std::vector<size_t>{1, 0})) << "iteration " << it;
    EXPECT_EQ(logs[1].hooks[it], (std::vector<size_t>{0, 1})) << "iteration " << it;
  }
  for (int r = 0; r < kRanks; ++r) {
    // One bucket in the first iteration; two after the rebuild, in rank 0's ready order.
    EXPECT_EQ(logs[r].buckets, (std::vector<std::vector<size_t>>{{1}, {0}})) << "rank " << r;
    // The first iteration reduces everything in one bucket (1.13); from the second on, the rebuilt two.
    EXPECT_EQ(logs[r].launches[0], (std::vector<size_t>{0})) << "rank " << r << ", iteration 0";
    for (int it = 1; it < kIterations; ++it)
      EXPECT_EQ(logs[r].launches[it], (std::vector<size_t>{0, 1})) << "rank " << r << ", iteration " << it;
    // Averages over ranks: (1 + 2) / 2 and (2 + 4) / 2, exact in f32.
    EXPECT_EQ(logs[r].small_grad, std::vector<float>(kSmall, 1.5f)) << "rank " << r;
    EXPECT_EQ(logs[r].large_grad, std::vector<float>(kLarge, 3.0f)) << "rank " << r;
  }
}

}  // namespace
}  // namespace tinyddp::dist
