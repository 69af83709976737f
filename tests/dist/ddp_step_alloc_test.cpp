// A steady-state DDP step allocates no buffer that the same step without DDP does not allocate: the reducer
// copies each gradient / world size into its bucket and the averages back into .grad (or divides the bucket
// view in place with gradient_as_bucket_view), all in buffers made once when the buckets are built. Counted
// with the CPU allocator's stats (engine/core/backend.h) over a loopback group of one rank whose collectives
// move nothing, so that every buffer counted is the engine's or the reducer's. With one rank the division is
// by 1, so DDP's parameters must also equal the plain step's bit for bit.
#include <gtest/gtest.h>

#include "dist/ddp.h"
#include "engine/core/backend.h"
#include "engine/tinyddp.h"
#include "models/nn/module.h"
#include "tests/dist/tiny_mlp.h"

namespace tinyddp::dist {
namespace {

class DoneWork : public Work {
 public:
  void wait() override {}
  bool is_completed() override { return true; }
};

// One rank: every collective is complete at once and leaves the tensors as they are.
class LoopbackGroup : public ProcessGroup {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::string backend() const override { return "loopback"; }
  std::shared_ptr<Work> allreduce(std::vector<Tensor>, ReduceOp) override { return done(); }
  std::shared_ptr<Work> broadcast(std::vector<Tensor>, int) override { return done(); }
  std::shared_ptr<Work> allgather(std::vector<Tensor> outputs, Tensor input) override {
    outputs[0].copy_(input);
    return done();
  }
  std::shared_ptr<Work> barrier() override { return done(); }

 private:
  static std::shared_ptr<Work> done() { return std::make_shared<DoneWork>(); }
};

struct StepCount {
  uint64_t allocations = 0, bytes = 0;
};

// One training step (zero_grad, forward, mse, backward, SGD); `ddp` null: no DDP. Returns what it allocated.
StepCount step(test::TinyMlp& m, DistributedDataParallel* ddp, const Tensor& x, const Tensor& y, bool set_to_none) {
  const backend::HostAllocatorStats before = backend::host_allocator_stats();
  nn::zero_grad_of(m.params(), set_to_none);
  std::vector<Tensor> out = ddp ? ddp->forward([&] { return std::vector<Tensor>{m.forward(x)}; })
                                : std::vector<Tensor>{m.forward(x)};
  mse_loss(out[0], y).backward();
  m.sgd(0.05);
  out.clear();
  const backend::HostAllocatorStats after = backend::host_allocator_stats();
  return {after.allocations - before.allocations, after.bytes_allocated - before.bytes_allocated};
}

void expect_ddp_step_allocates_nothing_new(bool set_to_none, bool gradient_as_bucket_view) {
  manual_seed(11);
  const Tensor x = randn({8, 4}, DType::f32), y = randn({8, 3}, DType::f32);
  test::TinyMlp plain(1, DType::f32), wrapped(1, DType::f32);
  DDPOptions options;
  options.gradient_as_bucket_view = gradient_as_bucket_view;
  options.bucket_cap_mb = 1e-4;   // several buckets: w1 and b1 apart
  DistributedDataParallel ddp(wrapped.named(), std::make_shared<LoopbackGroup>(), options);
  for (int warmup = 0; warmup < 3; ++warmup) {   // the buckets are rebuilt after the first iteration
    step(plain, nullptr, x, y, set_to_none);
    step(wrapped, &ddp, x, y, set_to_none);
  }
  for (int s = 0; s < 2; ++s) {
    const StepCount local = step(plain, nullptr, x, y, set_to_none);
    const StepCount distributed = step(wrapped, &ddp, x, y, set_to_none);
    EXPECT_EQ(distributed.allocations, local.allocations) << "step " << s;
    EXPECT_EQ(distributed.bytes, local.bytes) << "step " << s;
    EXPECT_GT(local.allocations, 0u);   // the counter does count this step's activations
  }
  const std::vector<Tensor> a = plain.params(), b = wrapped.params();
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].to_vector<float>(), b[i].to_vector<float>()) << "param " << i;
}

TEST(DdpStepAllocations, ZeroGradInPlace) { expect_ddp_step_allocates_nothing_new(false, false); }
TEST(DdpStepAllocations, SetToNone) { expect_ddp_step_allocates_nothing_new(true, false); }
TEST(DdpStepAllocations, GradientAsBucketView) { expect_ddp_step_allocates_nothing_new(false, true); }
TEST(DdpStepAllocations, GradientAsBucketViewSetToNone) { expect_ddp_step_allocates_nothing_new(true, true); }

// Stealing under DDP: with set_to_none, the plain step allocates no .grad copies (a backward into undefined
// .grad tensors costs what one into zeroed tensors does), and DDP adds none (above).
TEST(DdpStepAllocations, SetToNoneCostsNoMoreThanZeroingInPlace) {
  manual_seed(12);
  const Tensor x = randn({8, 4}, DType::f32), y = randn({8, 3}, DType::f32);
  test::TinyMlp a(1, DType::f32), b(1, DType::f32);
  for (int warmup = 0; warmup < 2; ++warmup) {
    step(a, nullptr, x, y, true);
    step(b, nullptr, x, y, false);
  }
  const StepCount none = step(a, nullptr, x, y, true), zeroed = step(b, nullptr, x, y, false);
  EXPECT_EQ(none.allocations, zeroed.allocations);
  const std::vector<Tensor> pa = a.params(), pb = b.params();
  for (size_t i = 0; i < pa.size(); ++i) EXPECT_EQ(pa[i].to_vector<float>(), pb[i].to_vector<float>()) << "param " << i;
}

}  // namespace
}  // namespace tinyddp::dist
