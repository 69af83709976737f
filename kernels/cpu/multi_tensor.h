// Multi-tensor kernels on host pointers. Contracts: TINYDDP_MULTI_TENSOR_KERNELS in kernels/contract.h; how the
// norm stays deterministic: Note [Deterministic multi-tensor norm] in kernels/cpu/multi_tensor.cpp.
#pragma once

#include "kernels/contract.h"

namespace tinyddp::kernels::cpu {

TINYDDP_MULTI_TENSOR_KERNELS(TINYDDP_DECLARE_KERNEL)

}  // namespace tinyddp::kernels::cpu
