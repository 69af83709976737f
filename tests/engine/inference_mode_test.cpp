// Inference tensors (engine/core/inference_mode.h) and detach_: which tensors are inference tensors, what is
// refused outside the mode (with PyTorch 1.13's texts, checked against 1.13 in tests/golden/api_more.json through
// the Python front end) and that the flag is per thread.
#include <gtest/gtest.h>

#include <thread>

#include "tests/engine/test_util.h"

namespace tinyddp::test {
namespace {

// Inference mode for a scope, restored on exit (the Python front end also turns grad mode off).
struct InferenceScope {
  InferenceScope() : prev(InferenceMode::is_enabled()) { InferenceMode::set_enabled(true); }
  ~InferenceScope() { InferenceMode::set_enabled(prev); }
  bool prev;
};

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(InferenceMode, TensorsMadeInsideAndTheirViewsAreInferenceTensors) {
  const Tensor normal = ones({2, 3});
  Tensor inside, view_of_normal;
  {
    InferenceScope scope;
    inside = normal * 2.0;
    view_of_normal = normal.transpose(0, 1);
  }
  EXPECT_TRUE(inside.is_inference());
  EXPECT_FALSE(normal.is_inference());
  EXPECT_FALSE(view_of_normal.is_inference());   // a view of a normal tensor stays normal
  EXPECT_TRUE(inside.transpose(0, 1).is_inference());
  EXPECT_TRUE(inside.detach().is_inference());
  EXPECT_FALSE((inside * 2.0).is_inference());   // a new tensor made outside the mode
  EXPECT_FALSE(clone(inside).is_inference());
}

TEST(InferenceMode, InPlaceOutsideWritesThenRaisesAsPyTorch) {
  Tensor t;
  {
    InferenceScope scope;
    t = zeros({3});
    fill_(t, 1.0);   // allowed inside
  }
  const std::string text = error_of([&] { fill_(t, 5.0); });
  EXPECT_EQ(text, "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone to "
                  "get a normal tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 for "
                  "more details.");
  EXPECT_EQ(t.to_vector<double>(), (std::vector<double>{5, 5, 5}));   // PyTorch's bump raises after the write
  Tensor view = t.narrow(0, 0, 2);
  EXPECT_NE(error_of([&] { add_(view, ones({2})); }), "");
}

TEST(InferenceMode, RequiresGradOutsideIsRefused) {
  Tensor t;
  {
    InferenceScope scope;
    t = zeros({3});
    t.requires_grad_(true);   // allowed inside, as PyTorch's
    t.requires_grad_(false);
  }
  EXPECT_EQ(error_of([&] { t.requires_grad_(true); }),
            "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.");
  t.requires_grad_(false);   // turning it off is allowed
}

TEST(InferenceMode, IsPerThread) {
  InferenceScope scope;
  bool other_enabled = true, other_tensor = true;
  std::thread([&] {
    other_enabled = InferenceMode::is_enabled();
    other_tensor = zeros({1}).is_inference();
  }).join();
  EXPECT_FALSE(other_enabled);
  EXPECT_FALSE(other_tensor);
  EXPECT_TRUE(zeros({1}).is_inference());
}

TEST(DetachInPlace, DropsHistoryAndRefusesViews) {
  Tensor x = ones({2, 3}).requires_grad_();
  Tensor y = x * 2.0;
  ASSERT_TRUE(y.requires_grad());
  y.detach_();
  EXPECT_FALSE(y.requires_grad());
  EXPECT_TRUE(y.is_leaf());
  EXPECT_EQ(y.grad_fn(), nullptr);
  x.detach_();
  EXPECT_FALSE(x.requires_grad());
  Tensor v = (ones({2, 3}).requires_grad_() * 2.0).transpose(0, 1);
  EXPECT_NE(error_of([&] { v.detach_(); }).find("Can't detach views in-place. Use detach() instead."),
            std::string::npos);
}

}  // namespace
}  // namespace tinyddp::test
