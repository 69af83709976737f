// The kernel contract: every kernel that both kernels::cpu and kernels::cuda implement, listed once.
//
// An entry  X(name, types, (params), (args))  is one kernel:
//   name    kernels::cpu::name and kernels::cuda::name; engine code calls backend::name(device, params...)
//   types   the type set it is instantiated for (below): floating, any_dtype or conversions
//   params  its parameters, spelled with the set's template parameters (T; S and D for conversions)
//   args    the parameter names again, in order (backend forwards them)
// Adding a kernel: one entry, with its one-line contract, in its topic's list below, then its bodies in
// kernels/cpu/<topic>.cpp and kernels/cuda/<topic>.cu. Nothing else: the topic headers declare the list
// (TINYDDP_DECLARE_KERNEL), the end of each body file instantiates it (TINYDDP_INSTANTIATE_KERNEL), and
// engine/core/backend.h forwards it by device. A new topic is a list here, added to TINYDDP_KERNELS.
//
// Conventions for every kernel: it returns void and writes only its outputs; all its pointers are on one
// device (host memory for cpu, the current GPU for cuda, where it is queued on the compute stream and returns
// at once). Sizes and strides are in elements. An output is contiguous unless it is named `dst`. Strides of
// 0 broadcast a dimension. A reduction over one dimension views the contiguous input as (outer, size, inner):
// `size` is the reduced dimension, `inner` the product of the dimensions after it.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace tinyddp::kernels {

using Dims = std::vector<int64_t>;   // a shape, or strides, one entry per dimension

enum class UnaryOp {
  neg, exp, log, sqrt, abs, relu, tanh, sigmoid, sign, erf,
  sin, cos, log1p, expm1,
  floor, ceil, trunc,
  round,       // to the nearest integer, halves to even (std::nearbyint in the default rounding mode)
  pow,         // x^a
  add_scalar,  // x + a
  mul_scalar,  // x * a
  clamp,       // min(max(x, a), b)
  in_range,    // 1 if a <= x <= b else 0   (clamp's gradient mask)
  gt_scalar,   // 1 if x > a else 0         (relu's gradient mask)
  fill,        // a
};

enum class BinaryOp {
  add, sub, mul, div, eq,
  // Backward rules as one pass, a = the output's gradient, b = the forward's output y (PyTorch's
  // tanh_backward, sigmoid_backward, threshold_backward): the same float operations, in the same order and
  // each rounded on its own, as the rules written with separate ops, which is what create_graph still uses.
  tanh_backward,     // a (1 - b^2)
  sigmoid_backward,  // a (b (1 - b))
  relu_backward,     // a where b > 0, else 0
  pow,               // a^b (floating only: integer powers are the engine's pow, by squaring)
};

// Elementwise comparisons; their results are bool.
enum class CompareOp { eq, ne, lt, le, gt, ge };

// Host code (g++) and device code (nvcc) both apply the same scalar definitions below.
#if defined(__CUDACC__)
#define TINYDDP_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define TINYDDP_HOST_DEVICE inline
#endif

// a * b and a - b, each rounded on its own as a separate op rounds it. The fused backward rules must give
// the bits of the rules written with separate ops, and compilers fuse a multiply and an add into one FMA
// (one rounding) where allowed: g++ under -ffp-contract=fast (the GNU default), nvcc by default (--fmad=true).
// A value that goes through memory (host) or the _rn intrinsics (device) is never fused.
template <typename T>
TINYDDP_HOST_DEVICE T mul_rounded(T a, T b) {
#if defined(__CUDA_ARCH__)
  if constexpr (std::is_integral_v<T>) return a * b;   // exact: nothing to round
  else if constexpr (sizeof(T) == 4) return __fmul_rn(a, b); else return __dmul_rn(a, b);
#else
  volatile T p = a * b;
  return p;
#endif
}
template <typename T>
TINYDDP_HOST_DEVICE T sub_rounded(T a, T b) {
#if defined(__CUDA_ARCH__)
  if constexpr (std::is_integral_v<T>) return a - b;
  else if constexpr (sizeof(T) == 4) return __fsub_rn(a, b); else return __dsub_rn(a, b);
#else
  volatile T d = a - b;
  return d;
#endif
}

// a + b, a - b, a * b; signed integers wrap modulo 2^64 as PyTorch's int64 kernels do in practice, computed on
// the unsigned type because signed overflow is undefined in C++.
template <typename T, typename Fn>
TINYDDP_HOST_DEVICE T wrapping(T a, T b, Fn fn) {
  if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(fn(static_cast<U>(a), static_cast<U>(b)));
  } else {
    return fn(a, b);
  }
}

