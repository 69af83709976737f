// The order 1.13's CPU kernels leave elements in, index for index: sort (std::sort, or std::stable_sort when asked,
// of (value, index) pairs), topk (std::partial_sort, or std::nth_element then std::sort of the first k - 1), kthvalue
// (ATen's own quick_select_template) and mode (std::sort by value).
//
// Note [Why the order of equal elements needs 1.13's algorithms]: values alone never differ between orders, but
// among equal values these algorithms are not stable, so the index a script sees (argsort of labels with repeats,
// topk of a row of zeros, the mode's index) depends on each algorithm's exact steps. tinyddp calls the same
// standard library algorithms with the same comparators: GCC's libstdc++, which Debian's 1.13 was built with, and
// whose introsort/introselect have not changed in many releases. NaN orders as the largest value, as 1.13's
// comparators put it.
//
// These are host computations without gradient (the indices are int64); the Python layer gathers the values by
// them (python/tinyddp/_tensor_ops.py), so the values carry the input's gradient.
#include <algorithm>
#include <cmath>
#include <utility>

#include "engine/ops/op_utils.h"

namespace tinyddp {

using namespace detail;

namespace {

template <typename T>
bool is_nan(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::isnan(v);
  } else {
    return false;
  }
}

template <typename T>
using Pair = std::pair<T, int64_t>;   // (value, its index along the line)

// 1.13's KeyValueCompAsc / KeyValueCompDesc (aten/src/ATen/native/cpu/SortingKernel.cpp), also topk's comparators.
template <typename T>
bool less_nan_last(const Pair<T>& a, const Pair<T>& b) {
  return (!is_nan(a.first) && is_nan(b.first)) || a.first < b.first;
}
template <typename T>
bool greater_nan_first(const Pair<T>& a, const Pair<T>& b) {
  return (is_nan(a.first) && !is_nan(b.first)) || a.first > b.first;
}

// 1.13's quick_select_template (aten/src/ATen/native/SortingUtils.h): arr partitioned so that arr[k] is the (k+1)-th
// smallest under gt (greater, NaN largest), as kthvalue leaves it.
template <typename T>
void quick_select(std::vector<Pair<T>>& arr, int64_t k) {
  auto gt = [](T x, T y) { return (is_nan(x) && !is_nan(y)) || x > y; };
  int64_t L = 0, R = static_cast<int64_t>(arr.size()) - 1;
  while (true) {
    if (R <= L) return;
    if (R == L + 1) {
      if (gt(arr[L].first, arr[R].first)) std::swap(arr[L], arr[R]);
      return;
    }
    const int64_t P = L + (R - L) / 2;   // median of three for the pivot
    std::swap(arr[P], arr[L + 1]);
    if (gt(arr[L + 1].first, arr[R].first)) std::swap(arr[L + 1], arr[R]);
    if (gt(arr[L].first, arr[R].first)) std::swap(arr[L], arr[R]);
    if (gt(arr[L + 1].first, arr[L].first)) std::swap(arr[L + 1], arr[L]);
    int64_t i = L + 1, j = R;
    const T piv = arr[L].first;
    while (true) {
      do ++i; while (gt(piv, arr[i].first));
      do --j; while (gt(arr[j].first, piv));
      if (j < i) break;
      std::swap(arr[i], arr[j]);
    }
    std::swap(arr[L], arr[j]);
    if (j <= k) L = i;
    if (j >= k) R = j - 1;
  }
}

// Runs line_fn(pairs, out) over every line of x along dim (x's values with their indices along the line) and
// writes `out_size` indices per line: an int64 tensor of x's shape with dim's size out_size (a 0-dim x is one
// line of one element, and gives a 0-dim result).
template <typename LineFn>
Tensor per_line(const Tensor& x, int64_t dim, int64_t out_size, const char* op, LineFn line_fn) {
  check_defined(x, op);
  const int64_t d = wrap_dim(dim, x.dim());
  const int64_t last = std::max<int64_t>(x.dim() - 1, 0);
  // bools order as their 0/1 values, so they are read as int64
  const Tensor work = x.dtype() == DType::b8 ? to_dtype(x.detach(), DType::i64) : x.detach();
  const Tensor moved = x.dim() ? transpose(work, d, last).contiguous() : reshape(work, {1});
  const int64_t size = moved.shape().back();
  const int64_t lines = size ? moved.numel() / size : 0;
  Shape out_shape = moved.shape();
  out_shape.back() = out_size;
  std::vector<int64_t> out(static_cast<size_t>(numel_of(out_shape)));
  if (out_size > 0 && lines > 0) {
    dispatch_numeric(work.dtype(), op, [&]<typename T>() {
      const std::vector<T> values = moved.to_vector<T>();
      std::vector<Pair<T>> line(static_cast<size_t>(size));
      for (int64_t r = 0; r < lines; ++r) {
        for (int64_t j = 0; j < size; ++j) line[j] = {values[r * size + j], j};
        line_fn(line);
        for (int64_t j = 0; j < out_size; ++j) out[r * out_size + j] = line[j].second;
      }
    });
  }
  Tensor result = from_vector(out, out_shape, DType::i64);
  if (x.dim() == 0) return to_device(reshape(result, {}), x.device());
  return to_device(d == last ? result : transpose(result, d, last).contiguous(), x.device());
}

}  // namespace

