// Tensors: views and their strides, broadcasting, contiguous copies, op values by hand, seeded RNG,
// element access and dtype conversion.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>
#include <sstream>
#include <thread>

#include "tests/engine/test_util.h"

namespace tinyddp::test {
namespace {

Tensor iota(const Shape& shape, DType dtype = DType::f64) { return reshape(arange(numel_of(shape), dtype), shape); }

// ---- views ----

TEST(Tensor, ConstructionAndMetadata) {
  const Tensor z = zeros({2, 3}, DType::f32);
  EXPECT_EQ(z.shape(), (Shape{2, 3}));
  EXPECT_EQ(z.strides(), (Shape{3, 1}));
  EXPECT_EQ(z.numel(), 6);
  EXPECT_EQ(z.dim(), 2);
  EXPECT_EQ(z.size(-1), 3);
  EXPECT_EQ(z.dtype(), DType::f32);
  EXPECT_TRUE(z.device().is_cpu());
  EXPECT_TRUE(z.is_contiguous());
  EXPECT_FALSE(z.requires_grad());
  EXPECT_TRUE(z.is_leaf());
  EXPECT_EQ(full({2}, 2.5, DType::f64).to_vector<double>(), (std::vector<double>{2.5, 2.5}));
  EXPECT_EQ(ones_like(z).to_vector<float>(), std::vector<float>(6, 1.0f));
  EXPECT_EQ(arange(4, DType::i64).to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 2, 3}));
  const Tensor s = scalar_tensor(3.0, DType::f64);
  EXPECT_EQ(s.dim(), 0);
  EXPECT_EQ(s.numel(), 1);
  EXPECT_EQ(s.item(), 3.0);
  EXPECT_EQ(tensor({1.0, 2.0}).shape(), (Shape{2}));
  EXPECT_EQ(zeros({0, 3}).numel(), 0);
}

// Note [arange's rounding]: lane j of a vector is rounded from its base, not from start + i * step. Values from
// PyTorch 1.13's torch.arange on this kind of CPU.
TEST(Tensor, ArangeRoundsAsPyTorchsCpuKernel) {
  const std::vector<float> f = arange(-1.0, 0.1, 20, DType::f32).to_vector<float>();
  EXPECT_EQ(f[10], -2.9802322831784522e-09f);   // base -0.2f (index 8) + 2 * 0.1; start + 10 * step gives 0
  EXPECT_EQ(f[3], -0.699999988079071f);
  EXPECT_EQ(f[19], 0.8999999761581421f);         // after the last block of 16: fma(step, 19, start)
  const std::vector<double> d = arange(-5.2, 0.413, 21, DType::f64).to_vector<double>();
  EXPECT_EQ(d[5], -3.1350000000000002);
  EXPECT_EQ(d[8], -1.8960000000000004);
  EXPECT_EQ(d[20], 3.0599999999999996);
  // Over 32768 elements each thread's chunk starts a block: with 2 threads, 40010 elements split at 20005, which
  // starts a vector of its own; the 5 before it are after the first chunk's last block; one thread has no split.
  const auto at = [](double step, double i) { return static_cast<float>(std::fma(step, i, 0.0)); };
  const std::vector<float> two = arange(0.0, 0.37, 40010, DType::f32, 2).to_vector<float>();
  const std::vector<float> one = arange(0.0, 0.37, 40010, DType::f32, 1).to_vector<float>();
  EXPECT_EQ(two[20005], at(0.37, 20005));
  EXPECT_EQ(two[20004], at(0.37, 20004));
  EXPECT_EQ(two[20007], static_cast<float>(std::fma(2.0, 0.37, two[20005])));
  EXPECT_EQ(one[20005], static_cast<float>(std::fma(5.0, 0.37, at(0.37, 20000))));
  EXPECT_THROW(arange(0.0, 1.0, 3, DType::i64), Error);   // integral ranges are arange(n) * step + start
}

