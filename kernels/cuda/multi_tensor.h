// Multi-tensor CUDA kernels: the contracts of TINYDDP_MULTI_TENSOR_KERNELS (kernels/contract.h), each one
// launch over a whole list of tensors (device pointers of the current device), with no host synchronization
// and no atomics.
//
// Determinism: the work is cut into fixed chunks of each tensor, each chunk's sum of squares lands in its
// own slot, and a second phase adds the slots in a fixed order; the same inputs give the same bits on
// every run. float32 inputs accumulate in float32 (as fused multi-tensor norms in the field do), float64 in
// float64. Lists of any length are accepted (long lists take several launches of the first phase).
#pragma once

#include "kernels/contract.h"

namespace tinyddp::kernels::cuda {

TINYDDP_MULTI_TENSOR_KERNELS(TINYDDP_DECLARE_KERNEL)

}  // namespace tinyddp::kernels::cuda
