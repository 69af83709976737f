// Reduction CUDA kernels: the same contracts as kernels/cpu/reduce.h (contiguous inputs, the reduced
// dimension viewed as (outer, size, inner)), on device pointers, asynchronous on the compute stream.
// Each output element is reduced by one thread block in a fixed order: results are deterministic.
#pragma once

#include <cstdint>
#include <vector>

namespace tinyddp::kernels::cuda {

template <typename T>
void sum_dims(const std::vector<int64_t>& shape, const std::vector<bool>& reduce, const T* x, T* out);

template <typename T>
void max_dim(int64_t outer, int64_t size, int64_t inner, const T* x, T* values, int64_t* indices);

template <typename T>
void log_softmax(int64_t outer, int64_t size, int64_t inner, const T* x, T* y);

template <typename T>
void one_hot(int64_t outer, int64_t size, int64_t inner, const int64_t* indices, T* out);

}  // namespace tinyddp::kernels::cuda