Tensor sort_indices(const Tensor& x, int64_t dim, bool descending, bool stable) {
  const int64_t size = x.dim() ? x.shape()[wrap_dim(dim, x.dim())] : 1;
  return per_line(x, dim, size, "sort", [&]<typename T>(std::vector<Pair<T>>& line) {
    auto comp = descending ? greater_nan_first<T> : less_nan_last<T>;
    if (stable) {
      std::stable_sort(line.begin(), line.end(), comp);
    } else {
      std::sort(line.begin(), line.end(), comp);
    }
  });
}

Tensor topk_indices(const Tensor& x, int64_t k, int64_t dim, bool largest, bool sorted) {
  // 1.13's topk_impl_loop (aten/src/ATen/native/TopKImpl.h)
  return per_line(x, dim, k, "topk", [&]<typename T>(std::vector<Pair<T>>& line) {
    const int64_t n = static_cast<int64_t>(line.size());
    auto comp = largest ? greater_nan_first<T> : less_nan_last<T>;
    if (k * 64 <= n) {
      std::partial_sort(line.begin(), line.begin() + k, line.end(), comp);
    } else {
      std::nth_element(line.begin(), line.begin() + k - 1, line.end(), comp);
      if (sorted) std::sort(line.begin(), line.begin() + k - 1, comp);
    }
  });
}

Tensor kthvalue_indices(const Tensor& x, int64_t k, int64_t dim) {
  return per_line(x, dim, 1, "kthvalue", [&]<typename T>(std::vector<Pair<T>>& line) {
    quick_select(line, k - 1);
    line[0] = line[k - 1];
  });
}

Tensor mode_indices(const Tensor& x, int64_t dim) {
  // 1.13's mode kernel (aten/src/ATen/native/cpu/TensorCompare... mode): sort by value, then the last index of the
  // first longest run of equal values (a NaN is a run of one)
  return per_line(x, dim, 1, "mode", [&]<typename T>(std::vector<Pair<T>>& line) {
    std::sort(line.begin(), line.end(), [](const Pair<T>& a, const Pair<T>& b) { return a.first < b.first; });
    const size_t n = line.size();
    int64_t best = 0, best_freq = 0, freq = 0;
    for (size_t i = 0; i < n; ++i) {
      ++freq;
      if (i == n - 1 || line[i].first != line[i + 1].first) {
        if (freq > best_freq) {
          best = line[i].second;
          best_freq = freq;
        }
        freq = 0;
      }
    }
    line[0].second = best;
  });
}

}  // namespace tinyddp
