// Type promotion (engine/core/promotion.h) and the integer kernels: the dtype lattice, the three tiers of
// result_type, exact int64 arithmetic past 2^53, bool arithmetic, PyTorch's errors, gradients cast back to each
// input's dtype, in-place casts. Expected values by hand; the dtypes are PyTorch 1.13's (tests/golden/
// gen_type_promotion.py has the same table from real torch, checked from Python).
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

Tensor i64(std::vector<int64_t> v) { return from_vector(v, {static_cast<int64_t>(v.size())}, DType::i64); }
Tensor b8(std::vector<int64_t> v) { return from_vector(v, {static_cast<int64_t>(v.size())}, DType::b8); }
Tensor f32(std::initializer_list<double> v) { return tensor(v, DType::f32); }
Tensor f64(std::initializer_list<double> v) { return tensor(v, DType::f64); }

constexpr int64_t kPast53 = (int64_t(1) << 53) + 1;   // not a double: int64 results must not go through one

TEST(Promotion, TypesFollowTheLattice) {
  const DType all[] = {DType::b8, DType::i64, DType::f32, DType::f64};
  for (int x = 0; x < 4; ++x)
    for (int y = 0; y < 4; ++y) EXPECT_EQ(promote_types(all[x], all[y]), all[std::max(x, y)]);
  EXPECT_TRUE(can_cast(DType::i64, DType::f32));
  EXPECT_TRUE(can_cast(DType::f64, DType::f32));
  EXPECT_TRUE(can_cast(DType::b8, DType::i64));
  EXPECT_FALSE(can_cast(DType::f32, DType::i64));
  EXPECT_FALSE(can_cast(DType::i64, DType::b8));
  EXPECT_FALSE(can_cast(DType::f32, DType::b8));
}

TEST(Promotion, DimfulOverZeroDimOverWrappedWithinACategory) {
  const Tensor f = f32({1, 2}), d = f64({1, 2}), i = i64({1, 2}), b = b8({1, 0});
  const Tensor d0 = scalar_tensor(1, DType::f64), i0 = scalar_tensor(1, DType::i64), b0 = scalar_tensor(1, DType::b8);
  EXPECT_EQ(result_type(f, d), DType::f64);                          // both with dims: the wider
  EXPECT_EQ(result_type(f, d0), DType::f32);                         // a 0-dim float64 does not widen float32
  EXPECT_EQ(result_type(i, d0), DType::f64);                         // ... but a higher category counts
  EXPECT_EQ(result_type(i, wrapped_number(0.5)), DType::f32);        // a Python float: the default dtype
  EXPECT_EQ(result_type(d, wrapped_number(0.5)), DType::f64);
  EXPECT_EQ(result_type(i, wrapped_number(int64_t{2})), DType::i64);
  EXPECT_EQ(result_type(b, wrapped_number(int64_t{2})), DType::i64);
  EXPECT_EQ(result_type(b, wrapped_number(true)), DType::b8);
  EXPECT_EQ(result_type(i, wrapped_number(true)), DType::i64);
  EXPECT_EQ(result_type(b, i0), DType::i64);                         // bool is promoted with anything
  EXPECT_EQ(result_type(b0, b0), DType::b8);
  EXPECT_EQ(result_type(d0, wrapped_number(0.5)), DType::f64);       // 0-dim over wrapped, same category
  EXPECT_EQ(result_type(i0, wrapped_number(0.5)), DType::f32);
  EXPECT_TRUE(wrapped_number(0.5).is_wrapped_number());
  EXPECT_FALSE(d0.is_wrapped_number());
}

