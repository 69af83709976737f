// Determinism and thread safety: the same computation gives bitwise-identical results, also when
// independent graphs run concurrently on several threads (the thread process group runs one rank per
// thread), and grad mode is per thread.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <latch>
#include <thread>

#include "tests/engine/test_util.h"

namespace tinyddp::test {
namespace {

// Legend: B = batch 8, D = inputs 6, H = hidden 16, C = classes 5.
struct MlpResult {
  std::vector<float> loss;    // (1)
  std::vector<float> grads;   // every parameter's .grad, concatenated
};

// A two-layer MLP with a cross-entropy loss on data drawn from this thread's generator seeded with `seed`.
MlpResult run_mlp(uint64_t seed) {
  manual_seed(seed);
  const Tensor x = randn({8, 6});                                                 // (B, D)
  const Tensor target = randint(0, 5, {8});                                       // (B)
  const Tensor w1 = (randn({16, 6}) * 0.5).requires_grad_(), b1 = randn({16}).requires_grad_();
  const Tensor w2 = (randn({5, 16}) * 0.5).requires_grad_(), b2 = randn({5}).requires_grad_();
  const Tensor h = tanh(addmm(b1, x, t(w1)));                                     // (B, H)
  const Tensor logits = addmm(b2, relu(h) + sigmoid(h), t(w2));                   // (B, C)
  const Tensor loss = cross_entropy(logits, target) + mse_loss(softmax(logits, 1), softmax(logits * 0.5, 1));
  loss.backward();
  MlpResult r;
  r.loss = loss.to_vector<float>();
  for (const Tensor& p : {w1, b1, w2, b2}) {
    const auto g = p.grad().to_vector<float>();
    r.grads.insert(r.grads.end(), g.begin(), g.end());
  }
  return r;
}

bool bitwise_equal(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

double max_diff(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return INFINITY;
  double m = 0.0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(static_cast<double>(a[i]) - b[i]));
  return m;
}

TEST(Determinism, MlpForwardBackwardIsBitwiseRepeatable) {
  const MlpResult a = run_mlp(42), b = run_mlp(42);
  ASSERT_EQ(a.grads.size(), 16u * 6 + 16 + 5 * 16 + 5);
  EXPECT_TRUE(bitwise_equal(a.loss, b.loss)) << "max diff " << max_diff(a.loss, b.loss);
  EXPECT_TRUE(bitwise_equal(a.grads, b.grads)) << "max diff " << max_diff(a.grads, b.grads);
  // A different seed is a different problem (so the comparison above is not vacuous).
  EXPECT_FALSE(bitwise_equal(a.grads, run_mlp(43).grads));
}

constexpr int kThreads = 4;
constexpr int kIterations = 50;

TEST(Determinism, ConcurrentIndependentGraphsMatchSequentialRuns) {
  auto seed_of = [](int thread, int it) { return static_cast<uint64_t>(1000 * thread + it); };
  std::vector<std::vector<MlpResult>> sequential(kThreads), concurrent(kThreads);
  for (int th = 0; th < kThreads; ++th)
    for (int it = 0; it < kIterations; ++it) sequential[th].push_back(run_mlp(seed_of(th, it)));

  std::latch start(kThreads);
  std::vector<std::thread> threads;
  std::atomic<int> errors{0};
  for (int th = 0; th < kThreads; ++th) {
    threads.emplace_back([&, th] {
      start.arrive_and_wait();   // maximize overlap
      try {
        for (int it = 0; it < kIterations; ++it) concurrent[th].push_back(run_mlp(seed_of(th, it)));
      } catch (const std::exception&) {
        ++errors;
      }
    });
  }
  for (auto& t : threads) t.join();
  ASSERT_EQ(errors.load(), 0);
  for (int th = 0; th < kThreads; ++th) {
    ASSERT_EQ(concurrent[th].size(), static_cast<size_t>(kIterations));
    for (int it = 0; it < kIterations; ++it) {
      const MlpResult &c = concurrent[th][it], &s = sequential[th][it];
      ASSERT_TRUE(bitwise_equal(c.loss, s.loss)) << "thread " << th << " iteration " << it;
      ASSERT_TRUE(bitwise_equal(c.grads, s.grads))
          << "thread " << th << " iteration " << it << ": max diff " << max_diff(c.grads, s.grads);
    }
  }
}

TEST(Determinism, GradModeIsPerThread) {
  std::latch no_grad_entered(1), other_checked(1);
  bool no_grad_thread_recorded = true, other_thread_recorded = false, other_thread_mode = false;
  std::thread no_grad_thread([&] {
    NoGradGuard no_grad;
    no_grad_entered.count_down();
    other_checked.wait();   // hold NoGradGuard while the other thread works
    const Tensor x = make({1.0}, {1}).requires_grad_();
    no_grad_thread_recorded = (x * 2.0).requires_grad();
  });
  std::thread other_thread([&] {
    no_grad_entered.wait();
    other_thread_mode = GradMode::is_enabled();
    const Tensor x = make({1.0}, {1}).requires_grad_();
    other_thread_recorded = (x * 2.0).requires_grad();
    other_checked.count_down();
  });
  no_grad_thread.join();
  other_thread.join();
  EXPECT_FALSE(no_grad_thread_recorded);
  EXPECT_TRUE(other_thread_mode);
  EXPECT_TRUE(other_thread_recorded);
  EXPECT_TRUE(GradMode::is_enabled());   // and the main thread is untouched
}

// Separate graphs on several threads may end in the same leaf: AccumulateGrad serializes the updates.
// Integer-valued gradients make the sum exact whatever the order.
TEST(Determinism, ConcurrentAccumulationIntoASharedLeafLosesNothing) {
  const Tensor w = zeros({64}, DType::f64).requires_grad_();
  std::latch start(kThreads);
  std::vector<std::thread> threads;
  for (int th = 0; th < kThreads; ++th) {
    threads.emplace_back([&, th] {
      start.arrive_and_wait();
      for (int it = 0; it < kIterations; ++it) sum(w * static_cast<double>(th + 1)).backward();
    });
  }
  for (auto& t : threads) t.join();
  // sum over threads of (th + 1) * iterations = (1 + 2 + 3 + 4) * 50 = 500
  EXPECT_TRUE(all_close(w.grad(), full({64}, 500.0, DType::f64), 0.0));
}

}  // namespace
}  // namespace tinyddp::test
