#include "kernels/cpu/matmul.h"

#include <Eigen/Core>

namespace tinyddp::kernels::cpu {

template <typename T>
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b,
          int64_t ldb, bool accumulate, T* c, int64_t ldc) {
  using RowMajor = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using Stride = Eigen::OuterStride<>;
  Eigen::Map<RowMajor, 0, Stride> C(c, m, n, Stride(ldc));
  if (k == 0) {   // an empty sum
    if (!accumulate) C.setZero();
    return;
  }
  // A is stored as (m, k) row-major, or as (k, m) when transposed; likewise B.
  Eigen::Map<const RowMajor, 0, Stride> A(a, trans_a ? k : m, trans_a ? m : k, Stride(lda));
  Eigen::Map<const RowMajor, 0, Stride> B(b, trans_b ? n : k, trans_b ? k : n, Stride(ldb));
  // Eigen's `C = A * B` zero-fills C and then accumulates into it; `C += A * B` is that second step alone,
  // so a caller that first fills C with something it needs (addmm's bias) saves a pass over C.
  const auto product = [&](const auto& lhs, const auto& rhs) {
    if (accumulate) C.noalias() += lhs * rhs;
    else C.noalias() = lhs * rhs;
  };
  if (!trans_a && !trans_b) product(A, B);
  else if (trans_a && !trans_b) product(A.transpose(), B);
  else if (!trans_a && trans_b) product(A, B.transpose());
  else product(A.transpose(), B.transpose());
}

TINYDDP_MATMUL_KERNELS(TINYDDP_INSTANTIATE_KERNEL)

}  // namespace tinyddp::kernels::cpu
