// Reduction CPU kernels over contiguous host inputs. Contracts: TINYDDP_REDUCE_KERNELS in kernels/contract.h.
#pragma once

#include "kernels/contract.h"

namespace tinyddp::kernels::cpu {

TINYDDP_REDUCE_KERNELS(TINYDDP_DECLARE_KERNEL)

}  // namespace tinyddp::kernels::cpu
