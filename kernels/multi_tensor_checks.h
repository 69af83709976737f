// Argument checks shared by the multi-tensor kernels of both backends (cpu/multi_tensor.cpp,
// cuda/multi_tensor.cu): a list of pointers with one numel each, every pointer valid unless its numel is 0.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/error.h"

namespace tinyddp::kernels {

inline void check_multi_tensor_lists(size_t num_ptrs, const std::vector<int64_t>& numels, const char* ptrs_name,
                                     const char* fn) {
  TINYDDP_CHECK(num_ptrs == numels.size(), fn, ": expected one numel per tensor, got ", num_ptrs, " ", ptrs_name,
                " and ", numels.size(), " numels.");
}

// `buffer` names what a valid pointer is on this backend ("buffer", "device buffer").
template <typename P>
void check_multi_tensor_entry(const P* p, int64_t numel, size_t i, const char* fn, const char* buffer) {
  TINYDDP_CHECK(numel >= 0, fn, ": numels[", i, "] is ", numel, "; numels must be >= 0.");
  TINYDDP_CHECK(p != nullptr || numel == 0, fn, ": tensor ", i, " has ", numel,
                " elements but a null pointer; pass a valid ", buffer, " (or numel 0).");
}

}  // namespace tinyddp::kernels
