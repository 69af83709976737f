// Multi-tensor CUDA kernels (contracts: kernels/contract.h): one launch covers a whole list of
// tensors. The list travels by value in the kernel's parameters (a TensorGroup: pointers, numels and the
// prefix sum of each tensor's chunk count); block b finds its (tensor, chunk) by a binary search over that
// prefix and works on one fixed chunk of kChunkElems elements.
//
//   phase 1  (one launch per group of <= kMaxTensorsPerGroup tensors, grid = the group's chunk count)
//            block b: partials[group.partial_base + b] = sum of squares of its chunk       (no atomics)
//   phase 2  (one block)  out[0] = sqrt(partials added in a fixed tree order)
//
// Note [Why no atomics and no host sync]
// atomicAdd of floats makes the sum's order, and so its bits, depend on which block finishes first: two runs
// of the same step would give different norms, and DDP replicas clipping with different coefficients drift
// apart. Each block writes its own slot instead, and one block adds the slots in a fixed order. The result
// stays on the device (out is a device scalar; clip_by_global_norm's scale kernel reads it there), so nothing
// waits for the GPU: the host only enqueues work on the legacy default stream.
//
// Note [Same bits whatever the alignment]
// A chunk's elements are visited in groups of kVec = 16 / sizeof(T) consecutive elements (one 16-byte load
// when the tensor's pointer is 16-byte aligned, kVec scalar loads otherwise), thread t taking groups t,
// t + blockDim, ... and adding a group's squares in element order; the few elements after the last whole group
// go round the threads one by one. Both paths add the same numbers in the same order, so the result does not
// depend on where the tensors live. kChunkElems is a multiple of kVec, so every chunk of an aligned tensor
// starts aligned.
#include "kernels/cuda/multi_tensor.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "base/error.h"
#include "kernels/multi_tensor_checks.h"
#include "kernels/cuda/runtime.h"