TEST(IntegerArithmetic, IsExactInInt64) {
  const Tensor a = i64({kPast53, -7, 3});
  EXPECT_EQ(add(a, i64({1, 1, 1})).to_vector<int64_t>(), (std::vector<int64_t>{kPast53 + 1, -6, 4}));
  EXPECT_EQ(sub(a, i64({kPast53, 1, 5})).to_vector<int64_t>(), (std::vector<int64_t>{0, -8, -2}));
  const Tensor twice = mul(a, wrapped_number(int64_t{2}));
  EXPECT_EQ(twice.dtype(), DType::i64);
  EXPECT_EQ(twice.to_vector<int64_t>(), (std::vector<int64_t>{2 * kPast53, -14, 6}));
  EXPECT_EQ(neg(a).to_vector<int64_t>(), (std::vector<int64_t>{-kPast53, 7, -3}));
  EXPECT_EQ(sum(a).item<int64_t>(), kPast53 - 4);
  EXPECT_EQ(max(a).item<int64_t>(), kPast53);
  EXPECT_EQ(pow_integer(i64({3, -2, kPast53}), 2).to_vector<int64_t>()[0], 9);
  EXPECT_EQ(pow_integer(i64({3, -2}), 3).to_vector<int64_t>(), (std::vector<int64_t>{27, -8}));
  EXPECT_EQ(pow_integer(i64({3, -2}), 0).to_vector<int64_t>(), (std::vector<int64_t>{1, 1}));
  expect_error([&] { (void)pow_integer(a, -1); }, "Integers to negative integer powers are not allowed.");
}

TEST(IntegerArithmetic, BroadcastsAndReadsStridedViews) {
  const Tensor m = reshape(arange(6, DType::i64), {2, 3});   // [[0 1 2] [3 4 5]]
  EXPECT_EQ(add(m, i64({10, 20, 30})).to_vector<int64_t>(), (std::vector<int64_t>{10, 21, 32, 13, 24, 35}));
  EXPECT_EQ(mul(transpose(m, 0, 1), i64({1, -1})).to_vector<int64_t>(), (std::vector<int64_t>{0, -3, 1, -4, 2, -5}));
  EXPECT_EQ(sum(m, {0}).to_vector<int64_t>(), (std::vector<int64_t>{3, 5, 7}));
  const MaxResult r = max(m, 1);
  EXPECT_EQ(r.values.dtype(), DType::i64);
  EXPECT_EQ(r.values.to_vector<int64_t>(), (std::vector<int64_t>{2, 5}));
  EXPECT_EQ(r.indices.to_vector<int64_t>(), (std::vector<int64_t>{2, 2}));
}

TEST(IntegerArithmetic, TrueDivisionAndFloatsGiveFloat32) {
  const Tensor q = div(i64({3, -4}), i64({2, 8}));
  EXPECT_EQ(q.dtype(), DType::f32);
  EXPECT_EQ(q.to_vector<double>(), (std::vector<double>{1.5, -0.5}));
  const Tensor h = add(i64({1, 2}), wrapped_number(0.5));
  EXPECT_EQ(h.dtype(), DType::f32);
  EXPECT_EQ(h.to_vector<double>(), (std::vector<double>{1.5, 2.5}));
  EXPECT_EQ(add(i64({1}), scalar_tensor(0.5, DType::f64)).dtype(), DType::f64);
  EXPECT_EQ((i64({3}) / 2.0).to_vector<double>(), (std::vector<double>{1.5}));   // the C++ double: a float number
  EXPECT_EQ(pow(i64({4}), 0.5).dtype(), DType::f32);
}

TEST(BoolArithmetic, AddIsOrMulIsAndSubAndNegAreRefused) {
  const Tensor x = b8({1, 0, 1, 0}), y = b8({1, 1, 0, 0});
  const Tensor s = add(x, y), p = mul(x, y);
  EXPECT_EQ(s.dtype(), DType::b8);
  EXPECT_EQ(s.to_vector<int64_t>(), (std::vector<int64_t>{1, 1, 1, 0}));
  EXPECT_EQ(p.to_vector<int64_t>(), (std::vector<int64_t>{1, 0, 0, 0}));
  EXPECT_EQ(add(x, wrapped_number(int64_t{1})).to_vector<int64_t>(), (std::vector<int64_t>{2, 1, 2, 1}));
  const Tensor masked = mul(x, f32({1.5, 2, 3, 4}));
  EXPECT_EQ(masked.dtype(), DType::f32);
  EXPECT_EQ(masked.to_vector<double>(), (std::vector<double>{1.5, 0, 3, 0}));
  EXPECT_EQ(sum(x).item<int64_t>(), 2);
  EXPECT_EQ(max(x).dtype(), DType::b8);
  expect_error([&] { (void)sub(x, y); }, "Subtraction, the `-` operator, with two bool tensors is not supported.");
  expect_error([&] { (void)sub(i64({1, 2, 3, 4}), x); },
               "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert");
  expect_error([&] { (void)neg(x); }, "Negation, the `-` operator, on a bool tensor is not supported.");
}

