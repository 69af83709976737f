// Shapes and strides. Strides and offsets are counted in elements, not bytes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tinyddp {

using Shape = std::vector<int64_t>;

int64_t numel_of(const Shape& shape);
Shape contiguous_strides(const Shape& shape);
std::string shape_str(const Shape& shape);   // "[2, 3]", as PyTorch prints sizes in messages

// NumPy broadcasting of two shapes; throws PyTorch's text when they don't broadcast.
Shape broadcast_shapes(const Shape& a, const Shape& b);

// Wraps a possibly negative dim into [0, ndim); out of range throws IndexError with PyTorch's text. A 0-dim
// tensor takes dim 0 or -1 (both give 0), as PyTorch's: a caller must not index its empty shape with it.
int64_t wrap_dim(int64_t dim, int64_t ndim);

}  // namespace tinyddp