namespace tinyddp::kernels::cuda {
namespace {

// ---- launch configuration (the reasons for each number) ----
// 512 threads = 16 warps: a phase-1 block moves 64 KiB of float32 (8 16-byte loads per thread), four such
// blocks fill an SM's 2048 threads, and a 25M-element list is ~1,500 blocks, several waves over 132 SMs.
constexpr int kBlockThreads = 512;
// Elements per chunk (per phase-1 block): a multiple of every kVec (4 for float, 2 for double).
constexpr int64_t kChunkElems = 16384;
// Phase 2: one block of 1024 threads (the per-block maximum), each adding every 1024th partial.
constexpr int kFinalThreads = 1024;
// Tensors per launch. The group is a kernel parameter: CUDA 12.1+ on sm_70+ accepts up to 32,764 bytes of
// parameters (4,096 before). 512 tensors keep both structs below at 12-17 KB; longer lists take more launches.
constexpr int kMaxTensorsPerGroup = 512;

constexpr cudaStream_t kStream = 0;   // the legacy default stream: runtime.h's compute stream

static_assert(kBlockThreads % 32 == 0 && kBlockThreads <= 1024, "block size must be whole warps, <= 1024");
static_assert(kFinalThreads % 32 == 0 && kFinalThreads <= 1024, "block size must be whole warps, <= 1024");
static_assert(kChunkElems % 4 == 0, "chunks must hold whole 16-byte groups so aligned tensors stay aligned");

// Local CUDA check (file:line and what failed). cudaGetLastError after each launch reports bad configurations
// at once; faults inside the kernel surface at the next synchronizing call.
void check_cuda(cudaError_t err, const char* what, const char* file, int line) {
  TINYDDP_CHECK(err == cudaSuccess, "CUDA error at ", file, ":", line, " in ", what, ": ", cudaGetErrorName(err),
                " (", cudaGetErrorString(err), ").");
}
#define TINYDDP_MT_CHECK_LAUNCH(what) check_cuda(cudaGetLastError(), what, __FILE__, __LINE__)

template <typename T>
struct Accumulator;   // float32 sums in float32 (as fused multi-tensor norms in the field do), float64 in float64
template <>
struct Accumulator<float> { using type = float; };
template <>
struct Accumulator<double> { using type = double; };

// kVec elements of T in one 16-byte, 16-byte-aligned value (one ld.global.v4 / st.global.v4).
template <typename T>
struct alignas(16) Vec16 {
  static constexpr int kVec = 16 / static_cast<int>(sizeof(T));
  T v[kVec];
};

template <typename T>
__device__ __forceinline__ Vec16<T> load_vec(const T* p, bool aligned) {
  Vec16<T> r;
  if (aligned) {
    *reinterpret_cast<int4*>(&r) = *reinterpret_cast<const int4*>(p);
  } else {
#pragma unroll
    for (int k = 0; k < Vec16<T>::kVec; ++k) r.v[k] = p[k];
  }
  return r;
}

template <typename T>
__device__ __forceinline__ void store_vec(T* p, const Vec16<T>& r, bool aligned) {
  if (aligned) {
    *reinterpret_cast<int4*>(p) = *reinterpret_cast<const int4*>(&r);
  } else {
#pragma unroll
    for (int k = 0; k < Vec16<T>::kVec; ++k) p[k] = r.v[k];
  }
}

__device__ __forceinline__ bool is_aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

// ---- the tensor lists, passed by value ----
// chunk_begin[i] = number of chunks of tensors 0..i-1 in this group; chunk_begin[num_tensors] = the group's
// chunk count = its grid size. Empty tensors are left out on the host, so every listed tensor has >= 1 chunk.
template <typename T>
struct ReduceGroup {
  const T* ptrs[kMaxTensorsPerGroup];
  int64_t numels[kMaxTensorsPerGroup];
  int64_t chunk_begin[kMaxTensorsPerGroup + 1];
  int num_tensors;
  int64_t partial_base;   // this group's first slot in the partials array
};

// dst_i[j] = src_i[j] * factor; for clip, src_i == dst_i.
template <typename T>
struct CopyGroup {
  const T* src[kMaxTensorsPerGroup];
  T* dst[kMaxTensorsPerGroup];
  int64_t numels[kMaxTensorsPerGroup];
  int64_t chunk_begin[kMaxTensorsPerGroup + 1];
  int num_tensors;
};

static_assert(sizeof(ReduceGroup<double>) <= 32764, "kernel parameters are limited to 32,764 bytes");
static_assert(sizeof(CopyGroup<double>) <= 32764, "kernel parameters are limited to 32,764 bytes");

// The tensor that block `block` works on: the last i with chunk_begin[i] <= block, by binary search (unique,
// since every listed tensor has at least one chunk). ~9 steps for 512 tensors, uniform over the block.
__device__ __forceinline__ int locate(const int64_t* chunk_begin, int num_tensors, int64_t block) {
  int lo = 0, hi = num_tensors - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (chunk_begin[mid] <= block) lo = mid; else hi = mid - 1;
  }
  return lo;
}

// Deterministic block sum: warp shuffles in a fixed pattern, then warp 0 adds the warps' sums in order.
// Every thread of the block must call it (it has __syncthreads); the result is valid in thread 0.
template <typename A, int kThreads>
__device__ A block_sum(A v) {
  __shared__ A warp_sums[kThreads / 32];
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  A total = 0;
  if (warp == 0) {
    total = lane < kThreads / 32 ? warp_sums[lane] : A(0);
    for (int offset = 16; offset > 0; offset /= 2) total += __shfl_down_sync(0xffffffffu, total, offset);
  }
  return total;
}

// Phase 1. grid = group.chunk_begin[group.num_tensors], block = kBlockThreads.
template <typename T>
__global__ void __launch_bounds__(kBlockThreads) sumsq_chunks_kernel(const ReduceGroup<T> group,
                                                                     typename Accumulator<T>::type* partials) {
  using A = typename Accumulator<T>::type;
  constexpr int kVec = Vec16<T>::kVec;
  const int64_t block = blockIdx.x;
  const int i = locate(group.chunk_begin, group.num_tensors, block);
  const int64_t begin = (block - group.chunk_begin[i]) * kChunkElems;   // element offset of this chunk
  const int64_t len = min(kChunkElems, group.numels[i] - begin);
  const T* x = group.ptrs[i] + begin;
  const bool aligned = is_aligned16(group.ptrs[i]);   // chunks start at multiples of kVec: same as the base

  A acc = 0;
  const int64_t num_vecs = len / kVec;
#pragma unroll 4
  for (int64_t v = threadIdx.x; v < num_vecs; v += kBlockThreads) {
    const Vec16<T> q = load_vec(x + v * kVec, aligned);
#pragma unroll
    for (int k = 0; k < kVec; ++k) acc += A(q.v[k]) * A(q.v[k]);
  }
  for (int64_t j = num_vecs * kVec + threadIdx.x; j < len; j += kBlockThreads) acc += A(x[j]) * A(x[j]);

  const A total = block_sum<A, kBlockThreads>(acc);
  if (threadIdx.x == 0) partials[group.partial_base + blockIdx.x] = total;
}

// Phase 2. One block of kFinalThreads: thread t adds partials t, t + kFinalThreads, ... in order, then the
// fixed block tree; out[0] = sqrt(sum). num_partials may be 0 (every tensor empty): out[0] = 0.
template <typename T>
__global__ void __launch_bounds__(kFinalThreads) sqrt_of_sum_kernel(const typename Accumulator<T>::type* partials,
                                                                    int64_t num_partials, T* out) {
  using A = typename Accumulator<T>::type;
  A acc = 0;
  for (int64_t k = threadIdx.x; k < num_partials; k += kFinalThreads) acc += partials[k];
  const A total = block_sum<A, kFinalThreads>(acc);
  if (threadIdx.x == 0) out[0] = static_cast<T>(sqrt(total));
}

// The factor of a copy: a host value (pack, unpack) ...
template <typename T>
struct ConstantFactor {
  T value;
  __device__ T get() const { return value; }
  __device__ bool skip(T) const { return false; }
};

// ... or clip's coefficient, computed on the device from the norm phase 2 wrote (no host round trip).
// PyTorch's clip_grad_norm_: coef = max_norm / (norm + 1e-6) in the tensors' dtype, clamped to <= 1. A block
// whose coef is >= 1 has nothing to do (x * 1 == x); a NaN coef (NaN norm) still scales, as in PyTorch.
template <typename T>
struct ClipFactor {
  const T* total_norm;
  double max_norm;
  __device__ T get() const { return static_cast<T>(max_norm) / (total_norm[0] + static_cast<T>(1e-6)); }
  __device__ bool skip(T coef) const { return coef >= T(1); }
};

// dst_i[j] = src_i[j] * factor over one chunk per block. grid = group.chunk_begin[num_tensors].
template <typename T, typename Factor>
__global__ void __launch_bounds__(kBlockThreads) scale_copy_kernel(const CopyGroup<T> group, const Factor factor) {
  constexpr int kVec = Vec16<T>::kVec;
  const T f = factor.get();
  if (factor.skip(f)) return;   // the same answer in every thread (and this kernel has no barrier)
  const int64_t block = blockIdx.x;
  const int i = locate(group.chunk_begin, group.num_tensors, block);
  const int64_t begin = (block - group.chunk_begin[i]) * kChunkElems;   // element offset of this chunk
  const int64_t len = min(kChunkElems, group.numels[i] - begin);
  const T* src = group.src[i] + begin;
  T* dst = group.dst[i] + begin;
  const bool aligned = is_aligned16(group.src[i]) && is_aligned16(group.dst[i]);

  const int64_t num_vecs = len / kVec;
#pragma unroll 4
  for (int64_t v = threadIdx.x; v < num_vecs; v += kBlockThreads) {
    Vec16<T> q = load_vec(src + v * kVec, aligned);
#pragma unroll
    for (int k = 0; k < kVec; ++k) q.v[k] *= f;
    store_vec(dst + v * kVec, q, aligned);
  }
  for (int64_t j = num_vecs * kVec + threadIdx.x; j < len; j += kBlockThreads) dst[j] = src[j] * f;
}

int64_t num_chunks(int64_t numel) { return (numel + kChunkElems - 1) / kChunkElems; }

constexpr const char* kBuffer = "device buffer";   // what a valid pointer is here, for check_multi_tensor_entry

// grid.x is at most 2^31 - 1 blocks.
void check_grid(int64_t blocks, const char* fn) {
  TINYDDP_CHECK(blocks <= int64_t{0x7fffffff}, fn, ": ", blocks, " chunks of ", kChunkElems,
                " elements exceed one launch's 2^31 - 1 blocks; split the tensor list.");
}

// Phase 1 over the whole list, group by group; returns the number of partials written (= total chunks).
// partials must hold total_chunks(numels) slots.
template <typename T>
void launch_sumsq(const std::vector<const T*>& tensors, const std::vector<int64_t>& numels,
                  typename Accumulator<T>::type* partials) {
  ReduceGroup<T> group{};
  int64_t partial_base = 0;
  auto flush = [&] {
    const int64_t blocks = group.chunk_begin[group.num_tensors];
    if (blocks == 0) return;
    check_grid(blocks, "multi_tensor_l2norm");
    group.partial_base = partial_base;
    sumsq_chunks_kernel<T><<<static_cast<unsigned>(blocks), kBlockThreads, 0, kStream>>>(group, partials);
    TINYDDP_MT_CHECK_LAUNCH("multi_tensor_l2norm (phase 1: per-chunk sums of squares)");
    partial_base += blocks;
    group.num_tensors = 0;
    group.chunk_begin[0] = 0;
  };
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (numels[i] == 0) continue;
    const int n = group.num_tensors;
    group.ptrs[n] = tensors[i];
    group.numels[n] = numels[i];
    group.chunk_begin[n + 1] = group.chunk_begin[n] + num_chunks(numels[i]);
    group.num_tensors = n + 1;
    if (group.num_tensors == kMaxTensorsPerGroup) flush();
  }
  flush();
}

