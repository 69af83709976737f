// Elementwise CUDA kernels: the contracts of TINYDDP_ELEMENTWISE_KERNELS (kernels/contract.h) on device
// pointers of the current device. Strided kernels take at most kMaxDims dimensions after merging contiguous
// ones (more is an Error naming the shape).
#pragma once

#include "kernels/contract.h"

namespace tinyddp::kernels::cuda {

constexpr int kMaxDims = 8;

TINYDDP_ELEMENTWISE_KERNELS(TINYDDP_DECLARE_KERNEL)

}  // namespace tinyddp::kernels::cuda
