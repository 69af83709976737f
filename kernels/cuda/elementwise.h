// Elementwise CUDA kernels: the same operations and conventions as kernels/cpu/elementwise.h, on
// device pointers of the current device, launched on its compute stream and returning at once.
// Strided kernels take at most kMaxDims dimensions (more is an Error naming the shape).
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/elementwise_ops.h"

namespace tinyddp::kernels::cuda {

using Dims = std::vector<int64_t>;
constexpr int kMaxDims = 8;

// y[i] = op(x[i]), contiguous. T: float, double.
template <typename T>
void unary(UnaryOp op, const T* x, T* y, int64_t n, double a = 0.0, double b = 0.0);

// out (contiguous, `shape`) = op(a, b), a and b read through their strides (0 on broadcast dims).
template <typename T>
void binary(BinaryOp op, const Dims& shape, const T* a, const Dims& a_strides, const T* b, const Dims& b_strides,
            T* out);

// T: float, double, int64_t.
template <typename T>
void copy_to_contiguous(const Dims& shape, const T* src, const Dims& src_strides, T* dst);
template <typename T>
void copy_from_contiguous(const Dims& shape, const T* src, T* dst, const Dims& dst_strides);

// y = x + alpha * z, contiguous.
template <typename T>
void axpy(const T* x, const T* z, T alpha, T* y, int64_t n);

// dst[i] = D(src[i]) for the pairs of kernels/cpu's convert.
template <typename S, typename D>
void convert(const S* src, D* dst, int64_t n);

}  // namespace tinyddp::kernels::cuda
