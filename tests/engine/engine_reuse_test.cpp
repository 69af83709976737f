// What the engine's per-thread reuse must not change (engine.cpp: NodeIndex and GraphTaskPool): a backward
// right after another one, of a larger or a smaller graph, after one that threw, or nested inside another,
// gets exactly its own gradients. And what the host allocator promises the kernels: every CPU buffer starts
// on a 64-byte boundary (backend.cpp), which keeps Eigen's reductions in one summation order.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <stdexcept>

#include "tests/engine/test_util.h"

namespace tinyddp::test {
namespace {

// d/dx of x * 2 * 2 * ... (n times) = 2^n: exact in f64, so any mixed-up gradient shows.
double chain_of_doublings_grad(int n) {
  Tensor x = scalar_tensor(1.5, DType::f64).requires_grad_();
  Tensor y = x;
  for (int i = 0; i < n; ++i) y = y * 2.0;
  y.backward();
  return x.grad().item();
}

TEST(EngineReuse, GraphsOfChangingSizeOnOneThreadGetTheirOwnGradients) {
  // Large, small, larger, tiny: the kept node index grows, and entries of earlier graphs (whose node
  // addresses the allocator hands out again) must never be found again.
  for (int n : {3000, 5, 1, 4000, 2, 700, 0, 64, 65, 3}) {
    EXPECT_EQ(chain_of_doublings_grad(n), std::ldexp(1.0, n)) << "chain of " << n << " doublings";
  }
}

TEST(EngineReuse, ABackwardAfterOneThatThrewStartsClean) {
  Tensor x = scalar_tensor(2.0, DType::f64).requires_grad_();
  Tensor h = x * 3.0;
  h.register_hook([](const Tensor&) -> Tensor { throw std::runtime_error("hook failed on purpose"); });
  Tensor y = h * 5.0 + x;
  EXPECT_THROW(y.backward(), std::runtime_error);
  // The failed task held gradients in flight; the next backward on this thread must not see any of them.
  Tensor a = scalar_tensor(2.0, DType::f64).requires_grad_();
  (a * 7.0 + a * a).backward();
  EXPECT_EQ(a.grad().item(), 7.0 + 2 * 2.0);
}

TEST(EngineReuse, ABackwardNestedInAHookGetsATaskOfItsOwn) {
  Tensor x = scalar_tensor(2.0, DType::f64).requires_grad_();
  Tensor w = scalar_tensor(3.0, DType::f64).requires_grad_();
  double inner_grad = 0;
  Tensor h = x * x;   // dh/dx = 2x = 4
  h.register_hook([&](const Tensor& grad) {
    // While the outer task runs: an unrelated graph, differentiated on the same thread (hooks run with
    // grad mode off, as the backward's rules do, so the inner graph turns it back on).
    AutoGradMode grad_mode(true);
    Tensor v = scalar_tensor(1.25, DType::f64).requires_grad_();
    Tensor z = v * w * w;
    inner_grad = autograd::grad({z}, {v})[0].item();   // w^2 = 9
    return grad;
  });
  Tensor y = h * w;   // dy/dx = 2xw = 12, dy/dw = x^2 = 4
  y.backward();
  EXPECT_EQ(inner_grad, 9.0);
  EXPECT_EQ(x.grad().item(), 12.0);
  EXPECT_EQ(w.grad().item(), 4.0);
}

// tanh, sigmoid and relu take one fused pass in a plain backward and the differentiable ops under
// create_graph (elementwise.cpp): both must give the same bits, -0 and +0 aside for relu's masked entries.
TEST(FusedBackwardRules, EqualTheDifferentiableRulesBitForBit) {
  for (DType dtype : {DType::f32, DType::f64}) {
    for (auto* op : {+[](const Tensor& x) { return tanh(x); }, +[](const Tensor& x) { return sigmoid(x); },
                     +[](const Tensor& x) { return relu(x); }}) {
      Tensor x = (randn({7, 33}, dtype) * 3.0).detach().requires_grad_();
      Tensor seed = randn({7, 33}, dtype).requires_grad_();   // so the recorded rule's result has history
      const Tensor fused = autograd::grad({op(x)}, {x}, {seed})[0];
      const Tensor recorded = autograd::grad({op(x)}, {x}, {seed}, {.create_graph = true})[0];
      ASSERT_TRUE(recorded.requires_grad()) << "the create_graph path must be the differentiable one";
      const std::vector<double> a = fused.to_vector<double>(), b = recorded.detach().to_vector<double>();
      for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i], b[i]) << "element " << i << " of " << dtype_name(dtype);
    }
  }
}

TEST(HostBuffers, StartOn64ByteBoundariesAtEverySize) {
  std::vector<Tensor> alive;   // kept, so that the allocator cannot hand one address out again and again
  for (int round = 0; round < 8; ++round) {
    for (int64_t n : {0, 1, 3, 4, 15, 16, 17, 255, 256, 1000, 4096, 100000}) {
      for (DType dtype : {DType::f32, DType::f64}) {
        Tensor t = empty({n}, dtype);
        EXPECT_EQ(reinterpret_cast<uintptr_t>(t.raw_data()) % 64, 0u) << n << " elements of " << dtype_name(dtype);
        alive.push_back(t);
      }
    }
  }
}

}  // namespace
}  // namespace tinyddp::test
