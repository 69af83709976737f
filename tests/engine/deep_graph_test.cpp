// A very deep graph is built, differentiated and destroyed without recursing once per node: on a thread
// with a small stack (256 KiB), a 200,000-node chain would overflow it if node teardown were recursive.
#include <gtest/gtest.h>
#include <pthread.h>

#include "engine/tinyddp.h"

namespace tinyddp {
namespace {

// Runs fn on a thread whose stack is `stack_bytes`, returning whether it finished.
bool run_with_stack(size_t stack_bytes, void (*fn)()) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, stack_bytes);
  pthread_t thread;
  const bool started = pthread_create(&thread, &attr, [](void* f) -> void* {
    reinterpret_cast<void (*)()>(f)();
    return nullptr;
  }, reinterpret_cast<void*>(fn)) == 0;
  pthread_attr_destroy(&attr);
  return started && pthread_join(thread, nullptr) == 0;
}

constexpr int kDepth = 200000;
double g_grad = 0;

void deep_chain() {
  Tensor x = scalar_tensor(1.0, DType::f64).requires_grad_();
  Tensor y = x;
  for (int i = 0; i < kDepth; ++i) y = y * 1.0;
  y.backward();                      // the engine walks the chain with its own queue, not recursion
  g_grad = x.grad().item();
  Tensor z = x;
  for (int i = 0; i < kDepth; ++i) z = z + 0.0;
  // z (and with it the whole never-run chain) is destroyed here, at the end of scope.
}

TEST(DeepGraph, BuildBackwardAndDestroyWithoutRecursion) {
  ASSERT_TRUE(run_with_stack(256 * 1024, deep_chain));
  EXPECT_EQ(g_grad, 1.0);
}

}  // namespace
}  // namespace tinyddp
