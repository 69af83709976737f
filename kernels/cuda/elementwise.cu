// Elementwise CUDA kernels, the same operations as kernels/cpu/elementwise.cpp (read it first: each
// scalar formula here mirrors one there, including NaN behaviour where the CPU's is defined).
//
// Strided kernels: a tensor walk is described by a StridedLayout passed by value (shape and each
// operand's strides, in elements). Before launching, dimensions of size 1 are dropped and neighbouring
// dimensions that are contiguous with each other in every operand are merged, so that common views
// become one or two dimensions (cheaper index math) and only truly scattered views count against kMaxDims.
// Element i of the walk is the i-th element in row-major order of `shape`; the contiguous operand's
// offset is i itself.
#include "kernels/cuda/elementwise.h"

#include <array>
#include <cmath>
#include <sstream>

#include "base/error.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/launch.h"
#include "kernels/cuda/runtime.h"

namespace tinyddp::kernels::cuda {

namespace {

using detail::dev_abs;
using detail::dev_exp;
using detail::dev_log;
using detail::dev_pow;
using detail::dev_sqrt;
using detail::dev_tanh;
using detail::grid_blocks;
using detail::grid_start;
using detail::grid_step;
using detail::kComputeStream;
using detail::kThreadsPerBlock;

// ---- strided layouts ----

// Shape and the strides of N strided operands, at most kMaxDims dimensions. Passed to kernels by value
// (8 + 8 * 8 * (N + 1) bytes, far below the 4 KiB kernel-parameter limit).
template <int N>
struct StridedLayout {
  int nd = 0;                          // 0: a scalar (one element at offset 0)
  int64_t shape[kMaxDims] = {};
  int64_t strides[N][kMaxDims] = {};   // strides[k][d]: operand k's stride of dimension d
};

std::string dims_string(const Dims& d) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < d.size(); ++i) os << (i ? ", " : "") << d[i];
  os << "]";
  return os.str();
}

// Builds the layout for `shape` read through N stride vectors: drops size-1 dims, merges dims p (outer)
// and d (inner) wherever stride[p] == stride[d] * shape[d] for every operand (then offset(ip, id) =
// (ip * shape[d] + id) * stride[d], one merged dim of stride[d]), and checks the result fits kMaxDims.
// The merged walk visits elements in the same row-major order as the original.
template <int N>
StridedLayout<N> make_layout(const char* what, const Dims& shape, const std::array<const Dims*, N>& strides) {
  for (int k = 0; k < N; ++k)
    TINYDDP_INTERNAL_ASSERT(strides[k]->size() == shape.size(), what, ": shape ", dims_string(shape), " has ",
                            shape.size(), " dims but operand ", k, "'s strides ", dims_string(*strides[k]),
                            " have ", strides[k]->size(), ".");
  Dims out_shape;
  std::array<Dims, N> out_strides;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    bool mergeable = !out_shape.empty();
    for (int k = 0; k < N && mergeable; ++k) mergeable = out_strides[k].back() == (*strides[k])[d] * shape[d];
    if (mergeable) {
      out_shape.back() *= shape[d];
      for (int k = 0; k < N; ++k) out_strides[k].back() = (*strides[k])[d];
    } else {
      out_shape.push_back(shape[d]);
      for (int k = 0; k < N; ++k) out_strides[k].push_back((*strides[k])[d]);
    }
  }
  TINYDDP_CHECK(static_cast<int>(out_shape.size()) <= kMaxDims, what, ": the CUDA kernels walk at most ", kMaxDims,
                " non-contiguous dimensions, but a tensor of shape ", dims_string(shape), " with strides ",
                dims_string(*strides[0]), " needs ", out_shape.size(),
                " after merging. Reshape it to at most ", kMaxDims, " dimensions, or make it contiguous before "
                "taking the view that scattered it.");
  StridedLayout<N> layout;
  layout.nd = static_cast<int>(out_shape.size());
  for (int d = 0; d < layout.nd; ++d) {
    layout.shape[d] = out_shape[d];
    for (int k = 0; k < N; ++k) layout.strides[k][d] = out_strides[k][d];
  }
  return layout;
}

