// addmm(bias, a, b) = bias + a @ b, computed as PyTorch's CPU addmm does: the bias broadcast into the output,
// then the product accumulated into it (gemm with beta = 1). These tests pin what that must not change: the
// values for every bias shape that broadcasts and every operand layout gemm reads without a copy, the
// caller's bias left untouched (the output never aliases it), the empty product (k = 0), and the gradients.
#include <gtest/gtest.h>

#include <vector>

#include "engine/tinyddp.h"
#include "tests/engine/gradcheck.h"
#include "tests/engine/test_util.h"

namespace tinyddp {
namespace {

// bias + a @ b by three nested loops in double, from the tensors' values (any layout).
std::vector<double> reference_addmm(const Tensor& bias, const Tensor& a, const Tensor& b) {
  const int64_t m = a.shape()[0], k = a.shape()[1], n = b.shape()[1];
  const auto av = a.contiguous().to_vector<double>(), bv = b.contiguous().to_vector<double>();
  const auto biasv = expand(bias, {m, n}).contiguous().to_vector<double>();
  std::vector<double> out(m * n);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = biasv[i * n + j];
      for (int64_t p = 0; p < k; ++p) s += av[i * k + p] * bv[p * n + j];
      out[i * n + j] = s;
    }
  return out;
}

TEST(Addmm, MatchesBiasPlusProductForEveryBiasShapeAndOperandLayout) {
  manual_seed(3);
  constexpr int64_t m = 5, k = 7, n = 4;
  const std::vector<Shape> bias_shapes = {{n}, {1, n}, {m, 1}, {m, n}, {}};
  for (DType dtype : {DType::f32, DType::f64}) {
    const double tol = dtype == DType::f32 ? 1e-5 : 1e-12;
    for (const Shape& bias_shape : bias_shapes) {
      for (bool a_transposed : {false, true}) {
        for (bool b_transposed : {false, true}) {
          const Tensor a = a_transposed ? t(randn({k, m}, dtype)) : randn({m, k}, dtype);
          const Tensor b = b_transposed ? t(randn({n, k}, dtype)) : randn({k, n}, dtype);
          const Tensor bias = randn(bias_shape, dtype);
          const std::vector<double> bias_before = bias.to_vector<double>();
          const Tensor out = addmm(bias, a, b);
          SCOPED_TRACE(testing::Message() << dtype_name(dtype) << " bias " << shape_str(bias_shape) << " a^T "
                                          << a_transposed << " b^T " << b_transposed);
          ASSERT_EQ(out.shape(), Shape({m, n}));
          EXPECT_TRUE(test::all_close(out, from_vector(reference_addmm(bias, a, b), {m, n}).to(dtype), tol, tol));
          EXPECT_EQ(bias.to_vector<double>(), bias_before) << "addmm wrote into its bias";
        }
      }
    }
  }
}

TEST(Addmm, AnEmptyProductIsTheBroadcastBias) {
  const Tensor bias = from_vector(std::vector<double>{1.5, -2.0, 3.25}, {3});
  const Tensor out = addmm(bias, zeros({2, 0}, DType::f64), zeros({0, 3}, DType::f64));
  EXPECT_EQ(out.to_vector<double>(), (std::vector<double>{1.5, -2.0, 3.25, 1.5, -2.0, 3.25}));
}

TEST(Addmm, GradientsMatchCentralDifferences) {
  manual_seed(5);
  const Tensor bias = randn({4}, DType::f64).requires_grad_();
  const Tensor a = randn({3, 6}, DType::f64).requires_grad_();
  const Tensor w = randn({4, 6}, DType::f64).requires_grad_();   // as nn::Linear: addmm(bias, x, W.t())
  const test::CheckResult r = test::gradcheck(
      [](const std::vector<Tensor>& in) { return addmm(in[0], in[1], t(in[2])); }, {bias, a, w}, {});
  EXPECT_TRUE(r.ok) << r.detail;
  const test::CheckResult rr = test::gradgradcheck(
      [](const std::vector<Tensor>& in) { return addmm(in[0], in[1], t(in[2])); }, {bias, a, w}, {});
  EXPECT_TRUE(rr.ok) << rr.detail;
}

}  // namespace
}  // namespace tinyddp
