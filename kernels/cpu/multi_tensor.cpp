// Multi-tensor kernels on host pointers (contracts: TINYDDP_MULTI_TENSOR_KERNELS in kernels/contract.h).
//
// Note [Deterministic multi-tensor norm]
// The sum of squares is cut into fixed pieces whose boundaries depend only on the tensors' numels, never on
// addresses, thread counts or timing:
//   - each tensor is cut into chunks of kChunkElems elements (the last chunk of a tensor may be shorter);
//   - inside a chunk, element j goes to lane j % kLanes of a kLanes-wide accumulator (a fixed-size Eigen array:
//     SIMD registers); the lanes are added by a fixed tree, then the tail (n % kLanes elements) in order;
//   - the chunks' partial sums are added in (tensor, chunk) order.
// So the same values give the same bits, whatever the buffers' alignment (Eigen's reductions peel to the
// pointer's alignment first, which would make the order, and the bits, depend on the address). float32
// accumulates in float32, as the CUDA kernel does; float64 in float64.
#include "kernels/cpu/multi_tensor.h"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstring>

#include "base/error.h"
#include "kernels/multi_tensor_checks.h"

namespace tinyddp::kernels::cpu {
namespace {

// 64 Ki elements (256 KiB of float32): big enough that the per-chunk bookkeeping is noise, small enough that a
// later multi-threaded version has hundreds of chunks to share out on a ResNet-50-sized list (25M / 64Ki = 381).
constexpr int64_t kChunkElems = int64_t{1} << 16;

// Four 256-bit registers' worth of lanes (32 floats / 16 doubles): enough independent adds to hide the FMA
// latency when the data sits in cache; memory-bound lists need far fewer.
template <typename T>
constexpr int kLanes = 128 / static_cast<int>(sizeof(T));

constexpr const char* kBuffer = "buffer";   // what a valid pointer is here, for check_multi_tensor_entry

// Sum of x[j]^2 over one chunk, lane by lane (Note [Deterministic multi-tensor norm]).
// Adds the lanes by a fixed tree: lane l += lane l + W/2, halving W down to 1 (sizes known at compile time, so
// it unrolls into a few vector adds).
template <typename T, int W>
T lane_tree_sum(const Eigen::Array<T, W, 1>& lanes) {
  if constexpr (W == 1) {
    return lanes[0];
  } else {
    const Eigen::Array<T, W / 2, 1> half = lanes.template head<W / 2>() + lanes.template tail<W / 2>();
    return lane_tree_sum<T, W / 2>(half);
  }
}

// The accumulator is a fixed-size Eigen array: its lane-wise += compiles to SIMD multiply-adds on unaligned
// loads, lane l always holding the elements j < n - n % kLanes with j % kLanes == l, whatever x's alignment.
// It starts from the first group's squares rather than from zero (zeroing a stack array costs as much as
// summing a 256-element tensor).
template <typename T>
T chunk_sum_of_squares(const T* x, int64_t n) {
  constexpr int L = kLanes<T>;
  using Lanes = Eigen::Array<T, L, 1>;
  T sum = 0;
  int64_t j = 0;
  if (n >= L) {
    Lanes acc = Eigen::Map<const Lanes>(x).square();
    for (j = L; j + L <= n; j += L) acc += Eigen::Map<const Lanes>(x + j).square();
    sum = lane_tree_sum(acc);
  }
  for (; j < n; ++j) sum += x[j] * x[j];   // the tail (< kLanes elements), in order
  return sum;
}

template <typename T>
T sum_of_squares(const std::vector<const T*>& tensors, const std::vector<int64_t>& numels) {
  // The partials are added as they are produced, which is the same fixed (tensor, chunk) order.
  T total = 0;
  for (size_t i = 0; i < tensors.size(); ++i)
    for (int64_t begin = 0; begin < numels[i]; begin += kChunkElems)
      total += chunk_sum_of_squares(tensors[i] + begin, std::min(kChunkElems, numels[i] - begin));
  return total;
}

}  // namespace

template <typename T>
void multi_tensor_l2norm(const std::vector<const T*>& tensors, const std::vector<int64_t>& numels, T* out) {
  check_multi_tensor_lists(tensors.size(), numels, "tensors", "multi_tensor_l2norm");
  for (size_t i = 0; i < tensors.size(); ++i)
    check_multi_tensor_entry(tensors[i], numels[i], i, "multi_tensor_l2norm", kBuffer);
  TINYDDP_CHECK(out != nullptr, "multi_tensor_l2norm: out is null; pass a buffer for one element.");
  out[0] = std::sqrt(sum_of_squares(tensors, numels));
}

template <typename T>
void bucket_pack(const std::vector<const T*>& srcs, const std::vector<int64_t>& numels,
                 const std::vector<int64_t>& offsets, T factor, T* flat) {
  check_multi_tensor_lists(srcs.size(), numels, "srcs", "bucket_pack");
  TINYDDP_CHECK(offsets.size() == numels.size(), "bucket_pack: expected one offset per tensor, got ",
                offsets.size(), " offsets and ", numels.size(), " numels.");
  for (size_t i = 0; i < srcs.size(); ++i) {
    check_multi_tensor_entry(srcs[i], numels[i], i, "bucket_pack", kBuffer);
    TINYDDP_CHECK(offsets[i] >= 0, "bucket_pack: offsets[", i, "] is ", offsets[i], "; offsets must be >= 0.");
    TINYDDP_CHECK(flat != nullptr || numels[i] == 0, "bucket_pack: flat is null; pass the bucket's buffer.");
  }
  for (size_t i = 0; i < srcs.size(); ++i) {
    const T* src = srcs[i];
    T* dst = flat + offsets[i];
    for (int64_t j = 0; j < numels[i]; ++j) dst[j] = src[j] * factor;   // vectorized by the compiler
  }
}

template <typename T>
void bucket_unpack(const T* flat, const std::vector<int64_t>& offsets, const std::vector<int64_t>& numels,
                   const std::vector<T*>& dsts) {
  check_multi_tensor_lists(dsts.size(), numels, "dsts", "bucket_unpack");
  TINYDDP_CHECK(offsets.size() == numels.size(), "bucket_unpack: expected one offset per tensor, got ",
                offsets.size(), " offsets and ", numels.size(), " numels.");
  for (size_t i = 0; i < dsts.size(); ++i) {
    check_multi_tensor_entry(dsts[i], numels[i], i, "bucket_unpack", kBuffer);
    TINYDDP_CHECK(offsets[i] >= 0, "bucket_unpack: offsets[", i, "] is ", offsets[i], "; offsets must be >= 0.");
    TINYDDP_CHECK(flat != nullptr || numels[i] == 0, "bucket_unpack: flat is null; pass the bucket's buffer.");
  }
  for (size_t i = 0; i < dsts.size(); ++i)
    if (numels[i] > 0) std::memcpy(dsts[i], flat + offsets[i], static_cast<size_t>(numels[i]) * sizeof(T));
}

template <typename T>
void clip_by_global_norm(const std::vector<T*>& tensors, const std::vector<int64_t>& numels, double max_norm,
                         T* total_norm) {
  TINYDDP_CHECK(std::isfinite(max_norm) && max_norm > 0, "clip_by_global_norm: max_norm must be a finite number > 0, got ",
                max_norm, ".");
  const std::vector<const T*> inputs(tensors.begin(), tensors.end());
  multi_tensor_l2norm(inputs, numels, total_norm);
  // PyTorch's clip_grad_norm_: coef = max_norm / (norm + 1e-6), clamped to at most 1, in the tensors' dtype.
  // coef >= 1 leaves the tensors untouched (x * 1 == x), so that pass is skipped. A NaN or inf norm gives a
  // NaN or 0 coefficient and the tensors are scaled by it, as in PyTorch (error_if_nonfinite=False).
  const T coef = static_cast<T>(max_norm) / (total_norm[0] + static_cast<T>(1e-6));
  if (coef >= T(1)) return;
  for (size_t i = 0; i < tensors.size(); ++i)
    for (int64_t j = 0; j < numels[i]; ++j) tensors[i][j] *= coef;
}

TINYDDP_MULTI_TENSOR_KERNELS(TINYDDP_INSTANTIATE_KERNEL)

}  // namespace tinyddp::kernels::cpu
