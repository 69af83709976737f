// Matrix multiply through cuBLAS, with kernels/cpu/matmul.h's row-major contract:
//   C (m, n) = op(A) (m, k) @ op(B) (k, n), lda/ldb/ldc the row strides of the buffers as stored.
// cuBLAS is column-major, so this computes C^T = op(B)^T op(A)^T, which reads the same memory.
// float32 runs in full fp32 (no TF32), so results match the CPU to float32 rounding.
#pragma once

#include <cstdint>

namespace tinyddp::kernels::cuda {

template <typename T>
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b,
          int64_t ldb, T* c, int64_t ldc);

}  // namespace tinyddp::kernels::cuda