// out[0] = sqrt(sum of squares over the list), two phases, with the partials from the caching allocator.
template <typename T>
void l2norm_into(const std::vector<const T*>& tensors, const std::vector<int64_t>& numels, T* out) {
  using A = typename Accumulator<T>::type;
  int64_t total_chunks = 0;
  for (int64_t n : numels) total_chunks += num_chunks(n);
  // At least one slot so the pointer is valid even when every tensor is empty (phase 2 then reads nothing).
  const size_t workspace_bytes = static_cast<size_t>(std::max<int64_t>(total_chunks, 1)) * sizeof(A);
  A* partials = static_cast<A*>(allocate(workspace_bytes, current_device()));
  try {
    launch_sumsq(tensors, numels, partials);
    sqrt_of_sum_kernel<T><<<1, kFinalThreads, 0, kStream>>>(partials, total_chunks, out);
    TINYDDP_MT_CHECK_LAUNCH("multi_tensor_l2norm (phase 2: sum of partials)");
  } catch (...) {
    deallocate(partials);
    throw;
  }
  // Returned at once: the allocator's next user is ordered after these kernels on the same stream (runtime.h).
  deallocate(partials);
}

// dst_i = src_i * factor over the whole list, group by group.
template <typename T, typename Factor>
void launch_scale_copy(const std::vector<const T*>& srcs, const std::vector<T*>& dsts,
                       const std::vector<int64_t>& numels, const Factor& factor, const char* what) {
  CopyGroup<T> group{};
  auto flush = [&] {
    const int64_t blocks = group.chunk_begin[group.num_tensors];
    if (blocks == 0) return;
    check_grid(blocks, what);
    scale_copy_kernel<T, Factor><<<static_cast<unsigned>(blocks), kBlockThreads, 0, kStream>>>(group, factor);
    TINYDDP_MT_CHECK_LAUNCH(what);
    group.num_tensors = 0;
    group.chunk_begin[0] = 0;
  };
  for (size_t i = 0; i < numels.size(); ++i) {
    if (numels[i] == 0) continue;
    const int n = group.num_tensors;
    group.src[n] = srcs[i];
    group.dst[n] = dsts[i];
    group.numels[n] = numels[i];
    group.chunk_begin[n + 1] = group.chunk_begin[n] + num_chunks(numels[i]);
    group.num_tensors = n + 1;
    if (group.num_tensors == kMaxTensorsPerGroup) flush();
  }
  flush();
}

}  // namespace

