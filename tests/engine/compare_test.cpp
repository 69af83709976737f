// Comparisons and the bool dtype: eq/ne/lt/le/gt/ge with broadcasting and PyTorch's promotion, the logical ops,
// bool and int64 sums, conversions to and from bool, and the errors for what bool tensors cannot do. Expected
// values are by hand (what NumPy / PyTorch 1.13 give for the same inputs).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tests/engine/test_util.h"

namespace tinyddp::test {
namespace {

void expect_error(const std::function<void()>& fn, const std::string& part) {
  const std::string message = error_message(fn);
  EXPECT_NE(message.find(part), std::string::npos) << message;
}

std::vector<int64_t> bits(const Tensor& t) {
  EXPECT_EQ(t.dtype(), DType::b8);
  return t.to_vector<int64_t>();
}

Tensor f32(std::initializer_list<double> v) { return tensor(v, DType::f32); }
Tensor i64(std::vector<int64_t> v) { return from_vector(v, {static_cast<int64_t>(v.size())}, DType::i64); }
Tensor f64(std::initializer_list<double> v) { return tensor(v, DType::f64); }

TEST(Compare, EachOpElementwiseWithNanComparingFalseButNotEqual) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Tensor a = f32({1, 2, 3, nan}), b = f32({2, 2, 2, nan});
  EXPECT_EQ(bits(eq(a, b)), (std::vector<int64_t>{0, 1, 0, 0}));
  EXPECT_EQ(bits(ne(a, b)), (std::vector<int64_t>{1, 0, 1, 1}));
  EXPECT_EQ(bits(lt(a, b)), (std::vector<int64_t>{1, 0, 0, 0}));
  EXPECT_EQ(bits(le(a, b)), (std::vector<int64_t>{1, 1, 0, 0}));
  EXPECT_EQ(bits(gt(a, b)), (std::vector<int64_t>{0, 0, 1, 0}));
  EXPECT_EQ(bits(ge(a, b)), (std::vector<int64_t>{0, 1, 1, 0}));
}

TEST(Compare, BroadcastsAndThroughStrides) {
  const Tensor m = reshape(arange(6, DType::f64), {2, 3});   // [[0 1 2] [3 4 5]]
  const Tensor col = reshape(tensor({1, 4}, DType::f64), {2, 1});
  const Tensor r = gt(m, col);
  EXPECT_EQ(r.shape(), (Shape{2, 3}));
  EXPECT_EQ(bits(r), (std::vector<int64_t>{0, 0, 1, 0, 0, 1}));
  EXPECT_EQ(bits(eq(m.t(), scalar_tensor(4, DType::f64))), (std::vector<int64_t>{0, 0, 0, 1, 0, 0}));
}

TEST(Compare, PromotesAsPyTorchDoes) {
  // float32 vs int64 compares in float32: 16777217 rounds to 16777216 there.
  EXPECT_EQ(bits(eq(i64({16777217}), f32({16777216}))), (std::vector<int64_t>{1}));
  // float32 vs float64 compares in float64: 0.1f is not 0.1.
  EXPECT_EQ(bits(eq(f32({0.1}), tensor({0.1}, DType::f64))), (std::vector<int64_t>{0}));
  // int64 vs a float scalar stays exact where it should: 1 >= 1.5 is false.
  EXPECT_EQ(bits(ge(i64({1, 2}), scalar_tensor(1.5, DType::f32))), (std::vector<int64_t>{0, 1}));
  // bools compare as 0/1, also against int64.
  const Tensor t = gt(f32({1, -1}), scalar_tensor(0, DType::f32));   // [true, false]
  EXPECT_EQ(bits(eq(t, i64({1, 1}))), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(bits(lt(t, logical_not(t))), (std::vector<int64_t>{0, 1}));
}

TEST(Compare, NeverRequiresGrad) {
  const Tensor w = f32({1, 2}).requires_grad_();
  const Tensor r = gt(w * w, scalar_tensor(1.5, DType::f32));
  EXPECT_FALSE(r.requires_grad());
  EXPECT_EQ(r.grad_fn(), nullptr);
}

TEST(Logical, NotAndOrXorBroadcast) {
  const Tensor a = gt(f32({1, 1, -1, -1}), scalar_tensor(0, DType::f32));   // T T F F
  const Tensor b = gt(f32({1, -1, 1, -1}), scalar_tensor(0, DType::f32));   // T F T F
  EXPECT_EQ(bits(logical_not(a)), (std::vector<int64_t>{0, 0, 1, 1}));
  EXPECT_EQ(bits(logical_and(a, b)), (std::vector<int64_t>{1, 0, 0, 0}));
  EXPECT_EQ(bits(logical_or(a, b)), (std::vector<int64_t>{1, 1, 1, 0}));
  EXPECT_EQ(bits(logical_xor(a, b)), (std::vector<int64_t>{0, 1, 1, 0}));
  const Tensor t = scalar_tensor(1, DType::b8);
  EXPECT_EQ(bits(logical_and(a, t)), (std::vector<int64_t>{1, 1, 0, 0}));
  expect_error([&] { (void)logical_and(a, f32({1, 1, 1, 1})); }, "logical_and: expected a bool tensor but got float32");
}

TEST(BoolDtype, ConvertsToAndFromNumbersAsPyTorch) {
  const Tensor b = f32({0, 0.5, -2}).to(DType::b8);   // nonzero is true
  EXPECT_EQ(bits(b), (std::vector<int64_t>{0, 1, 1}));
  EXPECT_EQ(b.to(DType::f64).to_vector<double>(), (std::vector<double>{0, 1, 1}));
  EXPECT_EQ(element_size(DType::b8), 1u);
  EXPECT_STREQ(dtype_name(DType::b8), "bool");
  EXPECT_STREQ(legacy_type_name(DType::b8), "torch.BoolTensor");
  EXPECT_EQ(bits(zeros({2}, DType::b8)), (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(bits(clone(b.narrow(0, 1, 2))), (std::vector<int64_t>{1, 1}));
}

TEST(BoolDtype, SumCountsTruesAndIntSumsAreInt64) {
  const Tensor b = gt(reshape(arange(6, DType::f32), {2, 3}), scalar_tensor(1.5, DType::f32));   // F F T / T T T
  const Tensor all = sum(b);
  EXPECT_EQ(all.dtype(), DType::i64);
  EXPECT_EQ(all.item<int64_t>(), 4);
  EXPECT_EQ(sum(b, {1}).to_vector<int64_t>(), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(sum(i64({5, -7, 1})).item<int64_t>(), -1);
  EXPECT_EQ(sum(i64({int64_t(1) << 52, 1})).item<int64_t>(), (int64_t(1) << 52) + 1);   // exact below 2^53
  expect_error([&] { (void)mean(b); }, "mean(): could not infer output dtype. Input dtype must be either a floating point or "
                            "complex dtype. Got: Bool");
  expect_error([&] { (void)mean(i64({1})); }, "Got: Long");
}

TEST(BoolDtype, ArithmeticPromotesAsPyTorch) {   // more in type_promotion_test.cpp
  const Tensor b = gt(f32({1}), scalar_tensor(0, DType::f32));
  EXPECT_EQ((b + b).dtype(), DType::b8);
  EXPECT_EQ((b * f32({2.5})).to_vector<double>(), (std::vector<double>{2.5}));
  expect_error([&] { (void)(b - b); }, "Subtraction, the `-` operator, with two bool tensors is not supported.");
}

TEST(Compare, AZeroDimFloat64DoesNotWidenAFloat32Tensor) {
  // 1.13 compares in float32 here (result_type), so float32(0.1) == float32(0.1) holds.
  EXPECT_EQ(bits(eq(f32({0.1}), scalar_tensor(0.1, DType::f64))), (std::vector<int64_t>{1}));
  EXPECT_EQ(bits(eq(f32({0.1}), f64({0.1}))), (std::vector<int64_t>{0}));   // both with dims: float64
}

}  // namespace
}  // namespace tinyddp::test
