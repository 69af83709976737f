// AccumulateGrad's one pass (engine/autograd/accumulate_grad.h): into an undefined .grad it steals the
// incoming gradient (the .grad is that very buffer) when nothing else can see it and its layout is the
// leaf's; otherwise it copies, as PyTorch's accumulateGrad does. Values are the same either way.
#include <gtest/gtest.h>

#include <memory>

#include "engine/autograd/accumulate_grad.h"
#include "engine/core/backend.h"
#include "tests/engine/test_util.h"

namespace tinyddp::test {
namespace {

// Records where the gradient arriving at `leaf` lives, without keeping a reference to it.
std::shared_ptr<const void*> record_incoming(const Tensor& leaf) {
  auto where = std::make_shared<const void*>(nullptr);
  leaf.register_hook([where](const Tensor& g) {
    *where = g.raw_data();
    return Tensor();
  });
  return where;
}

TEST(GradSteal, UnsharedIncomingGradientBecomesTheGrad) {
  const Tensor x = make({1.0, 2.0, 3.0}, {3}).requires_grad_();
  const auto incoming = record_incoming(x);
  sum(x * x).backward();   // MulBackward0 returns a fresh 2x that only the engine holds
  ASSERT_NE(*incoming, nullptr);
  EXPECT_EQ(x.grad().raw_data(), *incoming);
  EXPECT_TRUE(all_close(x.grad(), make({2.0, 4.0, 6.0}, {3}), 0.0));
}

// The reducer's post hook on the node sees the node's inputs: the engine keeps one more reference then, and
// the steal must still happen (PyTorch's num_expected_refs).
TEST(GradSteal, StealsUnderANodePostHook) {
  const Tensor x = make({1.0, 2.0}, {2}).requires_grad_();
  const auto incoming = record_incoming(x);
  int post_hook_calls = 0;
  const std::shared_ptr<autograd::Node> node = autograd::grad_accumulator(x);   // the leaf holds it weakly
  node->add_post_hook([&](const autograd::TensorList&, const autograd::TensorList& in) {
    ++post_hook_calls;
    EXPECT_TRUE(in[0].defined());
  });
  sum(x * 3.0).backward();
  EXPECT_EQ(post_hook_calls, 1);
  EXPECT_EQ(x.grad().raw_data(), *incoming);
}

TEST(GradSteal, ASeenGradientIsCopied) {
  const Tensor x = make({1.0, 2.0}, {2}).requires_grad_();
  Tensor kept;   // the user's hook keeps the gradient: stealing it would alias the user's tensor
  x.register_hook([&](const Tensor& g) {
    kept = g;
    return Tensor();
  });
  sum(x * x).backward();
  ASSERT_TRUE(kept.defined());
  EXPECT_NE(x.grad().raw_data(), kept.raw_data());
  EXPECT_TRUE(all_close(x.grad(), kept, 0.0));
}

TEST(GradSteal, AGradientWhoseStorageIsSharedIsCopied) {
  const Tensor x = make({1.0, 2.0}, {2}).requires_grad_();
  Tensor alias;   // another handle on the same storage (not the same TensorImpl)
  x.register_hook([&](const Tensor& g) {
    alias = g.detach();
    return Tensor();
  });
  sum(x * x).backward();
  EXPECT_NE(x.grad().storage().get(), alias.storage().get());
  {
    NoGradGuard no_grad;
    alias.fill_(7.0);
  }
  EXPECT_TRUE(all_close(x.grad(), make({2.0, 4.0}, {2}), 0.0));
}

TEST(GradSteal, OneGradientHandedToTwoLeavesIsCopiedForEach) {
  const Tensor a = make({1.0, 2.0}, {2}).requires_grad_();
  const Tensor b = make({3.0, 4.0}, {2}).requires_grad_();
  sum((a + b) * 2.0).backward();   // AddBackward0 hands one tensor to both leaves
  EXPECT_NE(a.grad().storage().get(), b.grad().storage().get());
  {
    NoGradGuard no_grad;
    Tensor ga = a.grad();
    ga.zero_();
  }
  EXPECT_TRUE(all_close(b.grad(), make({2.0, 2.0}, {2}), 0.0));
}

TEST(GradSteal, AnExpandIsCopiedIntoAContiguousGrad) {
  const Tensor x = make({1.0, 2.0, 3.0}, {3}).requires_grad_();
  sum(x).backward();   // SumBackward0: a stride-0 expand of one element
  EXPECT_TRUE(x.grad().is_contiguous());
  EXPECT_EQ(x.grad().strides(), Shape{1});
  EXPECT_TRUE(all_close(x.grad(), ones({3}, DType::f64), 0.0));
}

// The saving in buffers: a backward into undefined .grad tensors allocates exactly what a backward into
// existing ones does (each leaf takes its incoming gradient instead of a copy of it).
TEST(GradSteal, BackwardIntoUndefinedGradsAllocatesNoCopies) {
  const Tensor w = randn({8, 5}, DType::f64).requires_grad_();
  const Tensor b = randn({8}, DType::f64).requires_grad_();
  const Tensor x = randn({4, 5}, DType::f64);
  auto backward_allocations = [&] {
    const Tensor loss = sum(tanh(addmm(b, x, t(w))));
    const uint64_t before = backend::host_allocator_stats().allocations;
    loss.backward();
    return backend::host_allocator_stats().allocations - before;
  };
  w.set_grad(Tensor());
  b.set_grad(Tensor());
  const uint64_t into_none = backward_allocations();
  const Tensor w_grad = w.grad().clone(), b_grad = b.grad().clone();
  {
    NoGradGuard no_grad;
    Tensor gw = w.grad(), gb = b.grad();
    gw.zero_();
    gb.zero_();
  }
  const uint64_t into_zeros = backward_allocations();   // adds in place
  EXPECT_EQ(into_none, into_zeros);
  EXPECT_GT(into_none, 0u);
  EXPECT_EQ(max_abs_diff(w.grad(), w_grad), 0.0);   // 0 + g is g, bit for bit
  EXPECT_EQ(max_abs_diff(b.grad(), b_grad), 0.0);
}

TEST(GradSteal, AllocatorStatsCountEveryHostBuffer) {
  const backend::HostAllocatorStats before = backend::host_allocator_stats();
  {
    const Tensor a = empty({10}, DType::f32);
    const Tensor b = empty({3, 4}, DType::f64);
    const backend::HostAllocatorStats during = backend::host_allocator_stats();
    EXPECT_EQ(during.allocations - before.allocations, 2u);
    EXPECT_EQ(during.bytes_allocated - before.bytes_allocated, 10u * 4 + 12u * 8);
    EXPECT_EQ(during.bytes_in_use() - before.bytes_in_use(), 10 * 4 + 12 * 8);
    const Tensor view = b.t();   // a view: no buffer
    EXPECT_EQ(backend::host_allocator_stats().allocations, during.allocations);
  }
  const backend::HostAllocatorStats after = backend::host_allocator_stats();
  EXPECT_EQ(after.frees - before.frees, 2u);
  EXPECT_EQ(after.bytes_in_use(), before.bytes_in_use());
}

}  // namespace
}  // namespace tinyddp::test
