// Multi-tensor kernels on host pointers: the CPU counterparts of kernels/cuda/multi_tensor.h, with the
// same contracts (see there): one pass over a list of tensors, fixed chunks, per-chunk partial sums
// added in a fixed order, so results do not depend on thread count or timing.
#pragma once

#include <cstdint>
#include <vector>

namespace tinyddp::kernels::cpu {

template <typename T>
void multi_tensor_l2norm(const std::vector<const T*>& tensors, const std::vector<int64_t>& numels, T* out);

template <typename T>
void bucket_pack(const std::vector<const T*>& srcs, const std::vector<int64_t>& numels,
                 const std::vector<int64_t>& offsets, T factor, T* flat);

template <typename T>
void bucket_unpack(const T* flat, const std::vector<int64_t>& offsets, const std::vector<int64_t>& numels,
                   const std::vector<T*>& dsts);

template <typename T>
void clip_by_global_norm(const std::vector<T*>& tensors, const std::vector<int64_t>& numels, double max_norm,
                         T* total_norm);

}  // namespace tinyddp::kernels::cpu
