// Elementwise CPU kernels. Strides are in elements; an output is always contiguous unless named `dst`.
//   unary:  y[i] = f(x[i])                  x, y contiguous, n elements; a, b are op parameters
//   binary: out = f(a, b) over `shape`      a and b read through their own strides (0 on broadcast dims)
//   copy:   strided <-> contiguous
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/elementwise_ops.h"

namespace tinyddp::kernels::cpu {

using Dims = std::vector<int64_t>;

using kernels::BinaryOp;
using kernels::UnaryOp;

template <typename T>
void unary(UnaryOp op, const T* x, T* y, int64_t n, double a = 0.0, double b = 0.0);

template <typename T>
void binary(BinaryOp op, const Dims& shape, const T* a, const Dims& a_strides, const T* b, const Dims& b_strides,
            T* out);

// dst (contiguous) = src read through src_strides.
template <typename T>
void copy_to_contiguous(const Dims& shape, const T* src, const Dims& src_strides, T* dst);
// dst read through dst_strides = src (contiguous).
template <typename T>
void copy_from_contiguous(const Dims& shape, const T* src, T* dst, const Dims& dst_strides);

// y = x + alpha * z, all contiguous (the optimizer's and the reducer's hot loop).
template <typename T>
void axpy(const T* x, const T* z, T alpha, T* y, int64_t n);

// Converts n contiguous elements from S to D.
template <typename S, typename D>
void convert(const S* src, D* dst, int64_t n);

}  // namespace tinyddp::kernels::cpu
