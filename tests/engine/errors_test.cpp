// Errors. Part 1: each case of tests/golden/gen_autograd_errors.py, mirrored with tinyddp's API, must
// throw exactly PyTorch's text. Part 2: tinyddp's own errors (where PyTorch's wording does not apply)
// name the op and what was found; none crashes.
#include <gtest/gtest.h>

#include <functional>
#include <map>

#include "tests/engine/test_util.h"

namespace tinyddp::test {
namespace {

// ---- Part 1: PyTorch's messages, case by case (same names as the generator's functions) ----

Tensor randn3(bool requires_grad) {
  Tensor t = randn({3}, DType::f32);   // the generator runs in float32
  if (requires_grad) t.requires_grad_();
  return t;
}

const std::map<std::string, std::function<void()>>& golden_cases() {
  static const std::map<std::string, std::function<void()>> cases = {
      {"backward_twice",
       [] {
         const Tensor x = randn3(true);
         const Tensor y = sum(exp(x));
         y.backward();
         y.backward();   // the graph's saved tensors are already freed
       }},
      {"allow_unused",
       [] {
         const Tensor x = randn3(true), z = randn3(true);
         const Tensor y = sum(x * x);
         autograd::grad({y}, {x, z});   // z is not in the graph
       }},
      {"non_scalar_implicit",
       [] {
         const Tensor x = randn3(true);
         const Tensor y = x * 2.0;
         y.backward();   // no gradient given for a non-scalar
       }},
      {"inplace_saved_leaf",
       [] {
         const Tensor w = randn3(true);
         Tensor x = randn3(false);
         const Tensor y = sum(w * x);   // mul saves x (needed for dL/dw)
         x.mul_(2.0);                   // x's version 0 -> 1
         y.backward();
       }},
      {"inplace_saved_param_after_step",
       [] {
         Tensor w = randn3(true);
         const Tensor y = sum(exp(w) * w);   // mul saves w
         {
           NoGradGuard no_grad;
           w.add_(scalar_tensor(1.0));   // an "optimizer step" before backward
         }
         y.backward();
       }},
      {"no_requires_grad",
       [] {
         const Tensor x = randn3(false);
         sum(x * 2.0).backward();
       }},
      {"grad_no_requires_grad",
       [] {
         const Tensor x = randn3(false);
         const Tensor y = sum(x * 2.0);
         autograd::grad({y}, {x});
       }},
      {"leaf_inplace",
       [] {
         Tensor w = randn3(true);
         w.add_(scalar_tensor(1.0));   // in place on a leaf that requires grad, outside NoGradGuard
       }},
      {"grad_of_nonscalar_implicit_grad",
       [] {
         const Tensor x = randn3(true);
         autograd::grad({x * 2.0}, {x});
       }},
      {"queue_callback_outside", [] { autograd::Engine::queue_callback([] {}); }},
      {"anomaly_nan_gradient",
       [] {
         const Tensor x = randn3(true);   // seed 0: two of the three values are negative
         autograd::DetectAnomalyGuard anomaly;
         sum(sqrt(x)).backward();   // sqrt of a negative is NaN, and so is its gradient
       }},
  };
  return cases;
}

TEST(GoldenErrors, EveryGoldenKeyHasACase) {
  for (const auto& [key, value] : autograd_errors_golden().items()) {
    if (key == "torch_version") continue;
    EXPECT_TRUE(golden_cases().count(key)) << "no tinyddp case mirrors golden key " << key;
  }
  EXPECT_EQ(golden_cases().size() + 1, autograd_errors_golden().size());
}

class GoldenErrorTest : public ::testing::TestWithParam<std::string> {};

TEST_P(GoldenErrorTest, MessageIsPyTorchsExactly) {
  manual_seed(0);
  const std::string& key = GetParam();
  EXPECT_EQ(error_message(golden_cases().at(key)), golden_error(key));
}

INSTANTIATE_TEST_SUITE_P(AutogradErrors, GoldenErrorTest,
                         ::testing::Values("backward_twice", "allow_unused", "non_scalar_implicit",
                                           "inplace_saved_leaf", "inplace_saved_param_after_step", "no_requires_grad",
                                           "grad_no_requires_grad", "leaf_inplace", "grad_of_nonscalar_implicit_grad",
                                           "queue_callback_outside"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

// The "which is output 0 of ..." form: a saved non-leaf modified in place (PyTorch names its grad_fn).
TEST(GoldenErrors, InplaceOnSavedNonLeafNamesItsGradFn) {
  const Tensor w = make({1.0, 2.0}, {2}).requires_grad_();
  Tensor h = exp(w);
  const Tensor y = sum(h * h);
  {
    NoGradGuard no_grad;
    h.mul_(2.0);
  }
  EXPECT_EQ(error_message([&] { y.backward(); }),
            "one of the variables needed for gradient computation has been modified by an inplace operation: "
            "[torch.DoubleTensor [2]], which is output 0 of ExpBackward0, is at version 1; expected version 0 "
            "instead. Hint: enable anomaly detection to find the operation that failed to compute its gradient, "
            "with torch.autograd.set_detect_anomaly(True).");
}

// ---- Part 2: tinyddp's own messages ----

// The message fn throws contains every one of `parts` (and it did throw a tinyddp::Error).
::testing::AssertionResult throws_containing(const std::function<void()>& fn, const std::vector<std::string>& parts) {
  const std::string msg = error_message(fn);
  if (msg == "<no exception>") return ::testing::AssertionFailure() << "no exception was thrown";
  if (msg.rfind("<not a tinyddp::Error", 0) == 0) return ::testing::AssertionFailure() << msg;
  for (const auto& p : parts)
    if (msg.find(p) == std::string::npos)
      return ::testing::AssertionFailure() << "message lacks \"" << p << "\": " << msg;
  return ::testing::AssertionSuccess() << msg;
}

// A (2, 3) float32 operand for the checks below.
Tensor x23() { return make({1, 2, 3, 4, 5, 6}, {2, 3}, DType::f32); }

// PyTorch's text (its infer_size): the sizes that differ and the rightmost dimension where they do.
TEST(Errors, BroadcastMismatchIsPyTorchsText) {
  const Tensor b = zeros({4}, DType::f32);
  const std::string at_1 = "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1";
  EXPECT_TRUE(throws_containing([&] { add(x23(), b); }, {at_1}));
  EXPECT_TRUE(throws_containing([&] { sub(x23(), b); }, {at_1}));
  EXPECT_TRUE(throws_containing([&] { mul(x23(), b); }, {at_1}));
  EXPECT_TRUE(throws_containing([&] { div(x23(), zeros({3, 3}, DType::f32)); },
                                {"The size of tensor a (2) must match the size of tensor b (3) at non-singleton "
                                 "dimension 0"}));
  EXPECT_TRUE(throws_containing([&] { mul(zeros({2, 1, 3}, DType::f32), zeros({4, 2}, DType::f32)); },
                                {"tensor a (3)", "tensor b (2)", "dimension 2"}));
}

// The elementwise arithmetic ops and cat promote as PyTorch's (type_promotion_test.cpp); the others refuse a mix.
TEST(Errors, DtypeMixIsRefusedWhereTheOpDoesNotPromote) {
  const Tensor d = zeros({2, 3}, DType::f64);
  EXPECT_EQ(add(x23(), d).dtype(), DType::f64);
  EXPECT_EQ(cat({x23(), d}, 0).dtype(), DType::f64);
  EXPECT_TRUE(throws_containing([&] { matmul(x23(), zeros({3, 2}, DType::f64)); }, {"matmul", "float32", "float64"}));
  EXPECT_TRUE(throws_containing([&] { log_softmax(zeros({2}, DType::i64), 0); }, {"log_softmax", "int64"}));
}

// PyTorch's text, as an IndexError; a 0-dim tensor takes dim 0 and -1 (PyTorch's range [-1, 0]).
TEST(Errors, BadDimIsPyTorchsIndexError) {
  EXPECT_THROW(sum(x23(), {2}), IndexError);
  EXPECT_TRUE(throws_containing([&] { sum(x23(), {2}); },
                                {"Dimension out of range (expected to be in range of [-2, 1], but got 2)"}));
  EXPECT_TRUE(throws_containing([&] { sum(x23(), {-3}); }, {"got -3"}));
  EXPECT_TRUE(throws_containing([&] { sum(x23(), {1, -1}); }, {"dim 1 appears multiple times in the list of dims"}));
  EXPECT_TRUE(throws_containing([&] { mean(x23(), {5}); }, {"got 5"}));
  EXPECT_THROW(transpose(x23(), 0, 3), IndexError);
  EXPECT_THROW(narrow(x23(), 2, 0, 1), IndexError);
  EXPECT_THROW(max(x23(), 4), IndexError);
  EXPECT_THROW(log_softmax(x23(), 2), IndexError);
  const Tensor scalar = scalar_tensor(2.0);
  EXPECT_THROW(sum(scalar, {1}), IndexError);
  EXPECT_TRUE(throws_containing([&] { scalar.size(0); }, {"Dimension specified as 0 but tensor has no dimensions"}));
  EXPECT_THROW(max(zeros({0, 2}, DType::f32), 0), IndexError);
}

// Reducing a 0-dim tensor over dim 0 or -1 leaves it as it is, forward and backward (PyTorch: s.sum(0) is s).
TEST(Errors, ZeroDimTensorsReduceOverTheirOnlyDim) {
  const Tensor s = scalar_tensor(2.0).requires_grad_();
  EXPECT_EQ(sum(s, {0}).item<double>(), 2.0);
  EXPECT_EQ(mean(s, {-1}, /*keepdim=*/true).dim(), 0);
  log_softmax(s, 0).backward();
  EXPECT_EQ(s.grad().item<double>(), 0.0);
  EXPECT_TRUE(throws_containing([&] { cat({s, scalar_tensor(1.0)}, 0); },
                                {"zero-dimensional tensor (at position 0) cannot be concatenated"}));
  EXPECT_TRUE(throws_containing([&] { cat({zeros({1}, DType::f32), scalar_tensor(1.0)}, 0); },
                                {"zero-dimensional tensor (at position 1) cannot be concatenated"}));
}

// 1.13's texts; start is wrapped as a dim over the dim's size (an IndexError beyond it), except start == size
TEST(Errors, NarrowOutOfRangeIsPyTorchs) {
  EXPECT_TRUE(throws_containing([&] { narrow(x23(), 1, 2, 5); },
                                {"start (2) + length (5) exceeds dimension size (3)."}));
  EXPECT_TRUE(throws_containing([&] { narrow(x23(), 0, 1, 2); },
                                {"start (1) + length (2) exceeds dimension size (2)."}));
  EXPECT_TRUE(throws_containing([&] { narrow(x23(), 0, -1, 2); },
                                {"start (1) + length (2) exceeds dimension size (2)."}));
  EXPECT_THROW(narrow(x23(), 0, 3, 0), IndexError);
  EXPECT_EQ(narrow(x23(), 0, 2, 0).shape(), (Shape{0, 3}));
}

TEST(Errors, MatmulShapeMismatchNamesOpAndShapes) {
  EXPECT_TRUE(throws_containing([&] { matmul(x23(), zeros({4, 5}, DType::f32)); },
                                {"mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)"}));
  EXPECT_TRUE(throws_containing([&] { matmul(zeros({3}, DType::f32), zeros({4}, DType::f32)); },
                                {"matmul", "[3]", "[4]"}));
  EXPECT_TRUE(throws_containing([&] { matmul(x23(), zeros({4}, DType::f32)); }, {"matmul", "[2, 3]", "[4]"}));
  EXPECT_TRUE(throws_containing([&] { matmul(zeros({4}, DType::f32), x23()); }, {"matmul", "[4]", "[2, 3]"}));
  EXPECT_TRUE(throws_containing([&] { matmul(zeros({2, 2, 3}, DType::f32), zeros({2, 4, 2}, DType::f32)); },
                                {"matmul", "[2, 2, 3]", "[2, 4, 2]"}));
  EXPECT_TRUE(throws_containing([&] { matmul(zeros({2, 2, 3}, DType::f32), zeros({3, 3, 2}, DType::f32)); },
                                {"tensor a (2)", "tensor b (3)", "dimension 0"}));   // batch dims do not broadcast
  EXPECT_TRUE(throws_containing([&] { matmul(scalar_tensor(1.0), x23()); },
                                {"both arguments to matmul need to be at least 1D, but they are 0D and 2D"}));
  EXPECT_TRUE(throws_containing([&] { mm(x23(), zeros({4, 5}, DType::f32)); }, {"mm", "2x3", "4x5"}));
  EXPECT_TRUE(throws_containing([&] { mm(zeros({3}, DType::f32), x23()); }, {"mm", "[3]", "[2, 3]"}));
  EXPECT_TRUE(throws_containing([&] { addmm(zeros({3}, DType::f32), x23(), zeros({4, 3}, DType::f32)); },
                                {"addmm", "2x3", "4x3"}));
  EXPECT_TRUE(throws_containing([&] { addmm(zeros({5}, DType::f32), x23(), zeros({3, 4}, DType::f32)); },
                                {"The expanded size of the tensor (4) must match the existing size (5) at "
                                 "non-singleton dimension 1.  Target sizes: [2, 4].  Tensor sizes: [5]"}));
}

// PyTorch 1.13's texts and exception types (F.cross_entropy on (3, 4) logits).
TEST(Errors, CrossEntropyTargetProblemsAreReportedAsPyTorchReportsThem) {
  const Tensor logits = zeros({3, 4}, DType::f32);
  const Tensor out_of_range = from_vector(std::vector<int64_t>{0, 4, 1}, {3});
  EXPECT_THROW(cross_entropy(logits, out_of_range), IndexError);
  EXPECT_EQ(error_message([&] { cross_entropy(logits, out_of_range); }), "Target 4 is out of bounds.");
  const Tensor negative = from_vector(std::vector<int64_t>{0, -1, 1}, {3});
  EXPECT_EQ(error_message([&] { cross_entropy(logits, negative); }), "Target -1 is out of bounds.");
  EXPECT_EQ(error_message([&] { cross_entropy(logits, zeros({3}, DType::f32)); }),
            "expected scalar type Long but found Float");
  EXPECT_TRUE(throws_containing([&] { cross_entropy(logits, zeros({3, 4}, DType::f32)); }, {"probabilities", "int64"}));
  const Tensor wrong_length = from_vector(std::vector<int64_t>{0, 1}, {2});
  EXPECT_THROW(cross_entropy(logits, wrong_length), ValueError);
  EXPECT_EQ(error_message([&] { cross_entropy(logits, wrong_length); }),
            "Expected input batch_size (3) to match target batch_size (2).");
  EXPECT_EQ(error_message([&] { cross_entropy(logits, zeros({3, 1}, DType::i64)); }),
            "1D target tensor expected, multi-target not supported");
  EXPECT_TRUE(throws_containing([&] { cross_entropy(zeros({3}, DType::f32), wrong_length); }, {"cross_entropy", "[3]"}));
}

// Unbatched logits (C) with a 0-dim target: a batch of one, as 1.13 takes them.
TEST(Errors, CrossEntropyTakesUnbatchedLogits) {
  const Tensor logits = from_vector(std::vector<float>{0.5f, -1.0f, 2.0f}, {3});
  const Tensor target = from_vector(std::vector<int64_t>{2}, {});
  const Tensor batched = cross_entropy(reshape(logits, {1, 3}), reshape(target, {1}));
  EXPECT_EQ(cross_entropy(logits, target).item<float>(), batched.item<float>());
  EXPECT_EQ(cross_entropy(logits, target).dim(), 0);
}

TEST(Errors, ViewOfNonContiguousPointsToReshape) {
  EXPECT_TRUE(throws_containing([&] { view(t(x23()), {6}); }, {"view size is not compatible", "reshape"}));
  EXPECT_NO_THROW(reshape(t(x23()), {6}));
}

TEST(Errors, ShapeErrorsNameOpAndShapes) {
  EXPECT_TRUE(throws_containing([&] { reshape(x23(), {4, 2}); }, {"shape '[4, 2]' is invalid for input of size 6"}));
  EXPECT_TRUE(throws_containing([&] { view(x23(), {-1, 4}); }, {"shape '[-1, 4]' is invalid for input of size 6"}));
  EXPECT_TRUE(throws_containing([&] { reshape(x23(), {-1, -1}); }, {"only one dimension can be inferred"}));
  EXPECT_TRUE(throws_containing([&] { reshape(zeros({0}, DType::f32), {-1, 0}); },
                                {"cannot reshape tensor of 0 elements into shape [-1, 0]"}));
  EXPECT_TRUE(throws_containing([&] { expand(x23(), {2, 4}); }, {"The expanded size", "[2, 4]", "[2, 3]"}));
  EXPECT_TRUE(throws_containing([&] { expand(x23(), {3}); }, {"expand", "number of sizes"}));
  // cat's texts are PyTorch's: the dim that differs, both sizes and the tensor's position.
  EXPECT_TRUE(throws_containing([&] { cat({x23(), zeros({2, 2}, DType::f32)}, 0); },
                                {"Sizes of tensors must match except in dimension 0", "Expected size 3 but got size 2",
                                 "tensor number 1"}));
  EXPECT_TRUE(throws_containing([&] { cat({x23(), zeros({2}, DType::f32)}, 0); },
                                {"Tensors must have same number of dimensions: got 2 and 1"}));
  EXPECT_TRUE(throws_containing([&] { cat({}, 0); }, {"cat", "non-empty"}));
  EXPECT_TRUE(throws_containing([&] { mse_loss(x23(), zeros({3, 2}, DType::f32)); }, {"mse_loss", "[2, 3]", "[3, 2]"}));
  EXPECT_TRUE(throws_containing([&] { t(zeros({2, 2, 2}, DType::f32)); }, {"t()", "3D"}));
  EXPECT_TRUE(throws_containing([&] { clamp(x23(), 1.0, 0.0); }, {"clamp", "min"}));
  EXPECT_TRUE(throws_containing([&] { x23().item(); }, {"item", "6 elements"}));
  EXPECT_TRUE(throws_containing([&] { from_vector(std::vector<double>{1, 2}, {3}); }, {"from_vector", "[3]"}));
  EXPECT_TRUE(throws_containing([&] { x23().data_ptr<double>(); }, {"data_ptr", "float32", "float64"}));
  EXPECT_TRUE(throws_containing([&] { randint(3, 3, {2}); },
                                {"random_ expects 'from' to be less than 'to'", "from=3 >= to=3"}));
}

// In place on a leaf that requires grad: refused under grad mode before any write (PyTorch's text); allowed under
// NoGradGuard (an optimizer's update), where the version counter moves and nothing is recorded. On a non-leaf the op
// is recorded (tests/engine/inplace_test.cpp).
TEST(Errors, InplaceOnALeafThatRequiresGradIsRefusedUnderGradMode) {
  Tensor w = make({1.0, 2.0, 3.0}, {3}).requires_grad_();
  const Tensor one = ones({3}, DType::f64);
  const char* text = "a leaf Variable that requires grad is being used in an in-place operation.";
  EXPECT_EQ(error_message([&] { w.add_(one); }), text);
  EXPECT_EQ(error_message([&] { w.mul_(2.0); }), text);
  EXPECT_EQ(error_message([&] { w.mul_(one); }), text);
  EXPECT_EQ(error_message([&] { w.zero_(); }), text);
  EXPECT_EQ(error_message([&] { w.copy_(one); }), text);
  EXPECT_EQ(w.version(), 0u);
  EXPECT_TRUE(all_close(w, make({1.0, 2.0, 3.0}, {3}), 0.0));
  {
    NoGradGuard no_grad;
    w.add_(one);
  }
  EXPECT_EQ(w.version(), 1u);
  EXPECT_TRUE(w.is_leaf());
  EXPECT_TRUE(all_close(w, make({2.0, 3.0, 4.0}, {3}), 0.0));
}

TEST(Errors, InplaceShapeAndDtypeErrors) {
  Tensor a = zeros({2, 3}, DType::f32);
  EXPECT_TRUE(throws_containing([&] { a.add_(zeros({3, 3}, DType::f32)); }, {"tensor a (2)", "tensor b (3)"}));
  Tensor n = zeros({2, 3}, DType::i64);
  EXPECT_TRUE(throws_containing([&] { n.add_(zeros({2, 3}, DType::f32)); },
                                {"result type Float can't be cast to the desired output type Long"}));
  EXPECT_EQ(n.version(), 0u);
  EXPECT_TRUE(throws_containing([&] { a.mul_(zeros({2, 1, 3}, DType::f32)); },   // 1.13's TensorIterator text
                                {"output with shape [2, 3] doesn't match the broadcast shape [2, 2, 3]"}));
  EXPECT_TRUE(throws_containing([&] { a.copy_(zeros({4}, DType::f32)); }, {"tensor a (3)", "tensor b (4)"}));
  EXPECT_EQ(a.version(), 0u);
}

TEST(Errors, AutogradMisuse) {
  const Tensor x = make({1.0, 2.0}, {2}).requires_grad_();
  const Tensor y = x * 3.0;
  // A gradient of the wrong shape or dtype for backward / grad.
  EXPECT_TRUE(throws_containing([&] { y.backward(ones({3}, DType::f64)); },
                                {"Mismatch in shape: grad_output[0] has a shape of torch.Size([3]) and output[0] has "
                                 "a shape of torch.Size([2])."}));
  EXPECT_TRUE(throws_containing([&] { autograd::grad({y}, {x}, {ones({1}, DType::f64)}); }, {"grad", "[1]", "[2]"}));
  EXPECT_TRUE(throws_containing([&] { autograd::grad({y}, {x}, {ones({2}, DType::f64), ones({2}, DType::f64)}); },
                                {"grad", "1 outputs", "2 output gradients"}));
  EXPECT_TRUE(throws_containing([&] { autograd::grad({sum(y)}, {}); }, {"grad", "at least one input"}));
  // Integer tensors never require grad.
  EXPECT_TRUE(throws_containing([&] { zeros({2}, DType::i64).requires_grad_(); },
                                {"only Tensors of floating point dtype can require gradients"}));
  // Hooks need a tensor that requires grad; post-accumulate hooks need a leaf.
  EXPECT_TRUE(throws_containing([&] { zeros({2}).register_hook([](const Tensor&) { return Tensor(); }); },
                                {"hook", "doesn't require gradient"}));
  EXPECT_TRUE(throws_containing([&] { y.register_post_accumulate_grad_hook([](const Tensor&) {}); },
                                {"post accumulate grad hooks", "non-leaf"}));
  EXPECT_TRUE(throws_containing([&] { zeros({2}).retain_grad(); }, {"retain_grad", "requires_grad=False"}));
  EXPECT_TRUE(throws_containing([&] { x.set_grad(zeros({3}, DType::f64)); }, {"assigned grad has data of a different size"}));
}

// What PyTorch's engine accepts: a seed of another dtype is cast to the output's; backward(inputs=...) with a
// non-leaf fills its .grad (it retains its gradient from then on) and leaves the others alone.
TEST(Errors, AutogradCastsSeedsAndRetainsNonLeafInputs) {
  const Tensor x = make({1.0, 2.0}, {2}).requires_grad_();
  const Tensor y = x * 3.0;
  y.backward(ones({2}, DType::f32), BackwardOptions{.retain_graph = true});
  EXPECT_EQ(x.grad().dtype(), DType::f64);
  EXPECT_EQ(x.grad().to_vector<double>(), (std::vector<double>{3.0, 3.0}));
  x.set_grad(Tensor());
  BackwardOptions o;
  o.inputs = {y};
  sum(y * y).backward({}, o);
  EXPECT_TRUE(y.retains_grad());
  EXPECT_EQ(y.grad().to_vector<double>(), (std::vector<double>{6.0, 12.0}));
  EXPECT_FALSE(x.grad().defined());
}

}  // namespace
}  // namespace tinyddp::test
