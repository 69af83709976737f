#include "kernels/cpu/elementwise.h"

#include <Eigen/Core>
#include <array>
#include <cmath>
#include <type_traits>
#include <vector>

namespace tinyddp::kernels::cpu {

namespace {

template <typename T>
using ConstArrayMap = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>;

// Walks a multi-index over `shape` in row-major order, calling fn(offset_0, offset_1, ...) with each
// operand's element offset. Operands are given by their strides.
template <size_t N, typename Fn>
void for_each_index(const Dims& shape, const std::array<const Dims*, N>& strides, Fn&& fn) {
  const size_t nd = shape.size();
  int64_t total = 1;
  for (int64_t d : shape) total *= d;
  std::array<int64_t, N> off{};
  if (total == 0) return;
  if (nd == 0) {   // a scalar: one element at offset 0
    fn(off);
    return;
  }
  std::vector<int64_t> idx(nd, 0);
  // Innermost dimension in a tight loop; the odometer handles the rest.
  const int64_t inner = nd ? shape[nd - 1] : 1;
  std::array<int64_t, N> inner_stride{};
  for (size_t k = 0; k < N; ++k) inner_stride[k] = nd ? (*strides[k])[nd - 1] : 0;
  for (int64_t done = 0; done < total; done += inner) {
    std::array<int64_t, N> o = off;
    for (int64_t i = 0; i < inner; ++i) {
      fn(o);
      for (size_t k = 0; k < N; ++k) o[k] += inner_stride[k];
    }
    // Advance the odometer over dims [0, nd-1).
    for (size_t d = nd - 1; d-- > 0;) {
      ++idx[d];
      for (size_t k = 0; k < N; ++k) off[k] += (*strides[k])[d];
      if (idx[d] < shape[d]) break;
      for (size_t k = 0; k < N; ++k) off[k] -= (*strides[k])[d] * shape[d];
      idx[d] = 0;
    }
  }
}

}  // namespace

template <typename T>
void unary(UnaryOp op, const T* x, T* y, int64_t n, double a, double b) {
  ConstArrayMap<T> X(x, n);
  Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>> Y(y, n);
  const T ta = static_cast<T>(a), tb = static_cast<T>(b);
  switch (op) {
    // times -1, not Eigen's -X: its AVX negation is 0 - x, which gives +0 for +0 (1.13's neg gives -0)
    case UnaryOp::neg: Y = X * T(-1); break;
    case UnaryOp::exp:
      // Eigen's vectorized double exp clamps its argument at about -709.4, so below that (-inf included) it
      // returns 5.56e-309 instead of the denormal or 0 that std::exp and 1.13's Sleef kernel give (a softmax
      // row masked with -inf kept that mass). Those lanes are redone with std::exp, from a copy of x (y may be x).
      if constexpr (std::is_same_v<T, double>) {
        if ((X < -708.0).any()) {
          const std::vector<double> x_copy(x, x + n);
          Y = X.exp();
          for (int64_t i = 0; i < n; ++i)
            if (x_copy[i] < -708.0) y[i] = std::exp(x_copy[i]);
          break;
        }
      }
      Y = X.exp();
      break;
    case UnaryOp::log: Y = X.log(); break;
    // std::sqrt, correctly rounded as IEEE requires (and PyTorch's kernel is): Eigen's vectorized sqrt under
    // EIGEN_FAST_MATH is an rsqrt estimate plus a Newton step, one ulp off for about a third of all inputs.
    case UnaryOp::sqrt:
      for (int64_t i = 0; i < n; ++i) y[i] = std::sqrt(x[i]);
      break;
    case UnaryOp::abs: Y = X.abs(); break;
    case UnaryOp::relu: Y = X.max(T(0)); break;
    case UnaryOp::tanh: Y = X.tanh(); break;
    // 1 / (1 + e^-x), computed from e^-|x| so that neither branch overflows.
    case UnaryOp::sigmoid:
      for (int64_t i = 0; i < n; ++i) {
        const T e = std::exp(-std::abs(x[i]));
        y[i] = x[i] >= 0 ? T(1) / (T(1) + e) : e / (T(1) + e);
      }
      break;
    case UnaryOp::sign:
      for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0 ? T(1) : (x[i] < 0 ? T(-1) : T(0));
      break;
    case UnaryOp::erf:
      for (int64_t i = 0; i < n; ++i) y[i] = std::erf(x[i]);
      break;
    case UnaryOp::sin: Y = X.sin(); break;
    case UnaryOp::cos: Y = X.cos(); break;
    case UnaryOp::log1p: Y = X.log1p(); break;
    case UnaryOp::expm1: Y = X.expm1(); break;
    case UnaryOp::floor: Y = X.floor(); break;
    case UnaryOp::ceil: Y = X.ceil(); break;
    case UnaryOp::trunc:
      for (int64_t i = 0; i < n; ++i) y[i] = std::trunc(x[i]);
      break;
    case UnaryOp::round:
      for (int64_t i = 0; i < n; ++i) y[i] = std::nearbyint(x[i]);
      break;
    // The exponents PyTorch's CPU pow computes with products, divisions and sqrt instead of std::pow (whose
    // result may be an ulp off the correctly rounded one), in its order, so the results are its bits.
    case UnaryOp::pow:
      if (a == 2.0) Y = X.square();
      else if (a == 3.0) Y = X.square() * X;
      else if (a == 1.0) Y = X;
      else if (a == 0.0) Y.setConstant(T(1));
      else if (a == -1.0) Y = T(1) / X;
      else if (a == -2.0) Y = T(1) / X.square();
      else if (a == 0.5) for (int64_t i = 0; i < n; ++i) y[i] = std::sqrt(x[i]);
      else if (a == -0.5) for (int64_t i = 0; i < n; ++i) y[i] = T(1) / std::sqrt(x[i]);
      else for (int64_t i = 0; i < n; ++i) y[i] = std::pow(x[i], ta);
      break;
    case UnaryOp::add_scalar: Y = X + ta; break;
    case UnaryOp::mul_scalar: Y = X * ta; break;
    case UnaryOp::clamp: Y = X.max(ta).min(tb); break;
    case UnaryOp::in_range: Y = (X >= ta && X <= tb).template cast<T>(); break;
    case UnaryOp::gt_scalar: Y = (X > ta).template cast<T>(); break;
    case UnaryOp::fill: Y.setConstant(ta); break;
  }
}

template <typename T>
void binary(BinaryOp op, const Dims& shape, const T* a, const Dims& a_strides, const T* b, const Dims& b_strides,
            T* out) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  // Fast path: both operands contiguous with the output's shape.
  bool a_dense = true, b_dense = true;
  int64_t expected = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    if (shape[i] != 1) {
      a_dense &= a_strides[i] == expected;
      b_dense &= b_strides[i] == expected;
    }
    expected *= shape[i];
  }
  if (a_dense && b_dense && std::is_integral_v<T>) {   // apply_binary's wrapping integer arithmetic (no UB)
    for (int64_t i = 0; i < n; ++i) out[i] = apply_binary(op, a[i], b[i]);
    return;
  }
  if (a_dense && b_dense) {
    ConstArrayMap<T> A(a, n), B(b, n);
    Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>> O(out, n);
    switch (op) {
      case BinaryOp::add: O = A + B; return;
      case BinaryOp::sub: O = A - B; return;
      case BinaryOp::mul: O = A * B; return;
      case BinaryOp::div: O = A / B; return;
      case BinaryOp::eq: O = (A == B).template cast<T>(); return;
      // One pass per operation through `out`, so that no multiply and subtract fuse (mul_rounded).
      case BinaryOp::tanh_backward: O = B * B; O = T(1) - O; O = A * O; return;
      case BinaryOp::sigmoid_backward: O = T(1) - B; O = B * O; O = A * O; return;
      case BinaryOp::relu_backward: O = (B > T(0)).select(A, T(0)); return;
      case BinaryOp::pow:   // std::pow element by element, as the strided path below
        for (int64_t i = 0; i < n; ++i) out[i] = apply_binary(op, a[i], b[i]);
        return;
    }
  }
  const Dims out_strides = [&] {
    Dims s(shape.size());
    int64_t acc = 1;
    for (size_t i = shape.size(); i-- > 0;) { s[i] = acc; acc *= shape[i]; }
    return s;
  }();
  for_each_index<3>(shape, {&a_strides, &b_strides, &out_strides}, [&](const std::array<int64_t, 3>& o) {
    out[o[2]] = apply_binary(op, a[o[0]], b[o[1]]);
  });
}