// What a BinaryOp computes on one pair of elements: the one definition both backends use.
template <typename T>
TINYDDP_HOST_DEVICE T apply_binary(BinaryOp op, T a, T b) {
  switch (op) {
    case BinaryOp::add: return wrapping(a, b, [](auto x, auto y) { return x + y; });
    case BinaryOp::sub: return wrapping(a, b, [](auto x, auto y) { return x - y; });
    case BinaryOp::mul: return wrapping(a, b, [](auto x, auto y) { return x * y; });
    case BinaryOp::div: return a / b;
    case BinaryOp::eq: return a == b ? T(1) : T(0);
    case BinaryOp::tanh_backward: return mul_rounded(a, sub_rounded(T(1), mul_rounded(b, b)));
    case BinaryOp::sigmoid_backward: return mul_rounded(a, mul_rounded(b, sub_rounded(T(1), b)));
    case BinaryOp::relu_backward: return b > T(0) ? a : T(0);
    case BinaryOp::pow:
      if constexpr (std::is_floating_point_v<T>) {
#if defined(__CUDA_ARCH__)
        return ::pow(a, b);
#else
        return std::pow(a, b);
#endif
      } else {
        return T(0);   // never dispatched (engine/ops/op_utils.cpp)
      }
  }
  return T(0);
}

template <typename T>
TINYDDP_HOST_DEVICE bool apply_compare(CompareOp op, T a, T b) {
  switch (op) {
    case CompareOp::eq: return a == b;
    case CompareOp::ne: return a != b;
    case CompareOp::lt: return a < b;
    case CompareOp::le: return a <= b;
    case CompareOp::gt: return a > b;
    case CompareOp::ge: return a >= b;
  }
  return false;
}

}  // namespace tinyddp::kernels

// ---- the lists (comments inside a macro must be /* */: a // comment would swallow the line splice) ----

#define TINYDDP_ELEMENTWISE_KERNELS(X)                                                                     \
  /* y[i] = op(x[i]); x, y contiguous, n elements; a, b the op's parameters (UnaryOp) */                   \
  X(unary, floating, (UnaryOp op, const T* x, T* y, int64_t n, double a = 0.0, double b = 0.0),            \
    (op, x, y, n, a, b))                                                                                   \
  /* out (`shape`) = op(a, b), a and b read through their own strides; int64: add, sub, mul only */       \
  X(binary, numeric,                                                                                       \
    (BinaryOp op, const Dims& shape, const T* a, const Dims& a_strides, const T* b, const Dims& b_strides, \
     T* out),                                                                                              \
    (op, shape, a, a_strides, b, b_strides, out))                                                          \
  /* out (`shape`, bool) = op(a, b), a and b read through their own strides (NaN compares false but ne) */ \
  X(compare, numeric,                                                                                      \
    (CompareOp op, const Dims& shape, const T* a, const Dims& a_strides, const T* b, const Dims& b_strides, \
     bool* out),                                                                                           \
    (op, shape, a, a_strides, b, b_strides, out))                                                          \
  /* dst (`shape`) = src read through src_strides */                                                       \
  X(copy_to_contiguous, any_dtype, (const Dims& shape, const T* src, const Dims& src_strides, T* dst),     \
    (shape, src, src_strides, dst))                                                                        \
  /* dst read through dst_strides = src (`shape`, contiguous) */                                           \
  X(copy_from_contiguous, any_dtype, (const Dims& shape, const T* src, T* dst, const Dims& dst_strides),   \
    (shape, src, dst, dst_strides))                                                                        \
  /* y = x + alpha * z, n elements (the optimizer's and the reducer's hot loop) */                         \
  X(axpy, floating, (const T* x, const T* z, T alpha, T* y, int64_t n), (x, z, alpha, y, n))               \
  /* dst[i] = D(src[i]), n elements */                                                                     \
  X(convert, conversions, (const S* src, D* dst, int64_t n), (src, dst, n))

#define TINYDDP_REDUCE_KERNELS(X)                                                                             \
  /* out (the input's shape, reduced dims set to 1) = sum of x over the dims d where reduce[d] */             \
  X(sum_dims, numeric, (const Dims& shape, const std::vector<bool>& reduce, const T* x, T* out),              \
    (shape, reduce, x, out))                                                                                  \
  /* values, indices (outer, inner) = max of x (outer, size, inner) over `size`; the first maximum wins */    \
  X(max_dim, numeric, (int64_t outer, int64_t size, int64_t inner, const T* x, T* values, int64_t* indices),  \
    (outer, size, inner, x, values, indices))                                                                 \
  /* y = x - log(sum(exp(x))) over `size` of (outer, size, inner), stabilized by subtracting the max first */ \
  X(log_softmax, floating, (int64_t outer, int64_t size, int64_t inner, const T* x, T* y),                    \
    (outer, size, inner, x, y))                                                                               \
  /* out (outer, size, inner) = 1 where indices (outer, inner) == the position along `size`, else 0 */        \
  X(one_hot, floating, (int64_t outer, int64_t size, int64_t inner, const int64_t* indices, T* out),          \
    (outer, size, inner, indices, out))

