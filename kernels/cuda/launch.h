// Internal to kernels/cuda: launch configuration shared by the kernels.
//
// Elementwise kernels are grid-stride loops: a grid of at most kMaxGridBlocks blocks covers any n, each
// thread stepping by the whole grid's thread count. All indices are int64 (tensors may pass 2^31 elements).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

namespace tinyddp::kernels::cuda::detail {

// Every kernel runs on the legacy default stream (stream 0): it orders host copies, kernels and cuBLAS
// calls of all host threads, which is what lets the allocator hand a freed block out again at once
// (see runtime.h). Named here so that no launch spells a different stream by accident.
inline constexpr cudaStream_t kComputeStream = 0;

// 256 threads: a multiple of the warp size (32) with enough blocks per SM to hide memory latency, and
// within the 1024-threads-per-block limit. The block reductions assume a power of two.
inline constexpr int kThreadsPerBlock = 256;

// Grid cap for grid-stride loops. 65535 is below every grid-dimension limit (x, y and z), and 65535
// blocks of 256 threads (16.7M threads) far exceed what an H100/H200 keeps resident (132 SMs x 2048),
// so capping costs nothing while keeping the count a safe `unsigned`.
inline constexpr int64_t kMaxGridBlocks = 65535;

// Blocks for a grid-stride loop over n items with `threads` threads per block (n > 0).
inline unsigned grid_blocks(int64_t n, int threads = kThreadsPerBlock) {
  return static_cast<unsigned>(std::clamp<int64_t>((n + threads - 1) / threads, 1, kMaxGridBlocks));
}

// The grid-stride loop index and step, in int64 so that blockIdx.x * blockDim.x cannot wrap.
__device__ __forceinline__ int64_t grid_start() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ int64_t grid_step() { return static_cast<int64_t>(gridDim.x) * blockDim.x; }

// Device math with the float and double overloads spelled out, so that float math never runs in double
// (and never in fast-math approximations: nothing here is built with --use_fast_math).
__device__ __forceinline__ float dev_exp(float x) { return ::expf(x); }
__device__ __forceinline__ double dev_exp(double x) { return ::exp(x); }
__device__ __forceinline__ float dev_log(float x) { return ::logf(x); }
__device__ __forceinline__ double dev_log(double x) { return ::log(x); }
__device__ __forceinline__ float dev_sqrt(float x) { return ::sqrtf(x); }
__device__ __forceinline__ double dev_sqrt(double x) { return ::sqrt(x); }
__device__ __forceinline__ float dev_abs(float x) { return ::fabsf(x); }
__device__ __forceinline__ double dev_abs(double x) { return ::fabs(x); }
__device__ __forceinline__ float dev_tanh(float x) { return ::tanhf(x); }
__device__ __forceinline__ double dev_tanh(double x) { return ::tanh(x); }
__device__ __forceinline__ float dev_pow(float x, float a) { return ::powf(x, a); }
__device__ __forceinline__ double dev_pow(double x, double a) { return ::pow(x, a); }

}  // namespace tinyddp::kernels::cuda::detail
