// gemm through cuBLAS with the row-major contract of kernels/contract.h.
//
// Note [Row-major gemm on column-major cuBLAS]
// A row-major (r, c) buffer with row stride ld is, read column-major, the (c, r) matrix of its transpose
// with leading dimension ld. So C (m, n) row-major is C^T (n, m) column-major, and
//   C = op(A) op(B)   <=>   C^T = op(B)^T op(A)^T,
// which cuBLAS computes from the same buffers: the first operand is B's buffer, read column-major as
// (n, k) when not transposed (buffer (k, n) row-major = B^T column-major, CUBLAS_OP_N) or as the
// transpose of (k, n) when trans_b (buffer (n, k) row-major holds B^T, column-major it is B, CUBLAS_OP_T);
// A likewise as the second operand. Leading dimensions are the row strides unchanged.
#include "kernels/cuda/matmul.h"

#include <algorithm>
#include <climits>
#include <mutex>
#include <vector>

#include "base/error.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/launch.h"
#include "kernels/cuda/runtime.h"

namespace tinyddp::kernels::cuda {

namespace {

// One cuBLAS handle per device, created on first use on that device. Never destroyed: destroying it after
// the CUDA runtime shut down at exit would fail, and the driver releases it at process exit anyway.
cublasHandle_t handle_for_current_device() {
  static std::mutex* mutex = new std::mutex();
  static std::vector<cublasHandle_t>* handles = new std::vector<cublasHandle_t>();
  const int device = current_device();
  std::lock_guard<std::mutex> lock(*mutex);
  if (static_cast<int>(handles->size()) <= device) handles->resize(device + 1, nullptr);
  cublasHandle_t& handle = (*handles)[device];
  if (handle == nullptr) {
    cublasHandle_t created = nullptr;
    TINYDDP_CUBLAS_CHECK(cublasCreate(&created));   // binds to the current device
    // Every kernel of kernels/cuda runs on the compute stream (the legacy default stream).
    TINYDDP_CUBLAS_CHECK(cublasSetStream(created, detail::kComputeStream));
    // Plain fp32 for float: no TF32 tensor-core rounding (10-bit mantissa inputs), so float results match
    // the CPU's to float32 rounding. DEFAULT_MATH never uses TF32 for cublasSgemm unless asked to.
    TINYDDP_CUBLAS_CHECK(cublasSetMathMode(created, CUBLAS_DEFAULT_MATH));
    handle = created;
  }
  return handle;
}

cublasStatus_t gemm_call(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                         const float* alpha, const float* a, int lda, const float* b, int ldb, const float* beta,
                         float* c, int ldc) {
  return cublasSgemm(h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
cublasStatus_t gemm_call(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                         const double* alpha, const double* a, int lda, const double* b, int ldb,
                         const double* beta, double* c, int ldc) {
  return cublasDgemm(h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

// The row stride of a row-major (rows, cols) buffer, checked: at least cols (rows must not overlap).
// With a single row the stride is never used, so any value is accepted and cols returned (cuBLAS
// requires ld >= the column-major row count even then).
int64_t checked_ld(const char* name, int64_t rows, int64_t cols, int64_t ld) {
  if (rows == 1) return std::max(ld, cols);
  TINYDDP_CHECK(ld >= cols, "cuda::gemm: ", name, " is stored as (", rows, ", ", cols, ") row-major with row stride ",
                ld, ", but the row stride must be at least the row length ", cols,
                ". Make the operand contiguous before the matmul.");
  return ld;
}

}  // namespace

template <typename T>
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b,
          int64_t ldb, bool accumulate, T* c, int64_t ldc) {
  if (m == 0 || n == 0) return;   // C is empty
  ldc = checked_ld("C", m, n, ldc);
  if (k == 0) {   // an empty sum: C = 0 (m rows of n elements, row stride ldc), or C unchanged
    if (accumulate) return;
    TINYDDP_CUDA_CHECK(cudaMemset2DAsync(c, static_cast<size_t>(ldc) * sizeof(T), 0, static_cast<size_t>(n) * sizeof(T),
                                         static_cast<size_t>(m), detail::kComputeStream));
    return;
  }
  // A is stored (m, k), or (k, m) when transposed; B is stored (k, n), or (n, k) when transposed.
  lda = trans_a ? checked_ld("A", k, m, lda) : checked_ld("A", m, k, lda);
  ldb = trans_b ? checked_ld("B", n, k, ldb) : checked_ld("B", k, n, ldb);
  for (int64_t v : {m, n, k, lda, ldb, ldc})
    TINYDDP_CHECK(v <= INT_MAX, "cuda::gemm: a dimension or row stride (", v,
                  ") exceeds cuBLAS's 32-bit limit; (m, n, k) = (", m, ", ", n, ", ", k,
                  "). Split the matmul into smaller pieces.");
  // beta = 0: C is written, never read (it may hold garbage or NaN); beta = 1: C += op(A) op(B).
  const T alpha = T(1), beta = accumulate ? T(1) : T(0);
  // See Note [Row-major gemm on column-major cuBLAS]: C^T (n, m) = op(B)^T (n, k) @ op(A)^T (k, m).
  TINYDDP_CUBLAS_CHECK(gemm_call(handle_for_current_device(), trans_b ? CUBLAS_OP_T : CUBLAS_OP_N,
                                 trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, static_cast<int>(n), static_cast<int>(m),
                                 static_cast<int>(k), &alpha, b, static_cast<int>(ldb), a, static_cast<int>(lda), &beta,
                                 c, static_cast<int>(ldc)));
}

TINYDDP_MATMUL_KERNELS(TINYDDP_INSTANTIATE_KERNEL)

}  // namespace tinyddp::kernels::cuda
