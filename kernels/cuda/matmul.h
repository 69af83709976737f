// Matrix multiply through cuBLAS: the row-major contract of TINYDDP_MATMUL_KERNELS (kernels/contract.h).
// cuBLAS is column-major, so this computes C^T = op(B)^T op(A)^T, which reads the same memory.
// float32 runs in full fp32 (no TF32), so results match the CPU to float32 rounding.
#pragma once

#include "kernels/contract.h"

namespace tinyddp::kernels::cuda {

TINYDDP_MATMUL_KERNELS(TINYDDP_DECLARE_KERNEL)

}  // namespace tinyddp::kernels::cuda
