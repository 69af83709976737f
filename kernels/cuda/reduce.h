// Reduction CUDA kernels: the contracts of TINYDDP_REDUCE_KERNELS (kernels/contract.h) on device pointers.
// Each output element is reduced by one thread block in a fixed order: results are deterministic, and agree
// with the CPU's to rounding (the summation orders differ).
#pragma once

#include "kernels/contract.h"

namespace tinyddp::kernels::cuda {

TINYDDP_REDUCE_KERNELS(TINYDDP_DECLARE_KERNEL)

}  // namespace tinyddp::kernels::cuda
