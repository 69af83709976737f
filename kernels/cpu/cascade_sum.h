// Floating-point sums in PyTorch 1.13's CPU order (aten/src/ATen/native/cpu/SumKernel.cpp, cascade_sum), so that
// a sum or a mean, and every loss and gradient built on one, rounds as 1.13's does, bit for bit.
//
// Note [ATen's cascade sum]
//   ATen never adds a row left to right. Its building block, multi_row_sum, keeps 4 levels of accumulators:
//   level 0 takes 2^p consecutive elements (p = max(4, ceil_log2(n) / 4), so 16 for any n below 2^20), then
//   is added into level 1 and cleared, level 1 into level 2 every 2^p of those, and so on; the leftovers
//   go into level 0, and the levels are summed 1, 2, 3 into level 0 at the end. row_sum splits a row into 4
//   interleaved columns (element i goes to column i % 4, the ILP factor), sums the columns with
//   multi_row_sum, adds the elements past the last full group of 4 into column 0, then columns 1, 2, 3 into
//   column 0. A contiguous row of at least one vector (8 floats or 4 doubles: the AVX2 kernels a 1.13 CPU
//   build runs by default) is summed as vectors: row_sum over whole vectors, lane by lane; the elements
//   past the last whole vector are added one by one from 0, then the lanes in order. A reduction over an
//   outer dim (columns of a row-major matrix) sums each column over the rows: with multi_row_sum directly
//   for the columns in whole groups (32 columns on the vector path, 4 on the scalar one), with row_sum for
//   the rest. The result is added into a zero-filled output (so -0 sums to +0, as there).
//   Not modelled: 1.13 splits a reduction of 32768 elements or more across its threads.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace tinyddp::kernels::cpu::cascade {

// The AVX2 vector width of 1.13's default CPU kernels: 8 floats, 4 doubles.
template <typename T>
inline constexpr int64_t kLanes = 32 / static_cast<int64_t>(sizeof(T));

// One AVX2 register's worth of T, added lane by lane (what Vectorized<T>::operator+ does). A GCC vector type,
// not an array: the lanes' adds are the same IEEE adds either way, but GCC left multi_row_sum's 4 x 4
// accumulators of std::array<float, 8> scalar: a float row of 1,000-100,000 elements summed at 8-11 GB/s,
// now at 63-125 (in cache; 4 MiB from memory 7 -> 25 GB/s).
template <typename T>
using Lanes [[gnu::vector_size(32)]] = T;

template <typename T>
Lanes<T> load_lanes(const T* p) {
  Lanes<T> r;
  std::memcpy(&r, p, sizeof r);
  return r;
}

// c10's CeilLog2 (1 for n <= 2).
inline int64_t ceil_log2(int64_t n) {
  if (n <= 2) return 1;
  return 64 - std::countl_zero(static_cast<uint64_t>(n - 1));
}

// multi_row_sum: rows columns summed over `size` steps; load(i, k) is step i's value for column k.
template <typename Acc, int64_t kRows, typename Load>
std::array<Acc, kRows> multi_row_sum(int64_t size, Load load) {
  constexpr int64_t kLevels = 4;
  const int64_t level_power = std::max<int64_t>(4, ceil_log2(size) / kLevels);
  const int64_t level_step = int64_t(1) << level_power;
  const int64_t level_mask = level_step - 1;
  Acc acc[kLevels][kRows] = {};
  int64_t i = 0;
  while (i + level_step <= size) {
    for (int64_t j = 0; j < level_step; ++j, ++i)
      for (int64_t k = 0; k < kRows; ++k) acc[0][k] += load(i, k);
    for (int64_t j = 1; j < kLevels; ++j) {
      for (int64_t k = 0; k < kRows; ++k) {
        acc[j][k] += acc[j - 1][k];
        acc[j - 1][k] = Acc{};
      }
      if ((i & (level_mask << (j * level_power))) != 0) break;
    }
  }
  for (; i < size; ++i)
    for (int64_t k = 0; k < kRows; ++k) acc[0][k] += load(i, k);
  for (int64_t j = 1; j < kLevels; ++j)
    for (int64_t k = 0; k < kRows; ++k) acc[0][k] += acc[j][k];
  std::array<Acc, kRows> out;
  for (int64_t k = 0; k < kRows; ++k) out[k] = acc[0][k];
  return out;
}