TEST(IntegerArithmetic, TensorPowersAndAbsAreExact) {
  const Tensor base = i64({3, -2, 2, 1, -1, 5});
  const Tensor e = i64({4, 3, 62, -7, -3, -1});   // a negative exponent: 0 but for a base of 1 or -1, as PyTorch
  const Tensor p = pow(base, e);
  EXPECT_EQ(p.dtype(), DType::i64);
  EXPECT_EQ(p.to_vector<int64_t>(), (std::vector<int64_t>{81, -8, int64_t(1) << 62, 1, -1, 0}));
  EXPECT_EQ(pow(wrapped_number(int64_t{2}), i64({0, 10})).to_vector<int64_t>(), (std::vector<int64_t>{1, 1024}));
  EXPECT_EQ(pow(f32({2, 4}), i64({3, -1})).to_vector<double>(), (std::vector<double>{8, 0.25}));
  EXPECT_EQ(pow(f32({2}), i64({3})).dtype(), DType::f32);
  expect_error([&] { (void)pow(b8({1}), b8({1})); }, "\"pow\" not implemented for 'Bool'");
  EXPECT_EQ(abs(i64({-kPast53, 0, 4})).to_vector<int64_t>(), (std::vector<int64_t>{kPast53, 0, 4}));
  expect_error([&] { (void)abs(b8({1})); }, "\"abs_cpu\" not implemented for 'Bool'");
}

TEST(IntegerArithmetic, OverflowWrapsAsPyTorchWithoutUndefinedBehaviour) {
  // PyTorch's int64 arithmetic and sums wrap (two's complement); the kernels compute on the unsigned type, so
  // that UBSan (scripts/sanitize.sh) has no signed overflow to report here.
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max(), kMin = std::numeric_limits<int64_t>::min();
  const Tensor big = i64({kMax, kMin, kMax});
  EXPECT_EQ(add(big, i64({1, -1, 0})).to_vector<int64_t>(), (std::vector<int64_t>{kMin, kMax, kMax}));
  EXPECT_EQ(mul(big, wrapped_number(int64_t{2})).to_vector<int64_t>(), (std::vector<int64_t>{-2, 0, -2}));
  EXPECT_EQ(sum(big).item<int64_t>(), kMax - 1);                         // kMax + kMin = -1, then + kMax
  const Tensor rows = from_vector(std::vector<int64_t>{kMax, 1, kMax, kMax}, {2, 2}, DType::i64);
  EXPECT_EQ(sum(rows, {0}).to_vector<int64_t>(), (std::vector<int64_t>{-2, kMin}));   // a kept row added in
  EXPECT_EQ(sum(rows, {1}).to_vector<int64_t>(), (std::vector<int64_t>{kMin, -2}));   // a reduced row summed
}

TEST(IntegerArithmetic, FloatFunctionsComputeIntegersInFloat32) {
  const Tensor e = exp(i64({0, 1}));
  EXPECT_EQ(e.dtype(), DType::f32);
  EXPECT_EQ(e.to_vector<float>(), (std::vector<float>{1.0f, std::exp(1.0f)}));
  EXPECT_EQ(sqrt(b8({1, 0})).to_vector<double>(), (std::vector<double>{1, 0}));
  EXPECT_EQ(log(i64({1})).dtype(), DType::f32);
  const Tensor erfs = erf(i64({0, 1, -2}));
  EXPECT_EQ(erfs.dtype(), DType::f32);
  EXPECT_EQ(erfs.to_vector<float>(), (std::vector<float>{0.0f, std::erf(1.0f), std::erf(-2.0f)}));
  const Tensor r = relu(i64({-kPast53, kPast53}));   // relu keeps int64, exactly
  EXPECT_EQ(r.dtype(), DType::i64);
  EXPECT_EQ(r.to_vector<int64_t>(), (std::vector<int64_t>{0, kPast53}));
  expect_error([&] { (void)relu(b8({1})); }, "Boolean inputs not supported for relu");
}