template <typename T>
void compare(CompareOp op, const Dims& shape, const T* a, const Dims& a_strides, const T* b, const Dims& b_strides,
             bool* out) {
  Dims out_strides(shape.size());
  int64_t acc = 1;
  for (size_t i = shape.size(); i-- > 0;) { out_strides[i] = acc; acc *= shape[i]; }
  for_each_index<3>(shape, {&a_strides, &b_strides, &out_strides}, [&](const std::array<int64_t, 3>& o) {
    out[o[2]] = apply_compare(op, a[o[0]], b[o[1]]);
  });
}

template <typename T>
void copy_to_contiguous(const Dims& shape, const T* src, const Dims& src_strides, T* dst) {
  int64_t i = 0;
  for_each_index<1>(shape, {&src_strides}, [&](const std::array<int64_t, 1>& o) { dst[i++] = src[o[0]]; });
}

template <typename T>
void copy_from_contiguous(const Dims& shape, const T* src, T* dst, const Dims& dst_strides) {
  int64_t i = 0;
  for_each_index<1>(shape, {&dst_strides}, [&](const std::array<int64_t, 1>& o) { dst[o[0]] = src[i++]; });
}

template <typename T>
void axpy(const T* x, const T* z, T alpha, T* y, int64_t n) {
  Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>> Y(y, n);
  Y = ConstArrayMap<T>(x, n) + alpha * ConstArrayMap<T>(z, n);
}

template <typename S, typename D>
void convert(const S* src, D* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<D>(src[i]);
}

TINYDDP_ELEMENTWISE_KERNELS(TINYDDP_INSTANTIATE_KERNEL)

}  // namespace tinyddp::kernels::cpu
