// In-place ops under autograd (Note [In-place ops under autograd] in engine/autograd/inplace.h): the history they
// record, on tensors and through views, the gradients that flow through it, and 1.13's refusals and texts (the
// texts were read off PyTorch 1.13.1 for the same programs).
#include <gtest/gtest.h>

#include "engine/autograd/inplace.h"
#include "tests/engine/test_util.h"

namespace tinyddp::test {
namespace {

std::string fn_name(const Tensor& t) { return t.grad_fn() ? t.grad_fn()->name() : "None"; }
std::string next_name(const Tensor& t, size_t i) {
  const auto& edge = t.grad_fn()->next_edges().at(i);
  return edge.valid() ? edge.node->name() : "None";
}

TEST(Inplace, AnOpOnATensorWithHistoryBecomesItsHistory) {
  const Tensor w = make({1.0, -2.0, 3.0}, {3}).requires_grad_();
  Tensor a = w * w;   // MulBackward0
  const std::string before = fn_name(a);
  a.add_(w);
  EXPECT_EQ(fn_name(a), "AddBackward0");
  EXPECT_EQ(next_name(a, 0), before);   // the op's input 0: a's history before the write
  EXPECT_EQ(next_name(a, 1), "AccumulateGrad");
  EXPECT_EQ(a.version(), 1u);   // one bump per op
  sum(a).backward();   // d/dw (w^2 + w) = 2w + 1
  EXPECT_TRUE(all_close(w.grad(), make({3.0, -3.0, 7.0}, {3}), 0.0));
}

TEST(Inplace, AnOpThatNeedsTheOldValuesGetsThem) {
  // log_ needs x for its gradient, mul_ needs self's old values for other's gradient: both see them, although self
  // now holds the new ones.
  const Tensor w = make({1.0, 2.0, 4.0}, {3}).requires_grad_();
  const Tensor v = make({3.0, 5.0, 7.0}, {3}).requires_grad_();
  Tensor a = w * 1.0;
  apply_inplace(a, {}, [](const Tensor& x) { return log(x); });
  EXPECT_EQ(fn_name(a), "LogBackward0");
  a.mul_(v);   // a = log(w) * v
  sum(a).backward();
  EXPECT_TRUE(all_close(w.grad(), make({3.0, 2.5, 1.75}, {3}), 1e-15));   // v / w
  EXPECT_TRUE(all_close(v.grad(), make({0.0, std::log(2.0), std::log(4.0)}, {3}), 1e-15));
}

TEST(Inplace, ATensorThatDoesNotRequireGradGetsHistoryFromItsSource) {
  const Tensor w = make({1.0, 2.0}, {2}).requires_grad_();
  Tensor h = zeros({2}, DType::f64);
  h.add_(w * 3.0);
  EXPECT_TRUE(h.requires_grad());
  EXPECT_FALSE(h.is_leaf());
  EXPECT_EQ(fn_name(h), "AddBackward0");
  EXPECT_EQ(next_name(h, 0), "None");   // h had no history
  sum(h).backward();
  EXPECT_TRUE(all_close(w.grad(), make({3.0, 3.0}, {2}), 0.0));
}

TEST(Inplace, OverwritingOpsNameTheirNodesAsPyTorch) {
  const Tensor w = make({1.0, 2.0}, {2}).requires_grad_();
  Tensor a = w * 2.0, b = w * 2.0, c = w * 2.0, d = w * 2.0;
  a.fill_(1.0);
  b.zero_();
  c.copy_(w * w);
  fill_(d, sum(w));
  EXPECT_EQ(fn_name(a), "FillBackward2");
  EXPECT_EQ(fn_name(b), "ZeroBackward0");
  EXPECT_EQ(fn_name(c), "CopyBackwards");
  EXPECT_EQ(fn_name(d), "FillBackward3");
  sum(a + b + c + d).backward();   // only c (w^2) and d (sum w, twice) carry w: 2w + 2
  EXPECT_TRUE(all_close(w.grad(), make({4.0, 6.0}, {2}), 0.0));
}

TEST(Inplace, AWriteThroughAViewIsRecordedOnTheBase) {
  const Tensor w = make({1.0, 2.0, 3.0, 4.0, 5.0, 6.0}, {2, 3}).requires_grad_();
  Tensor a = w * 1.0;
  Tensor row = select(a, 0, 1);
  Tensor column = select(a, 1, 0);   // a view made before the write
  EXPECT_TRUE(row.is_view());
  EXPECT_TRUE(row.view_base().is_same(a));
  EXPECT_EQ(fn_name(column), "SelectBackward0");
  row.mul_(row * 1.0);   // a[1] = a[1]^2 (row.mul_(row) would change what mul saved for its other input)
  EXPECT_EQ(fn_name(a), "CopySlices");
  EXPECT_EQ(next_name(a, 0), "MulBackward1");   // the base's old history
  EXPECT_EQ(fn_name(row), "AsStridedBackward0");
  EXPECT_EQ(fn_name(column), "AsStridedBackward0");   // its values went through the write too
  EXPECT_EQ(a.version(), 1u);
  EXPECT_EQ(row.version(), 1u);
  // loss = sum(a) + sum(column^2): a = [[w00, w01, w02], [w10^2, w11^2, w12^2]], column = [w00, w10^2].
  (sum(a) + sum(column * column)).backward();
  EXPECT_TRUE(all_close(w.grad(), make({1.0 + 2.0, 1.0, 1.0, 8.0 + 4.0 * 64.0, 10.0, 12.0}, {2, 3}), 1e-12));
}

TEST(Inplace, AViewOfAViewRecordsOnTheRoot) {
  const Tensor w = make({1.0, 2.0, 3.0, 4.0}, {2, 2}).requires_grad_();
  Tensor a = w * 1.0;
  Tensor rows = slice(a, 0, 1, 2);
  Tensor one = select(rows, 1, 1);
  EXPECT_TRUE(one.view_base().is_same(a));
  one.zero_();
  EXPECT_EQ(fn_name(a), "CopySlices");
  EXPECT_EQ(fn_name(rows), "AsStridedBackward0");
  sum(a).backward();
  EXPECT_TRUE(all_close(w.grad(), make({1.0, 1.0, 1.0, 0.0}, {2, 2}), 0.0));
}

TEST(Inplace, CopyingIntoAViewOfAPlainTensorGivesItHistory) {
  // h[:, 1:] = w[:, :2], the first thing many users write into a preallocated buffer.
  const Tensor w = make({1.0, 2.0, 3.0, 4.0, 5.0, 6.0}, {2, 3}).requires_grad_();
  Tensor h = zeros({2, 3}, DType::f64);
  Tensor window = slice(h, 1, 1, 3);
  window.copy_(slice(w, 1, 0, 2));
  EXPECT_EQ(fn_name(h), "CopySlices");
  EXPECT_EQ(next_name(h, 0), "None");
  EXPECT_EQ(next_name(h, 1), "SliceBackward0");
  EXPECT_TRUE(window.requires_grad());
  sum(h * make({1.0, 2.0, 3.0, 4.0, 5.0, 6.0}, {2, 3})).backward();
  EXPECT_TRUE(all_close(w.grad(), make({2.0, 3.0, 0.0, 5.0, 6.0, 0.0}, {2, 3}), 0.0));
}

TEST(Inplace, RefusalsHavePyTorchsTexts) {
  const Tensor w = make({1.0, 2.0, 3.0}, {3}).requires_grad_();
  EXPECT_EQ(error_message([&] { Tensor l = w; l.add_(ones({3}, DType::f64)); }),
            "a leaf Variable that requires grad is being used in an in-place operation.");
  EXPECT_EQ(error_message([&] { Tensor v = select(w, 0, 0); v.mul_(2.0); }),
            "a view of a leaf Variable that requires grad is being used in an in-place operation.");
  Tensor a = w * 2.0;
  Tensor made_without_grad;
  {
    NoGradGuard no_grad;
    made_without_grad = select(a, 0, 1);
  }
  EXPECT_EQ(error_message([&] { made_without_grad.mul_(2.0); }),
            "A view was created in no_grad mode and is being modified inplace with grad mode enabled. Given that this "
            "use case is ambiguous and error-prone, it is forbidden. You can clarify your code by moving both the view "
            "and the inplace either both inside the no_grad block (if you don't want the inplace to be tracked) or "
            "both outside (if you want the inplace to be tracked).");
  EXPECT_EQ(a.version(), 0u);   // refused before any write
  // Its base changed in place since (even without grad mode): reading its history is refused too.
  {
    NoGradGuard no_grad;
    a.mul_(3.0);
  }
  EXPECT_EQ(error_message([&] { (void)made_without_grad.grad_fn(); }),
            "A view was created in no_grad mode and its base or another view of its base has been modified inplace "
            "with grad mode enabled. Given that this use case is ambiguous and error-prone, it is forbidden. You can "
            "clarify your code by moving both the view and the inplace either both inside the no_grad block (if you "
            "don't want the inplace to be tracked) or both outside (if you want the inplace to be tracked).");
  Tensor expanded = expand(zeros({1, 3}, DType::f64), {2, 3});
  EXPECT_EQ(error_message([&] { expanded.add_(ones({2, 3}, DType::f64)); }),
            "unsupported operation: more than one element of the written-to tensor refers to a single memory "
            "location. Please clone() the tensor before performing the operation.");
}

TEST(Inplace, AMultiOutputViewIsNeverWrittenUnderAutograd) {
  const Tensor w = make({1.0, 2.0, 3.0, 4.0}, {2, 2}).requires_grad_();
  const Tensor a = w * 2.0;
  Tensor part = select(a, 0, 0);
  autograd::mark_view(part, a, /*multi_output=*/true);
  EXPECT_EQ(error_message([&] { part.mul_(2.0); }),
            "Output 0 of SelectBackward0 is a view and is being modified inplace. This view is the output of a function "
            "that returns multiple views. Such functions do not allow the output views to be modified inplace. You "
            "should replace the inplace operation by an out-of-place one.");
}

TEST(Inplace, ASavedTensorModifiedInPlaceIsCaughtWithTheNodeThatMadeItNow) {
  const Tensor w = randn({3, 4}, DType::f32).requires_grad_();
  Tensor a = w * 2.0;
  const Tensor b = a * a;   // saves a
  a.add_(ones({}, DType::f32));
  EXPECT_EQ(error_message([&] { sum(b).backward(); }),
            "one of the variables needed for gradient computation has been modified by an inplace operation: "
            "[torch.FloatTensor [3, 4]], which is output 0 of AddBackward0, is at version 1; expected version 0 "
            "instead. Hint: enable anomaly detection to find the operation that failed to compute its gradient, with "
            "torch.autograd.set_detect_anomaly(True).");
  // An op that saves its own result (exp) holds self after the write: a second write is caught at version 2.
  Tensor e = w * 2.0;
  apply_inplace(e, {}, [](const Tensor& x) { return exp(x); });
  e.add_(ones({}, DType::f32));
  EXPECT_EQ(error_message([&] { sum(e).backward(); }),
            "one of the variables needed for gradient computation has been modified by an inplace operation: "
            "[torch.FloatTensor [3, 4]], which is output 0 of ExpBackward0, is at version 2; expected version 1 "
            "instead. Hint: enable anomaly detection to find the operation that failed to compute its gradient, with "
            "torch.autograd.set_detect_anomaly(True).");
  // A saved view whose base changed is named by its rebuilt history.
  Tensor f = w * 2.0;
  const Tensor row = select(f, 0, 0);
  const Tensor g = row * row;
  f.add_(ones({}, DType::f32));
  EXPECT_EQ(error_message([&] { sum(g).backward(); }),
            "one of the variables needed for gradient computation has been modified by an inplace operation: "
            "[torch.FloatTensor [4]], which is output 0 of AsStridedBackward0, is at version 1; expected version 0 "
            "instead. Hint: enable anomaly detection to find the operation that failed to compute its gradient, with "
            "torch.autograd.set_detect_anomaly(True).");
}

TEST(Inplace, RetainedGradFollowsTheNewHistory) {
  const Tensor w = make({1.0, 2.0}, {2}).requires_grad_();
  Tensor b = w * 2.0;
  b.retain_grad();
  b.mul_(3.0);
  sum(b * b).backward();   // d loss / d b (the final b = 6w) = 2 b
  EXPECT_TRUE(all_close(b.grad(), make({12.0, 24.0}, {2}), 0.0));
}

TEST(Inplace, UnderCreateGraphAWriteThroughAViewIsDifferentiableAgain) {
  // a = x * 1; a[0] = x1 * x2; d/dx sum(a) = (0, 1 + x2, 1 + x1); its gradient again, summed: 2 on x1 and x2.
  const Tensor x = make({0.5, 2.0, 3.0}, {3}).requires_grad_();
  Tensor a = x * 1.0;
  Tensor first = select(a, 0, 0);
  first.copy_(select(x, 0, 1) * select(x, 0, 2));
  const auto g = autograd::grad({sum(a)}, {x}, {}, {.create_graph = true});
  EXPECT_TRUE(all_close(g[0], make({0.0, 4.0, 3.0}, {3}), 0.0));
  sum(g[0]).backward();
  EXPECT_TRUE(all_close(x.grad(), make({0.0, 1.0, 1.0}, {3}), 0.0));
}

}  // namespace
}  // namespace tinyddp::test