int64_t numel(const Dims& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// Offsets of the row-major element `linear` in each operand.
template <int N>
__device__ __forceinline__ void strided_offsets(const StridedLayout<N>& layout, int64_t linear, int64_t (&off)[N]) {
  for (int k = 0; k < N; ++k) off[k] = 0;
  for (int d = layout.nd - 1; d >= 0; --d) {
    const int64_t size = layout.shape[d];
    const int64_t i = linear % size;
    linear /= size;
    for (int k = 0; k < N; ++k) off[k] += i * layout.strides[k][d];
  }
}

// One unary op on one element; `fill` is handled by the caller (it must not read x).
// a, b: the op's parameters already converted to T, as the CPU does (static_cast<T>(a)).
// a_raw: the parameter as given, for pow's exact-exponent special cases (the CPU compares the double).
template <typename T>
__device__ __forceinline__ T unary_scalar(UnaryOp op, T x, T a, T b, double a_raw) {
  switch (op) {
    case UnaryOp::neg: return -x;
    case UnaryOp::exp: return dev_exp(x);
    case UnaryOp::log: return dev_log(x);
    case UnaryOp::sqrt: return dev_sqrt(x);
    case UnaryOp::abs: return dev_abs(x);
    case UnaryOp::relu: return x < T(0) ? T(0) : x;   // Eigen's max(x, 0): NaN passes through
    case UnaryOp::tanh: return dev_tanh(x);
    // 1 / (1 + e^-x), computed from e^-|x| so that neither branch overflows.
    case UnaryOp::sigmoid: {
      const T e = dev_exp(-dev_abs(x));
      return x >= T(0) ? T(1) / (T(1) + e) : e / (T(1) + e);
    }
    case UnaryOp::sign: return x > T(0) ? T(1) : (x < T(0) ? T(-1) : T(0));
    // CUDA's math overloads (float and double), as the CPU's std:: ones.
    case UnaryOp::sin: return ::sin(x);
    case UnaryOp::cos: return ::cos(x);
    case UnaryOp::log1p: return ::log1p(x);
    case UnaryOp::expm1: return ::expm1(x);
    case UnaryOp::erf: return ::erf(x);
    case UnaryOp::floor: return ::floor(x);
    case UnaryOp::ceil: return ::ceil(x);
    case UnaryOp::trunc: return ::trunc(x);
    case UnaryOp::round: return ::nearbyint(x);
    case UnaryOp::pow:
      if (a_raw == 2.0) return x * x;
      if (a_raw == 1.0) return x;
      if (a_raw == 0.0) return T(1);
      return dev_pow(x, a);
    case UnaryOp::add_scalar: return x + a;
    case UnaryOp::mul_scalar: return x * a;
    case UnaryOp::clamp: {   // Eigen's x.max(a).min(b), in its operand order
      const T lo = x < a ? a : x;
      return b < lo ? b : lo;
    }
    case UnaryOp::in_range: return (x >= a && x <= b) ? T(1) : T(0);
    case UnaryOp::gt_scalar: return x > a ? T(1) : T(0);
    case UnaryOp::fill: return a;
  }
  return T(0);
}

// ---- kernels ----

template <typename T>
__global__ void unary_kernel(UnaryOp op, const T* x, T* y, int64_t n, T a, T b, double a_raw) {
  for (int64_t i = grid_start(); i < n; i += grid_step())
    y[i] = op == UnaryOp::fill ? a : unary_scalar(op, x[i], a, b, a_raw);
}

template <typename T>
__global__ void binary_dense_kernel(BinaryOp op, const T* a, const T* b, T* out, int64_t n) {
  for (int64_t i = grid_start(); i < n; i += grid_step()) out[i] = apply_binary(op, a[i], b[i]);
}

// layout.strides[0] for a, [1] for b; out is contiguous.
template <typename T>
__global__ void binary_strided_kernel(BinaryOp op, StridedLayout<2> layout, const T* a, const T* b, T* out,
                                      int64_t n) {
  for (int64_t i = grid_start(); i < n; i += grid_step()) {
    int64_t off[2];
    strided_offsets(layout, i, off);
    out[i] = apply_binary(op, a[off[0]], b[off[1]]);
  }
}

// layout.strides[0] for a, [1] for b; out is contiguous.
template <typename T>
__global__ void compare_kernel(CompareOp op, StridedLayout<2> layout, const T* a, const T* b, bool* out, int64_t n) {
  for (int64_t i = grid_start(); i < n; i += grid_step()) {
    int64_t off[2];
    strided_offsets(layout, i, off);
    out[i] = apply_compare(op, a[off[0]], b[off[1]]);
  }
}

template <typename T>
__global__ void gather_kernel(StridedLayout<1> layout, const T* src, T* dst, int64_t n) {
  for (int64_t i = grid_start(); i < n; i += grid_step()) {
    int64_t off[1];
    strided_offsets(layout, i, off);
    dst[i] = src[off[0]];
  }
}

template <typename T>
__global__ void scatter_kernel(StridedLayout<1> layout, const T* src, T* dst, int64_t n) {
  for (int64_t i = grid_start(); i < n; i += grid_step()) {
    int64_t off[1];
    strided_offsets(layout, i, off);
    dst[off[0]] = src[i];
  }
}

template <typename T>
__global__ void axpy_kernel(const T* x, const T* z, T alpha, T* y, int64_t n) {
  for (int64_t i = grid_start(); i < n; i += grid_step()) y[i] = x[i] + alpha * z[i];
}

template <typename S, typename D>
__global__ void convert_kernel(const S* src, D* dst, int64_t n) {
  for (int64_t i = grid_start(); i < n; i += grid_step()) dst[i] = static_cast<D>(src[i]);
}

}  // namespace

