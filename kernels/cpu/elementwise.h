// Elementwise CPU kernels: Eigen maps over host pointers. Contracts: TINYDDP_ELEMENTWISE_KERNELS in
// kernels/contract.h.
#pragma once

#include "kernels/contract.h"

namespace tinyddp::kernels::cpu {

TINYDDP_ELEMENTWISE_KERNELS(TINYDDP_DECLARE_KERNEL)

}  // namespace tinyddp::kernels::cpu