// Eigen's vectorized double exp clamps its argument near -709.4: below it (and at -inf) the engine gives std::exp's
// denormal or 0, in every lane, as 1.13's Sleef kernel does.
TEST(Tensor, ExpOfVeryNegativeDoublesUnderflows) {
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> x{-inf, -1000, -745.2, -740, -708.5, 0, 1, -inf,
                              -800, -inf, -inf, -inf, -inf, -inf, -inf, -inf};
  const Tensor t = make(x, {static_cast<int64_t>(x.size())}, DType::f64);
  const std::vector<double> y = exp(t).to_vector<double>();
  for (size_t i = 0; i < x.size(); ++i)
    if (x[i] < -708.0) EXPECT_EQ(y[i], std::exp(x[i])) << "x = " << x[i];
  EXPECT_EQ(exp(t).to_vector<double>()[0], 0.0);
  EXPECT_EQ(exp(t).to_vector<double>()[3], std::exp(-740.0));   // a denormal, 4.2e-322
}

TEST(Tensor, ReshapeOfContiguousSharesStorage) {
  const Tensor x = iota({2, 3});
  const Tensor r = x.reshape({3, 2});
  EXPECT_EQ(r.storage().get(), x.storage().get());
  EXPECT_EQ(r.strides(), (Shape{2, 1}));
  EXPECT_EQ(r.to_vector<double>(), x.to_vector<double>());
  const Tensor v = x.view({-1});
  EXPECT_EQ(v.shape(), (Shape{6}));
  EXPECT_EQ(v.storage().get(), x.storage().get());
}

TEST(Tensor, ReshapeOfNonContiguousCopies) {
  const Tensor x = iota({2, 3});
  const Tensor r = x.t().reshape({6});
  EXPECT_NE(r.storage().get(), x.storage().get());
  EXPECT_EQ(r.to_vector<double>(), (std::vector<double>{0, 3, 1, 4, 2, 5}));
}

// Note [Views of strided tensors]: a narrowed last dim (a chunk of q, k, v) splits into a view; a transposed
// pair does not merge (PyTorch's error, which errors_test checks).
TEST(Tensor, ViewOfANarrowedDimSplitsIt) {
  const Tensor x = iota({2, 6});
  const Tensor chunk = x.narrow(1, 2, 4);   // strides (6, 1), offset 2
  const Tensor v = view(chunk, {2, 2, 2});
  EXPECT_EQ(v.storage().get(), x.storage().get());
  EXPECT_EQ(v.strides(), (Shape{6, 2, 1}));
  EXPECT_EQ(v.offset(), 2);
  EXPECT_EQ(v.to_vector<double>(), (std::vector<double>{2, 3, 4, 5, 8, 9, 10, 11}));
  const Tensor rows = view(iota({4, 3}).narrow(0, 1, 2).t(), {3, 1, 2});   // size-1 dims go anywhere
  EXPECT_EQ(rows.to_vector<double>(), (std::vector<double>{3, 6, 4, 7, 5, 8}));
  EXPECT_THROW(view(iota({2, 3}).t(), {6}), Error);
}

// floor, ceil, trunc and round (halves to even, as PyTorch's): values in the input's dtype, zero gradients.
TEST(Tensor, ToIntegralOpsRoundAsPyTorch) {
  const Tensor x = from_vector(std::vector<double>{-2.5, -1.5, -0.5, 0.5, 1.5, 2.7}, {6}).requires_grad_();
  EXPECT_EQ(floor(x).to_vector<double>(), (std::vector<double>{-3, -2, -1, 0, 1, 2}));
  EXPECT_EQ(ceil(x).to_vector<double>(), (std::vector<double>{-2, -1, -0.0, 1, 2, 3}));
  EXPECT_EQ(trunc(x).to_vector<double>(), (std::vector<double>{-2, -1, -0.0, 0, 1, 2}));
  EXPECT_EQ(round(x).to_vector<double>(), (std::vector<double>{-2, -2, -0.0, 0, 2, 3}));
  sum(round(x) + floor(x)).backward();
  EXPECT_EQ(x.grad().to_vector<double>(), std::vector<double>(6, 0.0));
  EXPECT_EQ(round(from_vector(std::vector<int64_t>{3, -4}, {2})).to_vector<int64_t>(), (std::vector<int64_t>{3, -4}));
}

// where picks elements (an unpicked infinity or NaN stays out) and broadcasts all three operands.
TEST(Tensor, WherePicksElements) {
  const double inf = std::numeric_limits<double>::infinity();
  const Tensor condition = gt(from_vector(std::vector<double>{1, -1, 1}, {3}), zeros({}, DType::f64));
  const Tensor a = from_vector(std::vector<double>{inf, 2, std::nan("")}, {3});
  const Tensor b = from_vector(std::vector<double>{-inf}, {1});
  const auto v = where(condition, a, b).to_vector<double>();
  EXPECT_EQ(v[0], inf);
  EXPECT_EQ(v[1], -inf);
  EXPECT_TRUE(std::isnan(v[2]));
  EXPECT_EQ(where(condition, from_vector(std::vector<double>{1, 2}, {2, 1}), b).shape(), (Shape{2, 3}));
  EXPECT_THROW(where(a, a, b), Error);   // "where expected condition to be a boolean tensor"
}

