// Matrix multiply on row-major host buffers, via Eigen. Contract: TINYDDP_MATMUL_KERNELS in kernels/contract.h.
#pragma once

#include "kernels/contract.h"

namespace tinyddp::kernels::cpu {

TINYDDP_MATMUL_KERNELS(TINYDDP_DECLARE_KERNEL)

}  // namespace tinyddp::kernels::cpu