#define TINYDDP_MATMUL_KERNELS(X)                                                                              \
  /* C (m, n) = op(A) (m, k) @ op(B) (k, n), or C += that when accumulate (C is then read: addmm's bias);  */ \
  /* op(X) = X^T if trans_x; row-major, lda/ldb/ldc the row strides. Without accumulate C is only written */  \
  X(gemm, floating,                                                                                            \
    (bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b,         \
     int64_t ldb, bool accumulate, T* c, int64_t ldc),                                                         \
    (trans_a, trans_b, m, n, k, a, lda, b, ldb, accumulate, c, ldc))

// One pass over a whole list of tensors (tensor i has numels[i] elements). Results are deterministic: fixed
// chunks, per-chunk partial sums added in a fixed order, so the same inputs give the same bits on every run.
#define TINYDDP_MULTI_TENSOR_KERNELS(X)                                                                                \
  /* out[0] = sqrt(sum_i sum_j tensors_i[j]^2), a scalar on the device */                                              \
  X(multi_tensor_l2norm, floating, (const std::vector<const T*>& tensors, const std::vector<int64_t>& numels, T* out), \
    (tensors, numels, out))                                                                                            \
  /* flat[offsets[i] + j] = srcs_i[j] * factor (gradients -> bucket, divided by the world size) */                     \
  X(bucket_pack, floating,                                                                                             \
    (const std::vector<const T*>& srcs, const std::vector<int64_t>& numels, const std::vector<int64_t>& offsets,       \
     T factor, T* flat),                                                                                               \
    (srcs, numels, offsets, factor, flat))                                                                             \
  /* dsts_i[j] = flat[offsets[i] + j] (bucket -> gradients) */                                                         \
  X(bucket_unpack, floating,                                                                                           \
    (const T* flat, const std::vector<int64_t>& offsets, const std::vector<int64_t>& numels,                           \
     const std::vector<T*>& dsts),                                                                                     \
    (flat, offsets, numels, dsts))                                                                                     \
  /* tensors_i *= min(1, max_norm / (norm + 1e-6)), norm = their joint l2 norm, written to total_norm[0] */            \
  X(clip_by_global_norm, floating,                                                                                     \
    (const std::vector<T*>& tensors, const std::vector<int64_t>& numels, double max_norm, T* total_norm),              \
    (tensors, numels, max_norm, total_norm))

#define TINYDDP_KERNELS(X)                                  \
  TINYDDP_ELEMENTWISE_KERNELS(X) TINYDDP_REDUCE_KERNELS(X)  \
  TINYDDP_MATMUL_KERNELS(X) TINYDDP_MULTI_TENSOR_KERNELS(X)

// ---- type sets: each has its template head, its template arguments as a call spells them, and its members ----
// floating: the floating DTypes (f32, f64), for arithmetic.
#define TINYDDP_HEAD_floating template <typename T>
#define TINYDDP_TARGS_floating T
#define TINYDDP_EACH_floating(F, name) F(name, float) F(name, double)
// numeric: the DTypes with an order (f32, f64, i64), for comparisons.
#define TINYDDP_HEAD_numeric template <typename T>
#define TINYDDP_TARGS_numeric T
#define TINYDDP_EACH_numeric(F, name) F(name, float) F(name, double) F(name, int64_t)
// any_dtype: every DType, for kernels that only move data.
#define TINYDDP_HEAD_any_dtype template <typename T>
#define TINYDDP_TARGS_any_dtype T
#define TINYDDP_EACH_any_dtype(F, name) F(name, float) F(name, double) F(name, int64_t) F(name, bool)
// conversions: (S, D) for every ordered pair of distinct DTypes (to bool: x != 0; from bool: 0 or 1).
#define TINYDDP_HEAD_conversions template <typename S, typename D>
#define TINYDDP_TARGS_conversions S, D
#define TINYDDP_EACH_conversions(F, name)                                                        \
  F(name, float, double) F(name, double, float) F(name, int64_t, float) F(name, int64_t, double) \
  F(name, float, int64_t) F(name, double, int64_t) F(name, bool, float) F(name, bool, double)    \
  F(name, bool, int64_t) F(name, float, bool) F(name, double, bool) F(name, int64_t, bool)

// ---- expansions of one entry ----
// The declaration, in the namespace where it is expanded.
#define TINYDDP_DECLARE_KERNEL(name, types, params, args) TINYDDP_HEAD_##types void name params;
// The explicit instantiations for each member of the type set, after the body. decltype gives the declared
// signature (default arguments may not be repeated in an instantiation).
#define TINYDDP_INSTANTIATE_KERNEL(name, types, params, args) TINYDDP_EACH_##types(TINYDDP_INSTANTIATE_ONE, name)
#define TINYDDP_INSTANTIATE_ONE(name, ...) template decltype(name<__VA_ARGS__>) name<__VA_ARGS__>;
// (a, b) -> a, b: splices an entry's params into a longer parameter list.
#define TINYDDP_UNPARENTHESIZE(...) __VA_ARGS__
