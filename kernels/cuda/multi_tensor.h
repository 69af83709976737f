// Multi-tensor kernels: one launch over a whole list of gradient tensors (device pointers of the
// current device), asynchronous on the compute stream, no host synchronization and no atomics.
// kernels/cpu/multi_tensor.h has the same functions on host pointers.
//
//   multi_tensor_l2norm   out[0] = sqrt(sum_i sum_j x_i[j]^2)              (a device scalar)
//   bucket_pack           flat[offsets[i] + j] = src_i[j] * factor          (grads -> bucket, / world size)
//   bucket_unpack         dst_i[j] = flat[offsets[i] + j]                    (bucket -> grads)
//   clip_by_global_norm   x_i *= min(1, max_norm / (norm + 1e-6)), norm written to total_norm[0]
//
// Determinism: the work is cut into fixed chunks of each tensor, each chunk's sum of squares lands in its
// own slot, and a second phase adds the slots in a fixed order; the same inputs give the same bits on
// every run. float32 inputs accumulate in float32 (as fused multi-tensor norms in the field do), float64 in
// float64. Lists of any length are accepted (long lists take several launches of the first phase).
#pragma once

#include <cstdint>
#include <vector>

namespace tinyddp::kernels::cuda {

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

}  // namespace tinyddp::kernels::cuda