template <typename T>
void unary(UnaryOp op, const T* x, T* y, int64_t n, double a, double b) {
  if (n <= 0) return;
  unary_kernel<T><<<grid_blocks(n), kThreadsPerBlock, 0, kComputeStream>>>(op, x, y, n, static_cast<T>(a),
                                                                            static_cast<T>(b), a);
  check_last_launch("cuda::unary");
}

template <typename T>
void binary(BinaryOp op, const Dims& shape, const T* a, const Dims& a_strides, const T* b, const Dims& b_strides,
            T* out) {
  const int64_t n = numel(shape);
  if (n == 0) return;
  const StridedLayout<2> layout = make_layout<2>("cuda::binary", shape, {&a_strides, &b_strides});
  // After merging, two operands dense with the output's shape collapse to (at most) one dim of stride 1.
  const bool dense = layout.nd == 0 || (layout.nd == 1 && layout.strides[0][0] == 1 && layout.strides[1][0] == 1);
  if (dense) {
    binary_dense_kernel<T><<<grid_blocks(n), kThreadsPerBlock, 0, kComputeStream>>>(op, a, b, out, n);
  } else {
    binary_strided_kernel<T><<<grid_blocks(n), kThreadsPerBlock, 0, kComputeStream>>>(op, layout, a, b, out, n);
  }
  check_last_launch("cuda::binary");
}

template <typename T>
void compare(CompareOp op, const Dims& shape, const T* a, const Dims& a_strides, const T* b, const Dims& b_strides,
             bool* out) {
  const int64_t n = numel(shape);
  if (n == 0) return;
  const StridedLayout<2> layout = make_layout<2>("cuda::compare", shape, {&a_strides, &b_strides});
  compare_kernel<T><<<grid_blocks(n), kThreadsPerBlock, 0, kComputeStream>>>(op, layout, a, b, out, n);
  check_last_launch("cuda::compare");
}

template <typename T>
void copy_to_contiguous(const Dims& shape, const T* src, const Dims& src_strides, T* dst) {
  const int64_t n = numel(shape);
  if (n == 0) return;
  const StridedLayout<1> layout = make_layout<1>("cuda::copy_to_contiguous", shape, {&src_strides});
  if (layout.nd == 0 || (layout.nd == 1 && layout.strides[0][0] == 1)) {
    TINYDDP_CUDA_CHECK(cudaMemcpyAsync(dst, src, n * sizeof(T), cudaMemcpyDeviceToDevice, kComputeStream));
    return;
  }
  gather_kernel<T><<<grid_blocks(n), kThreadsPerBlock, 0, kComputeStream>>>(layout, src, dst, n);
  check_last_launch("cuda::copy_to_contiguous");
}

// If dst_strides make several elements share one address (a stride-0 "expanded" destination), which of
// them lands is unspecified here, while the CPU's sequential walk keeps the last; writing into such a
// view is not meaningful and the engine does not do it.
template <typename T>
void copy_from_contiguous(const Dims& shape, const T* src, T* dst, const Dims& dst_strides) {
  const int64_t n = numel(shape);
  if (n == 0) return;
  const StridedLayout<1> layout = make_layout<1>("cuda::copy_from_contiguous", shape, {&dst_strides});
  if (layout.nd == 0 || (layout.nd == 1 && layout.strides[0][0] == 1)) {
    TINYDDP_CUDA_CHECK(cudaMemcpyAsync(dst, src, n * sizeof(T), cudaMemcpyDeviceToDevice, kComputeStream));
    return;
  }
  scatter_kernel<T><<<grid_blocks(n), kThreadsPerBlock, 0, kComputeStream>>>(layout, src, dst, n);
  check_last_launch("cuda::copy_from_contiguous");
}

template <typename T>
void axpy(const T* x, const T* z, T alpha, T* y, int64_t n) {
  if (n <= 0) return;
  axpy_kernel<T><<<grid_blocks(n), kThreadsPerBlock, 0, kComputeStream>>>(x, z, alpha, y, n);
  check_last_launch("cuda::axpy");
}

template <typename S, typename D>
void convert(const S* src, D* dst, int64_t n) {
  if (n <= 0) return;
  convert_kernel<S, D><<<grid_blocks(n), kThreadsPerBlock, 0, kComputeStream>>>(src, dst, n);
  check_last_launch("cuda::convert");
}

TINYDDP_ELEMENTWISE_KERNELS(TINYDDP_INSTANTIATE_KERNEL)

}  // namespace tinyddp::kernels::cuda
