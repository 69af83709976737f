#include "kernels/cpu/matmul.h"

#include <Eigen/Core>

#include <algorithm>
#include <cstring>

namespace tinyddp::kernels::cpu {

namespace {

// Note [A GEMM that zeroes its output block by block]
// Eigen's `C = A * B` is `C.setZero(); C += A * B`: one pass writes zeros over all of C, then the blocked
// product reads C back and adds into it. For a weight gradient (400 x 784 from a batch of 64: K = 64, one
// depth block) C is 1.2 MiB, more than stays in L2 beside the packed operands, so the zeros went out to
// memory and came back in: that pass was 7% of a DDP step (perf, bench_ddp). The driver below is Eigen's own
// loop (Goto's: pack a block of the lhs, pack a panel of the rhs, call the gebp kernel) with the same blocking
// sizes and the same kernels, in the same order, so it gives Eigen's bits; the only change is that on the
// first depth block each slice of C, a few columns wide, is zeroed right before the kernel reads it, while it
// is in L1/L2. The zeroing still reads C's lines in from memory, as any first write does; what goes is the
// second trip (bench_ddp's local step 4.0 -> 3.5 ms, bench/README.md). Everything is in Eigen's column-major
// terms: a row-major C (m, n) is a column-major C^T (n, m) = op(B)^T op(A)^T, as Eigen does it for a
// row-major destination.
template <typename T, int LhsOrder, int RhsOrder>
void gemm_zeroing(int64_t rows, int64_t cols, int64_t depth, const T* lhs_data, int64_t lhs_stride,
                  const T* rhs_data, int64_t rhs_stride, T* res_data, int64_t res_stride) {
  namespace internal = Eigen::internal;   // (Eigen's stack-buffer macro below names `internal::`)
  using Index = Eigen::Index;
  using Traits = internal::gebp_traits<T, T>;
  using LhsMapper = internal::const_blas_data_mapper<T, Index, LhsOrder>;
  using RhsMapper = internal::const_blas_data_mapper<T, Index, RhsOrder>;
  using ResMapper = internal::blas_data_mapper<T, Index, Eigen::ColMajor, Eigen::Unaligned, 1>;
  LhsMapper lhs(lhs_data, lhs_stride);
  RhsMapper rhs(rhs_data, rhs_stride);
  ResMapper res(res_data, res_stride, 1);

  // The blocking Eigen picks for this product (generic_product_impl's scaleAndAddTo, one thread, L3 blocking).
  constexpr int kDynamic = Eigen::Dynamic;
  internal::gemm_blocking_space<Eigen::ColMajor, T, T, kDynamic, kDynamic, kDynamic, 1, false> blocking(rows, cols,
                                                                                                      depth, 1, true);
  const Index kc = blocking.kc();
  const Index mc = std::min<Index>(rows, blocking.mc());
  const Index nc = std::min<Index>(cols, blocking.nc());
  using LhsPacket = typename Traits::LhsPacket4Packing;
  internal::gemm_pack_lhs<T, Index, LhsMapper, Traits::mr, Traits::LhsProgress, LhsPacket, LhsOrder> pack_lhs;
  internal::gemm_pack_rhs<T, Index, RhsMapper, Traits::nr, RhsOrder> pack_rhs;
  internal::gebp_kernel<T, T, Index, ResMapper, Traits::mr, Traits::nr, false, false> gebp;

  ei_declare_aligned_stack_constructed_variable(T, block_a, kc * mc, blocking.blockA());
  ei_declare_aligned_stack_constructed_variable(T, block_b, kc * nc, blocking.blockB());
  // Columns of C zeroed ahead of the kernel at a time: a multiple of the kernel's panel width nr (so the
  // kernel splits the columns into the same panels as one call would), about 32 KiB of C.
  const Index slice = std::max<Index>(Traits::nr, (32 * 1024 / static_cast<Index>(sizeof(T) * mc)) / Traits::nr *
                                                      Traits::nr);
  const bool pack_rhs_once = mc != rows && kc == depth && nc == cols;
  for (Index i2 = 0; i2 < rows; i2 += mc) {
    const Index actual_mc = std::min(i2 + mc, rows) - i2;
    for (Index k2 = 0; k2 < depth; k2 += kc) {
      const Index actual_kc = std::min(k2 + kc, depth) - k2;
      pack_lhs(block_a, lhs.getSubMapper(i2, k2), actual_kc, actual_mc);
      for (Index j2 = 0; j2 < cols; j2 += nc) {
        const Index actual_nc = std::min(j2 + nc, cols) - j2;
        if (!pack_rhs_once || i2 == 0) pack_rhs(block_b, rhs.getSubMapper(k2, j2), actual_kc, actual_nc);
        if (k2 != 0) {
          gebp(res.getSubMapper(i2, j2), block_a, block_b, actual_mc, actual_kc, actual_nc, T(1));
          continue;
        }
        // The packed rhs holds panels of nr columns, actual_kc deep each: columns j start at j * actual_kc.
        for (Index j = 0; j < actual_nc; j += slice) {
          const Index width = std::min(slice, actual_nc - j);
          if (actual_mc == res_stride) {   // the slice's columns are one contiguous range
            std::memset(&res(i2, j2 + j), 0, sizeof(T) * static_cast<size_t>(actual_mc * width));
          } else {
            for (Index c = 0; c < width; ++c)
              std::memset(&res(i2, j2 + j + c), 0, sizeof(T) * static_cast<size_t>(actual_mc));
          }
          gebp(res.getSubMapper(i2, j2 + j), block_a, block_b + j * actual_kc, actual_mc, actual_kc, width, T(1),
               actual_kc, actual_kc, 0, 0);
        }
      }
    }
  }
}

}  // namespace

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
  // Where Eigen would run its blocked GEMM (not a matrix-vector product, not its small-size coefficient
  // loop: generic_product_impl's tests), the driver above, column-major: C^T (n, m) = op(B)^T op(A)^T.
  const bool blocked_gemm = m > 1 && n > 1 && k + m + n >= EIGEN_GEMM_TO_COEFFBASED_THRESHOLD;
  if (!accumulate && blocked_gemm) {
    constexpr int kCol = Eigen::ColMajor, kRow = Eigen::RowMajor;
    if (!trans_b && !trans_a) gemm_zeroing<T, kCol, kCol>(n, m, k, b, ldb, a, lda, c, ldc);
    else if (!trans_b && trans_a) gemm_zeroing<T, kCol, kRow>(n, m, k, b, ldb, a, lda, c, ldc);
    else if (trans_b && !trans_a) gemm_zeroing<T, kRow, kCol>(n, m, k, b, ldb, a, lda, c, ldc);
    else gemm_zeroing<T, kRow, kRow>(n, m, k, b, ldb, a, lda, c, ldc);
    return;
  }
  // A is stored as (m, k) row-major, or as (k, m) when transposed; likewise B.
  Eigen::Map<const RowMajor, 0, Stride> A(a, trans_a ? k : m, trans_a ? m : k, Stride(lda));
  Eigen::Map<const RowMajor, 0, Stride> B(b, trans_b ? n : k, trans_b ? k : n, Stride(ldb));
  // `C += A * B` is Eigen's product without its zero fill, so a caller that first fills C with something it
  // needs (addmm's bias) saves a pass over C.
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
