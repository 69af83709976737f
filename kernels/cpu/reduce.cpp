#include "kernels/cpu/reduce.h"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <type_traits>

#include "kernels/cpu/cascade_sum.h"

namespace tinyddp::kernels::cpu {

template <typename T>
void sum_dims(const std::vector<int64_t>& shape, const std::vector<bool>& reduce, const T* x, T* out) {
  if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
    // PyTorch's integer sums wrap on overflow; a signed overflow is undefined in C++. The unsigned type of the
    // same width adds the same two's-complement bits, wrapping, and may alias T's storage.
    using U = std::make_unsigned_t<T>;
    sum_dims<U>(shape, reduce, reinterpret_cast<const U*>(x), reinterpret_cast<U*>(out));
    return;
  }
  const size_t nd = shape.size();
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  // Collapse into alternating runs of kept/reduced dims: (k0, r0, k1, r1, ...). The two common cases,
  // "everything" and "one run", become Eigen reductions.
  bool all = true, none = true;
  for (size_t d = 0; d < nd; ++d) (reduce[d] ? none : all) = false;
  int64_t out_n = 1;
  for (size_t d = 0; d < nd; ++d)
    if (!reduce[d]) out_n *= shape[d];
  if (n == 0) {
    std::fill(out, out + out_n, T(0));
    return;
  }
  if (all) {
    if constexpr (std::is_floating_point_v<T>)
      out[0] = cascade::inner_sum(x, n);   // Note [ATen's cascade sum] (kernels/cpu/cascade_sum.h)
    else
      out[0] = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>(x, n).sum();
    return;
  }
  if (none) {
    std::copy(x, x + n, out);
    return;
  }
  // General case. Adjacent dims of one kind merge (size-1 dims drop out), so the innermost run is a whole
  // contiguous row: a kept row is added into its output row (vectorized), a reduced row is summed into its
  // one output. Each output still adds its inputs one by one in the input's order, starting from 0, so the
  // result is bit for bit that of an element-by-element walk (not 1.13's order, which floating-point
  // matrices above take).
  std::vector<int64_t> runs;         // merged sizes
  std::vector<bool> run_reduced;
  for (size_t d = 0; d < nd; ++d) {
    if (shape[d] == 1) continue;
    if (!runs.empty() && run_reduced.back() == reduce[d]) {
      runs.back() *= shape[d];
    } else {
      runs.push_back(shape[d]);
      run_reduced.push_back(reduce[d]);
    }
  }
  std::fill(out, out + out_n, T(0));
  if (runs.empty()) {   // every dim has size 1
    out[0] += x[0];
    return;
  }
  if constexpr (std::is_floating_point_v<T>) {
    // The two reductions of a matrix, in 1.13's order (Note [ATen's cascade sum]): its rows (kept, reduced)
    // and its columns (reduced, kept). Three runs or more keep the element-by-element walk below.
    if (runs.size() == 1 && run_reduced[0]) {   // the kept dims all have size 1
      out[0] = cascade::inner_sum(x, runs[0]);
      return;
    }
    if (runs.size() == 2 && run_reduced[1]) {
      for (int64_t r = 0; r < runs[0]; ++r) out[r] = cascade::inner_sum(x + r * runs[1], runs[1]);
      return;
    }
    if (runs.size() == 2 && run_reduced[0]) {
      cascade::outer_sum(x, runs[0], runs[1], out);
      return;
    }
  }
  const size_t m = runs.size();
  std::vector<int64_t> out_strides(m);   // 0 on reduced runs
  int64_t acc = 1;
  for (size_t d = m; d-- > 0;) {
    out_strides[d] = run_reduced[d] ? 0 : acc;
    if (!run_reduced[d]) acc *= runs[d];
  }
  using Row = Eigen::Array<T, Eigen::Dynamic, 1>;
  const int64_t row = runs[m - 1];
  const bool row_kept = !run_reduced[m - 1];
  std::vector<int64_t> idx(m, 0);
  int64_t o = 0;
  for (int64_t i = 0; i < n; i += row) {
    if (row_kept) {
      Eigen::Map<Row>(out + o, row) += Eigen::Map<const Row>(x + i, row);
    } else {
      T s = out[o];
      for (int64_t k = 0; k < row; ++k) s += x[i + k];
      out[o] = s;
    }
    for (size_t d = m - 1; d-- > 0;) {   // the next row: an odometer over the outer runs
      ++idx[d];
      o += out_strides[d];
      if (idx[d] < runs[d]) break;
      o -= out_strides[d] * runs[d];
      idx[d] = 0;
    }
  }
}

template <typename T>
void max_dim(int64_t outer, int64_t size, int64_t inner, const T* x, T* values, int64_t* indices) {
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const T* p = x + o * size * inner + i;
      T best = p[0];
      int64_t arg = 0;
      // The first maximum, or the first NaN (NaN propagates, as in PyTorch): the scan stops at a NaN.
      for (int64_t s = 1; s < size && !std::isnan(best); ++s)
        if (p[s * inner] > best || std::isnan(p[s * inner])) {
          best = p[s * inner];
          arg = s;
        }
      values[o * inner + i] = best;
      indices[o * inner + i] = arg;
    }
}

template <typename T>
void log_softmax(int64_t outer, int64_t size, int64_t inner, const T* x, T* y) {
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const T* p = x + o * size * inner + i;
      T* q = y + o * size * inner + i;
      T m = p[0];
      for (int64_t s = 1; s < size; ++s) m = std::max(m, p[s * inner]);
      // 1.13's order (_vec_log_softmax_lastdim, _vec_log_softmax): the exponentials summed as vectors along a
      // last dim of a vector or more (cascade::lane_sum), else one by one; then (x - max) - log(sum), which is
      // not x - (max + log(sum)) in floating point.
      T sum = 0;
      if (inner == 1 && size >= cascade::kLanes<T>) {
        sum = cascade::lane_sum<T>(size, [&](int64_t s) { return std::exp(p[s] - m); });
      } else {
        for (int64_t s = 0; s < size; ++s) sum += std::exp(p[s * inner] - m);
      }
      const T log_sum = std::log(sum);
      for (int64_t s = 0; s < size; ++s) q[s * inner] = (p[s * inner] - m) - log_sum;
    }
}

template <typename T>
void one_hot(int64_t outer, int64_t size, int64_t inner, const int64_t* indices, T* out) {
  std::fill(out, out + outer * size * inner, T(0));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) out[(o * size + indices[o * inner + i]) * inner + i] = T(1);
}

TINYDDP_REDUCE_KERNELS(TINYDDP_INSTANTIATE_KERNEL)

}  // namespace tinyddp::kernels::cpu