TEST(Tensor, TransposeSwapsStrides) {
  const Tensor x = iota({2, 3, 4});
  const Tensor y = x.transpose(0, 2);
  EXPECT_EQ(y.shape(), (Shape{4, 3, 2}));
  EXPECT_EQ(y.strides(), (Shape{1, 4, 12}));
  EXPECT_EQ(y.storage().get(), x.storage().get());
  EXPECT_FALSE(y.is_contiguous());
  // y[i][j][k] = x[k][j][i] = 12k + 4j + i
  const auto v = y.to_vector<double>();
  EXPECT_EQ(v[1 * 6 + 2 * 2 + 1], 12 * 1 + 4 * 2 + 1);
  const Tensor t2 = iota({2, 3}).t();
  EXPECT_EQ(t2.strides(), (Shape{1, 3}));
  EXPECT_EQ(t2.to_vector<double>(), (std::vector<double>{0, 3, 1, 4, 2, 5}));
}

TEST(Tensor, NarrowOffsetsIntoTheSameStorage) {
  const Tensor x = iota({4, 3});
  const Tensor rows = x.narrow(0, 1, 2);
  EXPECT_EQ(rows.offset(), 3);
  EXPECT_EQ(rows.strides(), (Shape{3, 1}));
  EXPECT_TRUE(rows.is_contiguous());
  EXPECT_EQ(rows.to_vector<double>(), (std::vector<double>{3, 4, 5, 6, 7, 8}));
  const Tensor cols = x.narrow(1, 1, 2);
  EXPECT_EQ(cols.offset(), 1);
  EXPECT_FALSE(cols.is_contiguous());
  EXPECT_EQ(cols.to_vector<double>(), (std::vector<double>{1, 2, 4, 5, 7, 8, 10, 11}));
  const Tensor nested = rows.narrow(1, 2, 1);   // offsets add up
  EXPECT_EQ(nested.offset(), 5);
  EXPECT_EQ(nested.to_vector<double>(), (std::vector<double>{5, 8}));
  EXPECT_EQ(nested.storage().get(), x.storage().get());
}

TEST(Tensor, ExpandUsesStrideZero) {
  const Tensor x = make({1, 2, 3}, {3, 1});
  const Tensor e = x.expand({3, 4});
  EXPECT_EQ(e.strides(), (Shape{1, 0}));
  EXPECT_EQ(e.storage().get(), x.storage().get());
  EXPECT_EQ(e.to_vector<double>(), (std::vector<double>{1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3}));
  const Tensor lead = make({1, 2}, {2}).expand({3, 2});
  EXPECT_EQ(lead.strides(), (Shape{0, 1}));
  EXPECT_EQ(lead.to_vector<double>(), (std::vector<double>{1, 2, 1, 2, 1, 2}));
}

TEST(Tensor, UnsqueezeInsertsASizeOneDim) {
  const Tensor x = iota({2, 3});
  EXPECT_EQ(unsqueeze(x, 0).shape(), (Shape{1, 2, 3}));
  EXPECT_EQ(unsqueeze(x, 1).shape(), (Shape{2, 1, 3}));
  EXPECT_EQ(unsqueeze(x, -1).shape(), (Shape{2, 3, 1}));
  EXPECT_TRUE(unsqueeze(x, 1).is_contiguous());
  EXPECT_EQ(unsqueeze(x, 1).storage().get(), x.storage().get());
}

TEST(Tensor, ContiguousCopiesOnlyWhenNeeded) {
  const Tensor x = iota({2, 3});
  EXPECT_TRUE(x.contiguous().is_same(x));
  const Tensor c = x.t().contiguous();
  EXPECT_TRUE(c.is_contiguous());
  EXPECT_EQ(c.strides(), (Shape{2, 1}));
  EXPECT_NE(c.storage().get(), x.storage().get());
  EXPECT_EQ(c.to_vector<double>(), (std::vector<double>{0, 3, 1, 4, 2, 5}));
  const Tensor cl = x.clone();
  EXPECT_NE(cl.storage().get(), x.storage().get());
  Tensor cm = cl;
  cm.fill_(7.0);
  EXPECT_EQ(x.to_vector<double>(), (std::vector<double>{0, 1, 2, 3, 4, 5}));   // the copy is independent
}