TEST(PromotedGradients, ReachEachInputInItsOwnDtype) {
  // y = x * w, x float32 (2), w float64 0-dim: y is float32; dL/dx = w (rounded to float32), dL/dw = sum(x).
  Tensor x = f32({1.5, -2}).requires_grad_();
  Tensor w = scalar_tensor(0.25, DType::f64).requires_grad_();
  const Tensor y = x * w;
  EXPECT_EQ(y.dtype(), DType::f32);
  EXPECT_EQ(y.grad_fn()->name(), "MulBackward0");
  // The edges go to the leaves themselves, as PyTorch's (no conversion node in between).
  for (const autograd::Edge& e : y.grad_fn()->next_edges()) EXPECT_EQ(e.node->name(), "AccumulateGrad");
  sum(y).backward();
  EXPECT_EQ(x.grad().dtype(), DType::f32);
  EXPECT_EQ(w.grad().dtype(), DType::f64);
  EXPECT_EQ(x.grad().to_vector<double>(), (std::vector<double>{0.25, 0.25}));
  EXPECT_EQ(w.grad().item<double>(), -0.5);

  // Both with dims: float64 result, the float32 input's gradient rounded back. d(x / v)/dx = 1 / v.
  Tensor a = f32({1, 2}).requires_grad_();
  const Tensor v = f64({3, 4});
  const Tensor q = div(a, v);
  EXPECT_EQ(q.dtype(), DType::f64);
  sum(q).backward();
  EXPECT_EQ(a.grad().dtype(), DType::f32);
  EXPECT_EQ(a.grad().to_vector<float>(), (std::vector<float>{1.0f / 3.0f, 0.25f}));

  // cat of float32 and float64: float64, each slice of the gradient back in its input's dtype.
  Tensor c = f32({1}).requires_grad_();
  Tensor e = f64({2, 3}).requires_grad_();
  const Tensor joined = cat({c, e}, 0);
  EXPECT_EQ(joined.dtype(), DType::f64);
  sum(joined * f64({5, 6, 7})).backward();
  EXPECT_EQ(c.grad().dtype(), DType::f32);
  EXPECT_EQ(c.grad().to_vector<double>(), (std::vector<double>{5}));
  EXPECT_EQ(e.grad().to_vector<double>(), (std::vector<double>{6, 7}));
}

TEST(PromotedGradients, SecondOrderGoesThroughTheCastBack) {
  // L = sum(x^2 * w), x float32, w float64 0-dim: dL/dx = 2 x w (float32); d/dw of sum(dL/dx) = 2 sum(x).
  Tensor x = f32({1, 3}).requires_grad_();
  Tensor w = scalar_tensor(0.5, DType::f64).requires_grad_();
  const Tensor loss = sum(mul(x * x, w));
  const Tensor gx = autograd::grad({loss}, {x}, {}, {.create_graph = true})[0];
  EXPECT_EQ(gx.dtype(), DType::f32);
  EXPECT_EQ(gx.to_vector<double>(), (std::vector<double>{1, 3}));
  const Tensor gw = autograd::grad({sum(gx)}, {w})[0];
  EXPECT_EQ(gw.dtype(), DType::f64);
  EXPECT_EQ(gw.item<double>(), 8.0);
}

TEST(InplacePromotion, CastsIntoSelfOrRefusesAsPyTorch) {
  Tensor correct = scalar_tensor(0, DType::i64);
  add_(correct, sum(b8({1, 0, 1})));
  add_(correct, i64({kPast53}).reshape({}));
  EXPECT_EQ(correct.dtype(), DType::i64);
  EXPECT_EQ(correct.item<int64_t>(), kPast53 + 2);
  Tensor i = i64({1, 2});
  mul_(i, wrapped_number(int64_t{3}));
  EXPECT_EQ(i.to_vector<int64_t>(), (std::vector<int64_t>{3, 6}));
  expect_error([&] { add_(i, wrapped_number(0.5)); },
               "result type Float can't be cast to the desired output type Long");
  expect_error([&] { div_(i, wrapped_number(int64_t{2})); },
               "result type Float can't be cast to the desired output type Long");
  expect_error([&] { add_(i, i, 0.5); }, "For integral input tensors, argument alpha must not be a floating point");
  Tensor f = f32({1, 2});
  add_(f, f64({0.5, 0.25}));   // computed in float64, rounded into float32
  EXPECT_EQ(f.dtype(), DType::f32);
  EXPECT_EQ(f.to_vector<double>(), (std::vector<double>{1.5, 2.25}));
  Tensor m = b8({1, 0});
  expect_error([&] { sub_(m, m); }, "with two bool tensors is not supported");
}

}  // namespace
}  // namespace tinyddp::test
