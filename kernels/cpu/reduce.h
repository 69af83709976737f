// Reduction CPU kernels over contiguous inputs. A reduction over one dimension views the input as
// (outer, size, inner): `size` is the reduced dimension, `inner` the product of the dims after it.
#pragma once

#include <cstdint>
#include <vector>

namespace tinyddp::kernels::cpu {

// out (contiguous, the input's shape with reduced dims set to 1) = sum of x over the dims where reduce[d].
template <typename T>
void sum_dims(const std::vector<int64_t>& shape, const std::vector<bool>& reduce, const T* x, T* out);

// values/indices (outer, inner) = max of x (outer, size, inner) over `size`; the first maximum wins.
template <typename T>
void max_dim(int64_t outer, int64_t size, int64_t inner, const T* x, T* values, int64_t* indices);

// y = x - log(sum(exp(x))) over `size`, stabilized by subtracting the max first.
template <typename T>
void log_softmax(int64_t outer, int64_t size, int64_t inner, const T* x, T* y);

// out (outer, size, inner) = 1 where indices (outer, inner) == position along size, else 0.
template <typename T>
void one_hot(int64_t outer, int64_t size, int64_t inner, const int64_t* indices, T* out);

}  // namespace tinyddp::kernels::cpu