TEST(Tensor, InplaceWritesThroughNonContiguousViews) {
  Tensor x = zeros({2, 3}, DType::f64);
  Tensor col = x.narrow(1, 1, 1);
  col.copy_(make({5, 6}, {2, 1}));
  EXPECT_EQ(x.to_vector<double>(), (std::vector<double>{0, 5, 0, 0, 6, 0}));
  Tensor xt = x.t();
  xt.add_(make({1, 2}, {2}));   // broadcast along the transposed rows
  EXPECT_EQ(x.to_vector<double>(), (std::vector<double>{1, 6, 1, 2, 8, 2}));
  xt.mul_(2.0);
  EXPECT_EQ(x.to_vector<double>(), (std::vector<double>{2, 12, 2, 4, 16, 4}));
  Tensor f = x.narrow(0, 1, 1);
  f.fill_(-1.0);
  EXPECT_EQ(x.to_vector<double>(), (std::vector<double>{2, 12, 2, -1, -1, -1}));
  Tensor y = zeros({3}, DType::f32);
  y.copy_(make({1.5, 2.5, 3.5}, {3}));   // copy_ converts dtype
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{1.5f, 2.5f, 3.5f}));
}

// ---- values by hand ----

TEST(Tensor, BroadcastingByHand) {
  const Tensor a = make({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ((a + make({10, 20, 30}, {3})).to_vector<double>(), (std::vector<double>{11, 22, 33, 14, 25, 36}));
  EXPECT_EQ((a - make({1, 4}, {2, 1})).to_vector<double>(), (std::vector<double>{0, 1, 2, 0, 1, 2}));
  const Tensor outer = make({1, 2}, {2, 1}) * make({3, 4, 5}, {1, 3});
  EXPECT_EQ(outer.shape(), (Shape{2, 3}));
  EXPECT_EQ(outer.to_vector<double>(), (std::vector<double>{3, 4, 5, 6, 8, 10}));
  EXPECT_EQ((make({2, 4, 6}, {3}) / make({2, 4, 6, 1, 2, 3}, {2, 3})).to_vector<double>(),
            (std::vector<double>{1, 1, 1, 2, 2, 2}));
  EXPECT_EQ((a + scalar_tensor(1.0, DType::f64)).to_vector<double>(), (std::vector<double>{2, 3, 4, 5, 6, 7}));
  const Tensor three_d = zeros({2, 1, 3}, DType::f64) + make({1, 2}, {2, 1});
  EXPECT_EQ(three_d.shape(), (Shape{2, 2, 3}));
  EXPECT_EQ(three_d.to_vector<double>(), (std::vector<double>{1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2}));
  // Operands that are themselves non-contiguous views.
  EXPECT_EQ((a.t() + make({100, 200}, {2})).to_vector<double>(), (std::vector<double>{101, 204, 102, 205, 103, 206}));
}

TEST(Tensor, ScalarOpsByHand) {
  const Tensor a = make({1, 2, 4}, {3});
  EXPECT_EQ((1.0 - a).to_vector<double>(), (std::vector<double>{0, -1, -3}));
  EXPECT_EQ((a - 1.0).to_vector<double>(), (std::vector<double>{0, 1, 3}));
  EXPECT_EQ((8.0 / a).to_vector<double>(), (std::vector<double>{8, 4, 2}));
  EXPECT_EQ((a / 2.0).to_vector<double>(), (std::vector<double>{0.5, 1, 2}));
  EXPECT_EQ((2.0 * a).to_vector<double>(), (std::vector<double>{2, 4, 8}));
  EXPECT_EQ(pow(a, 2.0).to_vector<double>(), (std::vector<double>{1, 4, 16}));
  EXPECT_EQ(sqrt(a).to_vector<double>(), (std::vector<double>{1, std::sqrt(2.0), 2}));
  EXPECT_EQ(clamp(make({-2, 0.5, 3}, {3}), -1, 1).to_vector<double>(), (std::vector<double>{-1, 0.5, 1}));
  EXPECT_EQ(relu(make({-2, 0, 3}, {3})).to_vector<double>(), (std::vector<double>{0, 0, 3}));
  EXPECT_EQ(abs(make({-2, 0, 3}, {3})).to_vector<double>(), (std::vector<double>{2, 0, 3}));
  // sigmoid is stable at both ends.
  const auto s = sigmoid(make({-800, 0, 800}, {3})).to_vector<double>();
  EXPECT_EQ(s, (std::vector<double>{0, 0.5, 1}));
}

TEST(Tensor, ReductionsByHand) {
  const Tensor a = make({1, 5, 3, 4, 2, 6}, {2, 3});
  EXPECT_EQ(sum(a).item(), 21.0);
  EXPECT_EQ(sum(a).dim(), 0);
  EXPECT_EQ(sum(a, {0}).to_vector<double>(), (std::vector<double>{5, 7, 9}));
  EXPECT_EQ(sum(a, {1}, true).shape(), (Shape{2, 1}));
  EXPECT_EQ(sum(a, {1}, true).to_vector<double>(), (std::vector<double>{9, 12}));
  EXPECT_EQ(sum(a, {0, 1}).item(), 21.0);
  EXPECT_EQ(mean(a).item(), 3.5);
  EXPECT_EQ(mean(a, {1}).to_vector<double>(), (std::vector<double>{3, 4}));
  EXPECT_EQ(max(a).item(), 6.0);
  const MaxResult m0 = max(a, 0);
  EXPECT_EQ(m0.values.to_vector<double>(), (std::vector<double>{4, 5, 6}));
  EXPECT_EQ(m0.indices.to_vector<int64_t>(), (std::vector<int64_t>{1, 0, 1}));
  EXPECT_EQ(m0.indices.dtype(), DType::i64);
  const MaxResult m1 = max(a, 1, true);
  EXPECT_EQ(m1.values.shape(), (Shape{2, 1}));
  EXPECT_EQ(m1.indices.to_vector<int64_t>(), (std::vector<int64_t>{1, 2}));
  // A sum over a non-contiguous view.
  EXPECT_EQ(sum(a.t(), {1}).to_vector<double>(), (std::vector<double>{5, 7, 9}));
}

TEST(Tensor, MaxAlongDimPicksTheFirstNaN) {
  // PyTorch 1.13: a line holding NaN gives NaN and the index of its first NaN, wherever that NaN is.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const MaxResult m = max(make({1, nan, 3, 2, 2, nan, nan, nan, 0.5}, {3, 3}), 1);
  EXPECT_EQ(m.indices.to_vector<int64_t>(), (std::vector<int64_t>{1, 2, 0}));
  const std::vector<double> values = m.values.to_vector<double>();
  EXPECT_TRUE(std::isnan(values[0]) && std::isnan(values[1]) && std::isnan(values[2]));
}

TEST(Tensor, MaxSharesGradientBetweenTies) {
  const Tensor x = make({1, 3, 3, 2}, {4}).requires_grad_();
  max(x).backward();   // PyTorch 1.13: the gradient is split evenly between tied maxima
  EXPECT_TRUE(all_close(x.grad(), make({0, 0.5, 0.5, 0}, {4}), 0.0));
}

TEST(Tensor, SoftmaxAndLossesByHand) {
  const Tensor x = make({0, std::log(3.0)}, {1, 2});
  EXPECT_TRUE(all_close(softmax(x, 1), make({0.25, 0.75}, {1, 2}), 1e-15));
  EXPECT_TRUE(all_close(log_softmax(x, 1), make({std::log(0.25), std::log(0.75)}, {1, 2}), 1e-15));
  // Large logits do not overflow (the max is subtracted first); x - logsumexp at 1000 keeps ~1e-13 absolute
  // precision (the ulp of 1000), as in PyTorch.
  EXPECT_TRUE(all_close(softmax(make({1000, 1000}, {2}), 0), make({0.5, 0.5}, {2}), 1e-12));
  EXPECT_NEAR(mse_loss(make({1, 2}, {2}), make({0, 4}, {2})).item(), 2.5, 1e-15);   // (1 + 4) / 2
  const Tensor logits = make({0, std::log(3.0), 0, 0}, {2, 2});
  const Tensor target = from_vector(std::vector<int64_t>{1, 0}, {2});
  EXPECT_NEAR(cross_entropy(logits, target).item(), -(std::log(0.75) + std::log(0.5)) / 2, 1e-15);
}

TEST(Tensor, MatmulByHand) {
  const Tensor a = make({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor b = make({1, 0, 0, 1, 1, 1}, {3, 2});
  EXPECT_EQ(matmul(a, b).to_vector<double>(), (std::vector<double>{4, 5, 10, 11}));
  EXPECT_EQ(matmul(make({1, 2, 3}, {3}), make({4, 5, 6}, {3})).item(), 32.0);
  EXPECT_EQ(matmul(make({1, 1}, {2}), a).to_vector<double>(), (std::vector<double>{5, 7, 9}));
  EXPECT_EQ(matmul(a, make({1, 1, 1}, {3})).to_vector<double>(), (std::vector<double>{6, 15}));
  EXPECT_EQ(addmm(make({10, 20}, {2}), a, b).to_vector<double>(), (std::vector<double>{14, 25, 20, 31}));
  EXPECT_EQ(mm(a.t(), a).to_vector<double>(), (std::vector<double>{17, 22, 27, 22, 29, 36, 27, 36, 45}));
  // Batched, with the batch dim of b broadcast.
  const Tensor batch = reshape(cat({a, a * 2.0}, 0), {2, 2, 3});
  const Tensor bb = matmul(batch, unsqueeze(b, 0));
  EXPECT_EQ(bb.shape(), (Shape{2, 2, 2}));
  EXPECT_EQ(bb.to_vector<double>(), (std::vector<double>{4, 5, 10, 11, 8, 10, 20, 22}));
}

TEST(Tensor, CatByHand) {
  const Tensor a = make({1, 2, 3, 4}, {2, 2});
  const Tensor b = make({5, 6}, {2, 1});
  EXPECT_EQ(cat({a, b}, 1).to_vector<double>(), (std::vector<double>{1, 2, 5, 3, 4, 6}));
  EXPECT_EQ(cat({a, b.t()}, 0).to_vector<double>(), (std::vector<double>{1, 2, 3, 4, 5, 6}));
}

// ---- element access and dtype ----

TEST(Tensor, ItemAndToVector) {
  const Tensor x = make({1.25, -2.5, 3.0}, {3});
  EXPECT_EQ(x.narrow(0, 1, 1).item(), -2.5);
  EXPECT_EQ(x.narrow(0, 2, 1).item<float>(), 3.0f);
  EXPECT_EQ(x.to_vector<int64_t>(), (std::vector<int64_t>{1, -2, 3}));   // truncation toward zero
  EXPECT_EQ(*x.data_ptr<double>(), 1.25);
  const Tensor y = make({1, 2, 3, 4}, {2, 2}).t();   // to_vector reads in logical (row-major) order
  EXPECT_EQ(y.to_vector<double>(), (std::vector<double>{1, 3, 2, 4}));
}

TEST(Tensor, DtypeConversion) {
  const Tensor x = make({0.1, -2.7, 1e10}, {3});
  const Tensor f = x.to(DType::f32);
  EXPECT_EQ(f.dtype(), DType::f32);
  EXPECT_EQ(f.to_vector<float>(), (std::vector<float>{0.1f, -2.7f, 1e10f}));
  EXPECT_EQ(x.to(DType::i64).to_vector<int64_t>(), (std::vector<int64_t>{0, -2, 10000000000}));
  EXPECT_EQ(from_vector(std::vector<int64_t>{3, -4}, {2}).to(DType::f64).to_vector<double>(),
            (std::vector<double>{3, -4}));
  EXPECT_TRUE(x.to(DType::f64).is_same(x));   // same dtype: no copy
  // The conversion is differentiable: the gradient comes back in the source dtype.
  const Tensor w = make({1, 2}, {2}, DType::f32).requires_grad_();
  sum(w.to(DType::f64) * 3.0).backward();
  EXPECT_EQ(w.grad().dtype(), DType::f32);
  EXPECT_EQ(w.grad().to_vector<float>(), (std::vector<float>{3, 3}));
  EXPECT_EQ(w.to(DType::f64).grad_fn()->name(), "ToCopyBackward0");
  EXPECT_FALSE(w.to(DType::i64).requires_grad());   // integers carry no gradient
}

TEST(Tensor, PrintsShapeDtypeAndValues) {
  std::ostringstream os;
  os << make({1, 2}, {2}).requires_grad_();
  EXPECT_NE(os.str().find("[2]"), std::string::npos) << os.str();
  EXPECT_NE(os.str().find("float64"), std::string::npos) << os.str();
  EXPECT_NE(os.str().find("requires_grad"), std::string::npos) << os.str();
  std::ostringstream undefined;
  undefined << Tensor();
  EXPECT_EQ(undefined.str(), "Tensor(undefined)");
}

// ---- seeded RNG ----

TEST(Random, SameSeedSameNumbers) {
  manual_seed(123);
  const auto a = randn({64}, DType::f64).to_vector<double>();
  const auto r1 = rand({16}, DType::f32).to_vector<float>();
  manual_seed(123);
  EXPECT_EQ(randn({64}, DType::f64).to_vector<double>(), a);
  EXPECT_EQ(rand({16}, DType::f32).to_vector<float>(), r1);
  manual_seed(124);
  EXPECT_NE(randn({64}, DType::f64).to_vector<double>(), a);
}

TEST(Random, EachThreadHasItsOwnGenerator) {
  manual_seed(7);
  const auto reference = rand({100}, DType::f64).to_vector<double>();
  const auto reference_unseeded = [] {
    manual_seed(Generator::kDefaultSeed);   // where a fresh thread's generator starts
    return rand({10}, DType::f64).to_vector<double>();
  }();

  manual_seed(7);
  const auto first_half = rand({50}, DType::f64).to_vector<double>();
  std::vector<double> other_thread, unseeded_thread;
  std::thread t([&] {
    manual_seed(7);   // reseeding here must not touch the main thread's generator
    other_thread = rand({100}, DType::f64).to_vector<double>();
  });
  std::thread u([&] { unseeded_thread = rand({10}, DType::f64).to_vector<double>(); });
  t.join();
  u.join();
  const auto second_half = rand({50}, DType::f64).to_vector<double>();
  EXPECT_EQ(other_thread, reference);
  EXPECT_EQ(unseeded_thread, reference_unseeded);
  std::vector<double> main_thread = first_half;
  main_thread.insert(main_thread.end(), second_half.begin(), second_half.end());
  EXPECT_EQ(main_thread, reference);
}

TEST(Random, RandintStaysInRangeAndHitsEveryValue) {
  manual_seed(5);
  const Tensor r = randint(-3, 4, {2000});
  EXPECT_EQ(r.dtype(), DType::i64);
  std::set<int64_t> seen;
  for (int64_t v : r.to_vector<int64_t>()) {
    ASSERT_GE(v, -3);
    ASSERT_LT(v, 4);
    seen.insert(v);
  }
  EXPECT_EQ(seen.size(), 7u);
  EXPECT_EQ(randint(9, 10, {5}).to_vector<int64_t>(), std::vector<int64_t>(5, 9));
}

TEST(Random, RandIsInUnitInterval) {
  manual_seed(11);
  const auto v = rand({100000}, DType::f64).to_vector<double>();
  double mean = 0.0;
  for (double x : v) {
    ASSERT_GE(x, 0.0);
    ASSERT_LT(x, 1.0);
    mean += x;
  }
  mean /= static_cast<double>(v.size());
  // The mean of 1e5 uniforms has standard deviation sqrt(1/12 / 1e5) ~ 9e-4; 0.01 is ~10 sigma.
  EXPECT_NEAR(mean, 0.5, 0.01);
  const auto f = rand({10000}, DType::f32).to_vector<float>();
  for (float x : f) ASSERT_LT(x, 1.0f);   // float rounding must not produce 1.0
}

TEST(Random, RandnHasUnitNormalMoments) {
  manual_seed(13);
  const auto v = randn({100000}, DType::f64).to_vector<double>();
  double mean = 0.0, var = 0.0;
  for (double x : v) mean += x;
  mean /= static_cast<double>(v.size());
  for (double x : v) var += (x - mean) * (x - mean);
  var /= static_cast<double>(v.size() - 1);
  // Standard errors on 1e5 samples: mean ~3e-3, variance ~4.5e-3; the bounds are ~7 sigma.
  EXPECT_NEAR(mean, 0.0, 0.02);
  EXPECT_NEAR(var, 1.0, 0.03);
  size_t within_one_sigma = 0;
  for (double x : v) within_one_sigma += std::abs(x) < 1.0;
  EXPECT_NEAR(static_cast<double>(within_one_sigma) / static_cast<double>(v.size()), 0.6827, 0.01);
}

}  // namespace
}  // namespace tinyddp::test
