// The Work contract, from the reducer's side: a bucket holds the sum over ranks only after its Work's wait(),
// so finalize must wait for every bucket before it copies the averages into .grad. The thread backend's
// collectives usually complete when the last rank arrives, which hides a missing wait; this process group
// defers each allreduce to its wait(), so gradients are averaged iff every bucket was waited for.
#include <gtest/gtest.h>

#include <vector>

#include "dist/ddp.h"
#include "dist/thread_process_group.h"
#include "engine/tinyddp.h"

namespace tinyddp::dist {
namespace {

// Forwards to `inner`, but an allreduce runs only when its Work is waited for (and never reports completion
// before). Waits must come in the same order on every rank, as they do for buckets (index order).
class DeferredAllreduceGroup : public ProcessGroup {
 public:
  explicit DeferredAllreduceGroup(ProcessGroup& inner) : inner_(inner) {}
  int rank() const override { return inner_.rank(); }
  int size() const override { return inner_.size(); }
  std::string backend() const override { return "deferred " + inner_.backend(); }
  std::shared_ptr<Work> allreduce(std::vector<Tensor> tensors, ReduceOp op) override {
    return std::make_shared<DeferredWork>(inner_, std::move(tensors), op);
  }
  std::shared_ptr<Work> broadcast(std::vector<Tensor> tensors, int root) override {
    return inner_.broadcast(std::move(tensors), root);
  }
  std::shared_ptr<Work> allgather(std::vector<Tensor> outputs, Tensor input) override {
    return inner_.allgather(std::move(outputs), std::move(input));
  }
  std::shared_ptr<Work> barrier() override { return inner_.barrier(); }

 private:
  class DeferredWork : public Work {
   public:
    DeferredWork(ProcessGroup& pg, std::vector<Tensor> tensors, ReduceOp op)
        : pg_(pg), tensors_(std::move(tensors)), op_(op) {}
    void wait() override {
      if (done_) return;
      pg_.allreduce(tensors_, op_)->wait();
      done_ = true;
    }
    bool is_completed() override { return done_; }

   private:
    ProcessGroup& pg_;
    std::vector<Tensor> tensors_;
    ReduceOp op_;
    bool done_ = false;
  };
  ProcessGroup& inner_;
};

// Two buckets after the rebuild (a > 1 MiB parameter and a small one, cap 1 MiB), three iterations:
// dL/d small = r + 1 and dL/d large = 2 (r + 1) on rank r, averaged to 1.5 and 3 (exact in f32).
TEST(ReducerWait, GradientsAreAveragedOnlyAfterEveryBucketWasWaitedFor) {
  std::vector<std::vector<float>> small_grads(2), large_grads(2);
  std::vector<size_t> buckets(2);
  const auto errors = ThreadWorld::run(2, [&](ProcessGroup& pg) {
    auto deferred = std::make_shared<DeferredAllreduceGroup>(pg);
    const Tensor small = zeros({4}).requires_grad_(), large = zeros({300'000}).requires_grad_();
    DistributedDataParallel ddp({{"small", small}, {"large", large}}, deferred,
                                {.bucket_cap_mb = 1.0, .print_warnings = false});
    const double r = pg.rank();
    for (int it = 0; it < 3; ++it) {
      small.set_grad(Tensor());
      large.set_grad(Tensor());
      auto out = ddp.forward([&] {
        // Built in this order (the operands of + could be evaluated either way round), large's gradient is
        // ready first, so the rebuild puts it alone in bucket 0.
        const Tensor small_term = sum(small * (r + 1));
        const Tensor large_term = sum(large * (2 * (r + 1)));
        return std::vector<Tensor>{small_term + large_term};
      });
      out[0].backward();
    }
    buckets[pg.rank()] = ddp.reducer().bucket_indices().size();
    small_grads[pg.rank()] = small.grad().to_vector<float>();
    large_grads[pg.rank()] = large.grad().to_vector<float>();
  });
  for (int r = 0; r < 2; ++r) {
    ASSERT_FALSE(errors[r]) << "rank " << r << " failed";
    EXPECT_EQ(buckets[r], 2u) << "the premise: more than one bucket";
    EXPECT_EQ(small_grads[r], std::vector<float>(4, 1.5f)) << "rank " << r;
    EXPECT_EQ(large_grads[r], std::vector<float>(300'000, 3.0f)) << "rank " << r;
  }
}

}  // namespace
}  // namespace tinyddp::dist