template <typename T>
void multi_tensor_l2norm(const std::vector<const T*>& tensors, const std::vector<int64_t>& numels, T* out) {
  check_multi_tensor_lists(tensors.size(), numels, "tensors", "multi_tensor_l2norm");
  for (size_t i = 0; i < tensors.size(); ++i)
    check_multi_tensor_entry(tensors[i], numels[i], i, "multi_tensor_l2norm", kBuffer);
  TINYDDP_CHECK(out != nullptr, "multi_tensor_l2norm: out is null; pass a device buffer for one element.");
  l2norm_into(tensors, numels, out);
}

template <typename T>
void bucket_pack(const std::vector<const T*>& srcs, const std::vector<int64_t>& numels,
                 const std::vector<int64_t>& offsets, T factor, T* flat) {
  check_multi_tensor_lists(srcs.size(), numels, "srcs", "bucket_pack");
  TINYDDP_CHECK(offsets.size() == numels.size(), "bucket_pack: expected one offset per tensor, got ",
                offsets.size(), " offsets and ", numels.size(), " numels.");
  std::vector<T*> dsts(srcs.size());
  for (size_t i = 0; i < srcs.size(); ++i) {
    check_multi_tensor_entry(srcs[i], numels[i], i, "bucket_pack", kBuffer);
    TINYDDP_CHECK(offsets[i] >= 0, "bucket_pack: offsets[", i, "] is ", offsets[i], "; offsets must be >= 0.");
    TINYDDP_CHECK(flat != nullptr || numels[i] == 0, "bucket_pack: flat is null; pass the bucket's device buffer.");
    dsts[i] = flat + offsets[i];   // pointer arithmetic only: nothing is read on the host
  }
  launch_scale_copy(srcs, dsts, numels, ConstantFactor<T>{factor}, "bucket_pack");
}

