// retain_graph: a second backward through the same graph works only when the saved tensors were kept.
#include <gtest/gtest.h>

#include "tests/engine/test_util.h"

namespace tinyddp::test {
namespace {

BackwardOptions retain(bool r) {
  BackwardOptions o;
  o.retain_graph = r;
  return o;
}

TEST(RetainGraph, SecondBackwardAccumulates) {
  const Tensor x = make({0.5, -1.0, 2.0}, {3}).requires_grad_();
  const Tensor y = sum(exp(x));   // exp saves its output
  y.backward({}, retain(true));
  const Tensor first = x.grad().clone();
  EXPECT_TRUE(all_close(first, exp(x.detach()), 1e-15));
  y.backward({}, retain(true));
  EXPECT_TRUE(all_close(x.grad(), first * 2.0, 1e-15));
  y.backward();   // the last one may free the graph
  EXPECT_TRUE(all_close(x.grad(), first * 3.0, 1e-15));
}

TEST(RetainGraph, SecondBackwardWithoutRetainThrowsPyTorchsMessage) {
  const Tensor x = make({0.5, -1.0, 2.0}, {3}, DType::f32).requires_grad_();
  const Tensor y = sum(exp(x));
  y.backward();
  const Tensor after_first = x.grad().clone();
  EXPECT_EQ(error_message([&] { y.backward(); }), golden_error("backward_twice"));
  // The failed backward must not have touched .grad.
  EXPECT_TRUE(all_close(x.grad(), after_first, 0.0));
}

TEST(RetainGraph, ExplicitFalseFreesTheGraph) {
  const Tensor x = make({0.5, -1.0}, {2}).requires_grad_();
  const Tensor y = sum(x * x);   // mul saves both operands
  y.backward({}, retain(false));
  EXPECT_EQ(error_message([&] { y.backward(); }), golden_error("backward_twice"));
}

TEST(RetainGraph, DefaultsToCreateGraph) {
  const Tensor x = make({0.5, -1.0, 2.0}, {3}).requires_grad_();
  const Tensor y = sum(pow(x, 3.0));
  BackwardOptions o;
  o.create_graph = true;   // retain_graph unset: becomes true
  y.backward({}, o);
  EXPECT_TRUE(x.grad().requires_grad());
  EXPECT_EQ(error_message([&] { y.backward(); }), "<no exception>");
  // 3x^2 + 3x^2
  EXPECT_TRUE(all_close(x.grad(), make({1.5, 6.0, 24.0}, {3}), 1e-12));
  // backward(create_graph) makes a reference cycle, as in PyTorch (which warns about it): x owns .grad,
  // whose graph saved x. Dropping .grad breaks it (LeakSanitizer reports it otherwise).
  x.set_grad(Tensor());
}

TEST(RetainGraph, CreateGraphWithExplicitRetainFalseFrees) {
  const Tensor x = make({0.5, -1.0}, {2}).requires_grad_();
  const Tensor y = sum(exp(x));
  BackwardOptions o;
  o.create_graph = true;
  o.retain_graph = false;
  y.backward({}, o);
  EXPECT_EQ(error_message([&] { y.backward(); }), golden_error("backward_twice"));
}

TEST(RetainGraph, GradFreesSavedTensorsToo) {
  const Tensor x = make({0.5, -1.0, 2.0}, {3}).requires_grad_();
  const Tensor y = sum(tanh(x));
  const auto g1 = autograd::grad({y}, {x});
  EXPECT_TRUE(all_close(g1[0], 1.0 - tanh(x.detach()) * tanh(x.detach()), 1e-15));
  EXPECT_EQ(error_message([&] { autograd::grad({y}, {x}); }), golden_error("backward_twice"));
  EXPECT_EQ(error_message([&] { y.backward(); }), golden_error("backward_twice"));
}

TEST(RetainGraph, GradWithRetainGraphCanRepeat) {
  const Tensor x = make({0.5, -1.0, 2.0}, {3}).requires_grad_();
  const Tensor y = sum(tanh(x));
  autograd::GradOptions o;
  o.retain_graph = true;
  const auto g1 = autograd::grad({y}, {x}, {}, o);
  const auto g2 = autograd::grad({y}, {x}, {}, o);
  EXPECT_TRUE(all_close(g2[0], g1[0], 0.0));
  EXPECT_FALSE(x.grad().defined());   // grad never accumulates into .grad
}

// Freed saved tensors are released: the graph no longer keeps the saved intermediate alive.
TEST(RetainGraph, ReleaseDropsSavedStorage) {
  const Tensor x = make({0.5, -1.0, 2.0}, {3}).requires_grad_();
  Tensor e = exp(x);
  const std::weak_ptr<Storage> saved_storage = e.storage();
  const Tensor y = sum(e * e);
  e = Tensor();   // only the graph refers to exp's output now
  EXPECT_FALSE(saved_storage.expired());
  y.backward();
  EXPECT_TRUE(saved_storage.expired());
}

}  // namespace
}  // namespace tinyddp::test