// row_sum: `size` values, load(i) the i-th, in 4 interleaved columns.
template <typename Acc, typename Load>
Acc row_sum(int64_t size, Load load) {
  constexpr int64_t kIlp = 4;
  const int64_t size_ilp = size / kIlp;
  std::array<Acc, kIlp> partial =
      multi_row_sum<Acc, kIlp>(size_ilp, [&](int64_t i, int64_t k) { return load(i * kIlp + k); });
  for (int64_t i = size_ilp * kIlp; i < size; ++i) partial[0] += load(i);
  for (int64_t k = 1; k < kIlp; ++k) partial[0] += partial[k];
  return partial[0];
}

// The sum of a contiguous row x[0, n) (vectorized_inner_sum, or scalar_inner_sum below one vector).
template <typename T>
T inner_sum(const T* x, int64_t n) {
  static_assert(std::is_floating_point_v<T>);
  T total;
  if (n >= kLanes<T>) {
    const int64_t vecs = n / kLanes<T>;
    const Lanes<T> acc = row_sum<Lanes<T>>(vecs, [&](int64_t i) { return load_lanes(x + i * kLanes<T>); });
    total = T(0);
    for (int64_t k = vecs * kLanes<T>; k < n; ++k) total += x[k];
    for (int64_t l = 0; l < kLanes<T>; ++l) total += acc[l];
  } else {
    total = row_sum<T>(n, [&](int64_t i) { return x[i]; });
  }
  T out = T(0);   // stored into a zero-filled output
  out += total;
  return out;
}

// out[c0 .. c0 + kCols) of outer_sum below: multi_row_sum over kCols adjacent columns at once. Each column's
// accumulators are its own, so the bits are those of summing the columns one at a time; the rows are read
// contiguously, kCols elements per step, which the compiler vectorizes.
template <typename T, int64_t kCols>
void outer_sum_group(const T* x, int64_t rows, int64_t cols, int64_t c0, T* out) {
  const std::array<T, kCols> s =
      multi_row_sum<T, kCols>(rows, [&](int64_t r, int64_t k) { return x[r * cols + c0 + k]; });
  for (int64_t k = 0; k < kCols; ++k) {
    out[c0 + k] = T(0);   // stored into a zero-filled output
    out[c0 + k] += s[k];
  }
}

// out[c] = sum over r of x[r * cols + c], for a row-major (rows, cols) x (vectorized_outer_sum, or
// scalar_outer_sum below one vector of columns): the columns in whole groups (4 vectors of columns, or 4
// columns) by multi_row_sum, the rest one by one with row_sum.
template <typename T>
void outer_sum(const T* x, int64_t rows, int64_t cols, T* out) {
  static_assert(std::is_floating_point_v<T>);
  constexpr int64_t kVectorGroup = 4 * kLanes<T>, kScalarGroup = 4;
  int64_t c = 0;
  if (cols >= kLanes<T>)
    for (; c + kVectorGroup <= cols; c += kVectorGroup) outer_sum_group<T, kVectorGroup>(x, rows, cols, c, out);
  else
    for (; c + kScalarGroup <= cols; c += kScalarGroup) outer_sum_group<T, kScalarGroup>(x, rows, cols, c, out);
  for (; c < cols; ++c) {
    out[c] = T(0);
    out[c] += row_sum<T>(rows, [&](int64_t r) { return x[r * cols + c]; });
  }
}

// ATen's vec::map_reduce_all with + (softmax's sum of exponentials along a contiguous last dim of at least one
// vector): value(i) for i in [0, n) accumulated lane by lane (element i into lane i % lanes; the last, partial
// vector only into its first lanes), then the lanes reduced as vec_reduce_all does: for 8 floats by AVX2's
// shuffle tree, ((l0 + l4) + (l2 + l6)) + ((l1 + l5) + (l3 + l7)); for 4 doubles in lane order.
template <typename T, typename Value>
T lane_sum(int64_t n, Value value) {
  constexpr int64_t L = kLanes<T>;
  std::array<T, L> acc;
  for (int64_t l = 0; l < L; ++l) acc[l] = value(l);
  int64_t d = L;
  for (; d < n - n % L; d += L)
    for (int64_t l = 0; l < L; ++l) acc[l] += value(d + l);
  for (int64_t l = 0; d + l < n; ++l) acc[l] += value(d + l);
  if constexpr (L == 8) {
    for (int64_t shift : {4, 2, 1}) {
      std::array<T, L> next;
      for (int64_t l = 0; l < L; ++l) next[l] = acc[l] + acc[l ^ shift];
      acc = next;
    }
    return acc[0];
  } else {
    T total = acc[0];
    for (int64_t l = 1; l < L; ++l) total += acc[l];
    return total;
  }
}

}  // namespace tinyddp::kernels::cpu::cascade
