// Matrix multiply on row-major buffers, via Eigen.
//   C (m, n) = op(A) (m, k) @ op(B) (k, n)      op(X) = X or X^T as trans_x says
// lda/ldb/ldc are row strides (elements between consecutive rows) of the buffers as stored.
#pragma once

#include <cstdint>

namespace tinyddp::kernels::cpu {

template <typename T>
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b,
          int64_t ldb, T* c, int64_t ldc);

}  // namespace tinyddp::kernels::cpu
