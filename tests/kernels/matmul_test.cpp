// The CPU GEMM kernel (kernels/cpu/matmul.h). Without `accumulate` it runs its own copy of Eigen's blocked loop,
// which zeroes C slice by slice instead of in one pass first (Note [A GEMM that zeroes its output block by
// block]); with `accumulate` it is Eigen's `C += A * B`. Eigen's `C = A * B` is `C.setZero(); C += A * B`, so
// the product written over garbage must equal, bit for bit, the product accumulated into zeros: that is the
// promise that gradients did not change. A dot product in double checks that both are the product at all.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/cpu/matmul.h"

namespace tinyddp::test {
namespace {

namespace cpu = kernels::cpu;

template <typename T>
class CpuGemm : public ::testing::Test {};
using FloatTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CpuGemm, FloatTypes);

struct Shape {
  int64_t m, n, k;
  const char* why;
};

// Eigen's blocking on this VM (AVX-512, 2 MiB L2) for float, in its column-major terms where rows = n,
// cols = m: the first shape has 2 column blocks (nc = 200), the second 2 depth blocks (kc = 552), the third
// 7 row blocks (mc = 432) with the rhs packed once. Other machines block differently; the bits must still agree.
const Shape kShapes[] = {
    {400, 784, 64, "a weight gradient: 400 x 784 from a batch of 64"},
    {300, 1500, 1100, "depth over several blocks"},
    {40, 3000, 300, "rows over several blocks"},
    {64, 400, 784, "a forward layer"},
    {37, 53, 29, "odd sizes: every tail of the kernel"},
    {2, 2, 17, "the smallest blocked product (k + m + n = 21)"},
    {5, 3, 3, "Eigen's small-size loop (k + m + n < 20)"},
    {1, 70, 45, "one row: a matrix-vector product"},
    {70, 1, 45, "one column: a matrix-vector product"},
};

template <typename T>
std::vector<T> random_matrix(int64_t rows, int64_t stride, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<T> x(static_cast<size_t>(rows * stride));
  for (T& v : x) v = static_cast<T>(u(rng));
  return x;
}

TYPED_TEST(CpuGemm, WrittenOverGarbageEqualsAccumulatedIntoZerosBitwise) {
  using T = TypeParam;
  for (const Shape& s : kShapes) {
    for (int variant = 0; variant < 8; ++variant) {
      const bool trans_a = variant & 1, trans_b = variant & 2, padded = variant & 4;
      SCOPED_TRACE(::testing::Message() << s.why << ": m " << s.m << " n " << s.n << " k " << s.k << " trans_a "
                                        << trans_a << " trans_b " << trans_b << " padded " << padded);
      // Padded: row strides wider than the rows, so that a kernel which assumed packed rows would read or
      // write the padding; unpadded, C's rows are one contiguous range (the kernel zeroes it in one call).
      const int64_t a_rows = trans_a ? s.k : s.m, a_cols = trans_a ? s.m : s.k, lda = a_cols + (padded ? 3 : 0);
      const int64_t b_rows = trans_b ? s.n : s.k, b_cols = trans_b ? s.k : s.n, ldb = b_cols + (padded ? 5 : 0);
      const int64_t ldc = s.n + (padded ? 7 : 0);
      const std::vector<T> a = random_matrix<T>(a_rows, lda, 1), b = random_matrix<T>(b_rows, ldb, 2);
      const T sentinel = T(12345);
      std::vector<T> written(static_cast<size_t>(s.m * ldc), std::numeric_limits<T>::quiet_NaN());
      std::vector<T> accumulated(written.size(), T(0));
      for (int64_t i = 0; i < s.m; ++i) {   // the padding of each row must not be touched
        for (int64_t j = s.n; j < ldc; ++j) written[i * ldc + j] = accumulated[i * ldc + j] = sentinel;
      }
      cpu::gemm<T>(trans_a, trans_b, s.m, s.n, s.k, a.data(), lda, b.data(), ldb, false, written.data(), ldc);
      cpu::gemm<T>(trans_a, trans_b, s.m, s.n, s.k, a.data(), lda, b.data(), ldb, true, accumulated.data(), ldc);
      ASSERT_EQ(0, std::memcmp(written.data(), accumulated.data(), written.size() * sizeof(T)));

      // Against a dot product in double, on a spread of entries (all of them for the small shapes).
      const int64_t step = s.m * s.n > 4096 ? 97 : 1;
      for (int64_t e = 0; e < s.m * s.n; e += step) {
        const int64_t i = e / s.n, j = e % s.n;
        double dot = 0;
        for (int64_t p = 0; p < s.k; ++p) {
          const double aip = trans_a ? a[p * lda + i] : a[i * lda + p];
          const double bpj = trans_b ? b[j * ldb + p] : b[p * ldb + j];
          dot += aip * bpj;
        }
        const double tolerance = (sizeof(T) == 4 ? 1e-5 : 1e-13) * static_cast<double>(s.k);
        ASSERT_NEAR(dot, static_cast<double>(written[i * ldc + j]), tolerance) << "C[" << i << ", " << j << "]";
      }
    }
  }
}

TYPED_TEST(CpuGemm, AnEmptyDepthGivesZerosOrLeavesCAlone) {
  using T = TypeParam;
  const T a[1] = {T(1)}, b[1] = {T(1)};
  std::vector<T> c(6, T(7));
  cpu::gemm<T>(false, false, 2, 3, 0, a, 1, b, 3, true, c.data(), 3);
  for (T v : c) EXPECT_EQ(v, T(7));
  cpu::gemm<T>(false, false, 2, 3, 0, a, 1, b, 3, false, c.data(), 3);
  for (T v : c) EXPECT_EQ(v, T(0));
}

}  // namespace
}  // namespace tinyddp::test
