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

// NumPy broadcasting of two shapes; throws naming `op` and both shapes when they don't broadcast.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);

// Wraps a possibly negative dim into [0, ndim); throws naming `op` when out of range.
int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op);

}  // namespace tinyddp