template <typename T>
void bucket_unpack(const T* flat, const std::vector<int64_t>& offsets, const std::vector<int64_t>& numels,
                   const std::vector<T*>& dsts) {
  check_multi_tensor_lists(dsts.size(), numels, "dsts", "bucket_unpack");
  TINYDDP_CHECK(offsets.size() == numels.size(), "bucket_unpack: expected one offset per tensor, got ",
                offsets.size(), " offsets and ", numels.size(), " numels.");
  std::vector<const T*> srcs(dsts.size());
  for (size_t i = 0; i < dsts.size(); ++i) {
    check_multi_tensor_entry(dsts[i], numels[i], i, "bucket_unpack", kBuffer);
    TINYDDP_CHECK(offsets[i] >= 0, "bucket_unpack: offsets[", i, "] is ", offsets[i], "; offsets must be >= 0.");
    TINYDDP_CHECK(flat != nullptr || numels[i] == 0, "bucket_unpack: flat is null; pass the bucket's device buffer.");
    srcs[i] = flat + offsets[i];
  }
  // x * 1 == x bit for bit (NaN stays NaN), so the unpack is the pack kernel with factor 1.
  launch_scale_copy(srcs, dsts, numels, ConstantFactor<T>{T(1)}, "bucket_unpack");
}

template <typename T>
void clip_by_global_norm(const std::vector<T*>& tensors, const std::vector<int64_t>& numels, double max_norm,
                         T* total_norm) {
  TINYDDP_CHECK(std::isfinite(max_norm) && max_norm > 0,
                "clip_by_global_norm: max_norm must be a finite number > 0, got ", max_norm, ".");
  const std::vector<const T*> inputs(tensors.begin(), tensors.end());
  multi_tensor_l2norm(inputs, numels, total_norm);   // checks the lists; total_norm[0] = the norm, on the device
  launch_scale_copy(inputs, tensors, numels, ClipFactor<T>{total_norm, max_norm}, "clip_by_global_norm (scale)");
}

TINYDDP_MULTI_TENSOR_KERNELS(TINYDDP_INSTANTIATE_KERNEL)

}  // namespace tinyddp::kernels::cuda
