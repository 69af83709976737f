// The elementwise expressions of ReduceOp, in one place for every host-side reduction (the thread backend's
// allreduce, the mpi backend's shared-memory one, the composed collectives): folding ranks left to right with
// them is what makes those backends give the same bits.
#pragma once

#include <algorithm>
#include <cstdint>

#include "dist/process_group.h"

namespace tinyddp::dist {

template <typename T>
T combine(T a, T b, ReduceOp op) {
  switch (op) {
    case ReduceOp::sum: return a + b;
    case ReduceOp::product: return a * b;
    case ReduceOp::min: return std::min(a, b);
    case ReduceOp::max: return std::max(a, b);
  }
  return a;
}

// acc[i] = combine(acc[i], src[i], op) for i < n; the switch outside the loops, so that each loop vectorizes.
template <typename T>
void combine_into(T* acc, const T* src, int64_t n, ReduceOp op) {
  switch (op) {
    case ReduceOp::sum: for (int64_t i = 0; i < n; ++i) acc[i] = acc[i] + src[i]; break;
    case ReduceOp::product: for (int64_t i = 0; i < n; ++i) acc[i] = acc[i] * src[i]; break;
    case ReduceOp::min: for (int64_t i = 0; i < n; ++i) acc[i] = std::min(acc[i], src[i]); break;
    case ReduceOp::max: for (int64_t i = 0; i < n; ++i) acc[i] = std::max(acc[i], src[i]); break;
  }
}

}  // namespace tinyddp::dist
