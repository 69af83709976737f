// bench_kernels' GPU half (see bench_kernels.cpp for the list of variants and the table). Compiled only where
// CUDA is built; registers nothing without a device.
//
//   gpu/norm/multi_tensor       kernels::cuda::multi_tensor_l2norm: 1 launch per 512 tensors + 1     bytes = 4 * elems
//   gpu/norm/per_tensor_launch  the naive loop: one launch per tensor (the same per-block chunk sums, into one
//                               partials array), then one launch adding the partials: 161 / 4,096 + 1 launches
//   gpu/roofline/copy           cudaMemcpyAsync device to device of one contiguous buffer     bytes = 8 * elems
//   gpu/pack, gpu/unpack        bucket_pack (factor 1/2) and bucket_unpack                    bytes = 8 * elems
//
// Timing: CUDA events on the legacy default stream around kCallsPerIteration back-to-back calls, reported per
// call through UseManualTime, so a call's host-side cost (argument checks, building the parameter struct,
// launches) counts whenever it exceeds the GPU's time: that is what a training step would see. Each tensor is
// its own allocation from the caching allocator, as parameters' gradients are.
#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>

#include "bench/bench_kernels.h"
#include "base/error.h"
#include "kernels/cpu/multi_tensor.h"
#include "kernels/cuda/multi_tensor.h"
#include "kernels/cuda/runtime.h"

namespace tinyddp::bench {
namespace {

namespace cuda = kernels::cuda;
constexpr int kDevice = 0;
// Calls between two events: 20 calls of the smallest variant (~10 us each) is ~200 us, far above the events'
// ~0.5 us resolution.
constexpr int kCallsPerIteration = 20;

void check(cudaError_t err, const char* what, int line) {
  TINYDDP_CHECK(err == cudaSuccess, "CUDA error at bench_kernels_cuda.cu:", line, " in ", what, ": ",
                cudaGetErrorName(err), " (", cudaGetErrorString(err), ")");
}
#define BENCH_CUDA_CHECK(call) check((call), #call, __LINE__)

// ---- the per-tensor baseline: one launch per tensor ----
// Block b of the launch for tensor i sums the squares of elements [b * kChunk, (b + 1) * kChunk) into
// partials[first_partial_i + b]; the final launch adds all partials in a fixed order. Same arithmetic
// structure as the fused kernel (scalar loads, though: what a simple per-tensor kernel does).
constexpr int kThreads = 512;
constexpr int64_t kChunk = 16384;

__device__ float block_sum(float v) {
  __shared__ float warp_sums[kThreads / 32];
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = v;
  __syncthreads();
  float total = 0;
  if (threadIdx.x < 32) {
    total = threadIdx.x < kThreads / 32 ? warp_sums[threadIdx.x] : 0.0f;
    for (int offset = 16; offset > 0; offset /= 2) total += __shfl_down_sync(0xffffffffu, total, offset);
  }
  return total;
}

__global__ void __launch_bounds__(kThreads) one_tensor_sumsq_kernel(const float* x, int64_t n, float* partials) {
  const int64_t begin = static_cast<int64_t>(blockIdx.x) * kChunk;
  const int64_t end = begin + kChunk < n ? begin + kChunk : n;
  float acc = 0;
  for (int64_t j = begin + threadIdx.x; j < end; j += kThreads) acc += x[j] * x[j];
  const float total = block_sum(acc);
  if (threadIdx.x == 0) partials[blockIdx.x] = total;
}

__global__ void __launch_bounds__(kThreads) sqrt_of_sum_kernel(const float* partials, int64_t n, float* out) {
  float acc = 0;
  for (int64_t k = threadIdx.x; k < n; k += kThreads) acc += partials[k];
  const float total = block_sum(acc);
  if (threadIdx.x == 0) out[0] = sqrtf(total);
}

// A list's tensors on the device (each its own allocation), the bucket, unpack's destinations, the
// baseline's partials and two contiguous buffers for the copy roofline.
struct DeviceTensors {
  TensorList list;
  std::vector<float*> grads, outs;
  std::vector<const float*> cgrads;
  std::vector<int64_t> offsets, first_partial;
  float *flat = nullptr, *copy_src = nullptr, *copy_dst = nullptr, *partials = nullptr, *scalar = nullptr;
  int64_t num_partials = 0;
  std::vector<float> host;   // the gradients' values, tensor after tensor (= the packed bucket at factor 1)

  explicit DeviceTensors(const TensorList& l) : list(l) {
    const int64_t total = list.total();
    host.resize(static_cast<size_t>(total));
    std::mt19937 rng(11);
    std::normal_distribution<float> normal;
    for (float& v : host) v = normal(rng);
    int64_t offset = 0;
    for (int64_t n : list.numels) {
      float* g = alloc(n);
      cuda::copy_host_to_device(g, host.data() + offset, static_cast<size_t>(n) * 4, kDevice);
      grads.push_back(g);
      cgrads.push_back(g);
      outs.push_back(alloc(n));
      offsets.push_back(offset);
      first_partial.push_back(num_partials);
      num_partials += (n + kChunk - 1) / kChunk;
      offset += n;
    }
    flat = alloc(total);
    copy_src = alloc(total);
    copy_dst = alloc(total);
    partials = alloc(num_partials);
    scalar = alloc(1);
    BENCH_CUDA_CHECK(cudaMemset(copy_src, 0, static_cast<size_t>(total) * 4));
  }
  ~DeviceTensors() {
    for (void* p : allocations) cuda::deallocate(p);
  }
  float* alloc(int64_t n) {
    allocations.push_back(cuda::allocate(static_cast<size_t>(std::max<int64_t>(n, 1)) * 4, kDevice));
    return static_cast<float*>(allocations.back());
  }
  double reference_norm() const {
    long double sum = 0;
    for (float v : host) sum += static_cast<long double>(v) * v;
    return static_cast<double>(std::sqrt(sum));
  }

  // ---- the variants ----
  void norm_fused() { cuda::multi_tensor_l2norm(cgrads, list.numels, scalar); }
  void norm_per_tensor() {
    for (size_t i = 0; i < grads.size(); ++i) {
      const int64_t n = list.numels[i];
      if (n == 0) continue;
      one_tensor_sumsq_kernel<<<static_cast<unsigned>((n + kChunk - 1) / kChunk), kThreads>>>(
          grads[i], n, partials + first_partial[i]);
    }
    sqrt_of_sum_kernel<<<1, kThreads>>>(partials, num_partials, scalar);
    BENCH_CUDA_CHECK(cudaGetLastError());
  }
  void pack() { cuda::bucket_pack(cgrads, list.numels, offsets, 0.5f, flat); }
  void unpack() { cuda::bucket_unpack(flat, offsets, list.numels, outs); }
  void copy() {
    BENCH_CUDA_CHECK(cudaMemcpyAsync(copy_dst, copy_src, static_cast<size_t>(list.total()) * 4,
                                     cudaMemcpyDeviceToDevice, 0));
  }

 private:
  std::vector<void*> allocations;
};

// Never destroyed: freeing device memory from a static destructor may run after the CUDA runtime shut down.
DeviceTensors& device_tensors(const std::string& name) {
  static auto* cache = new std::map<std::string, std::unique_ptr<DeviceTensors>>;
  auto& slot = (*cache)[name];
  if (!slot) slot = std::make_unique<DeviceTensors>(name == "resnet50" ? resnet50_list() : tiny_list());
  return *slot;
}

float download_scalar(const float* p) {
  float v = 0;
  cuda::copy_device_to_host(&v, p, 4, kDevice);
  return v;
}

std::vector<float> download(const float* p, int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  cuda::copy_device_to_host(v.data(), p, v.size() * 4, kDevice);
  return v;
}

bool check_list(const std::string& name) {
  DeviceTensors& t = device_tensors(name);
  bool ok = true;
  auto expect = [&](bool cond, const std::string& what) {
    if (!cond) std::fprintf(stderr, "MISMATCH (GPU, %s): %s\n", name.c_str(), what.c_str());
    ok &= cond;
  };
  const double ref = t.reference_norm();
  const float nan = std::nanf("");
  cuda::copy_host_to_device(t.scalar, &nan, 4, kDevice);   // poison
  t.norm_fused();
  const float fused = download_scalar(t.scalar);
  cuda::copy_host_to_device(t.scalar, &nan, 4, kDevice);
  t.norm_fused();
  const float again = download_scalar(t.scalar);
  expect(std::memcmp(&fused, &again, 4) == 0, "two fused norms differ in their bits");
  expect(std::abs(fused / ref - 1) < 1e-5, "multi_tensor_l2norm " + std::to_string(fused) + " vs float64 " +
                                               std::to_string(ref));
  cuda::copy_host_to_device(t.scalar, &nan, 4, kDevice);
  t.norm_per_tensor();
  const float naive = download_scalar(t.scalar);
  expect(std::abs(naive / ref - 1) < 1e-4, "per-tensor launches " + std::to_string(naive) + " vs float64 " +
                                               std::to_string(ref));
  BENCH_CUDA_CHECK(cudaMemset(t.flat, 0xff, static_cast<size_t>(t.list.total()) * 4));   // NaN poison
  t.pack();
  const std::vector<float> flat = download(t.flat, t.list.total());
  bool pack_ok = true;
  for (size_t k = 0; k < flat.size(); ++k) pack_ok &= flat[k] == t.host[k] * 0.5f;
  expect(pack_ok, "bucket_pack is not src * 0.5");
  t.unpack();
  bool unpack_ok = true;
  for (size_t i = 0; i < t.outs.size(); ++i) {
    const std::vector<float> out = download(t.outs[i], t.list.numels[i]);
    for (int64_t j = 0; j < t.list.numels[i]; ++j) unpack_ok &= out[j] == flat[t.offsets[i] + j];
  }
  expect(unpack_ok, "bucket_unpack did not copy the bucket back");
  return ok;
}

// Times kCallsPerIteration calls of `variant` between two events on the default stream.
void BM_gpu(benchmark::State& state, const std::string& list, void (DeviceTensors::*variant)()) {
  DeviceTensors& t = device_tensors(list);
  cudaEvent_t start, stop;
  BENCH_CUDA_CHECK(cudaEventCreate(&start));
  BENCH_CUDA_CHECK(cudaEventCreate(&stop));
  (t.*variant)();   // warm-up: the allocator's cache, the first launch
  BENCH_CUDA_CHECK(cudaDeviceSynchronize());
  for (auto _ : state) {
    BENCH_CUDA_CHECK(cudaEventRecord(start, 0));
    for (int k = 0; k < kCallsPerIteration; ++k) (t.*variant)();
    BENCH_CUDA_CHECK(cudaEventRecord(stop, 0));
    BENCH_CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    BENCH_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    state.SetIterationTime(ms / 1e3 / kCallsPerIteration);
  }
  BENCH_CUDA_CHECK(cudaEventDestroy(start));
  BENCH_CUDA_CHECK(cudaEventDestroy(stop));
}

}  // namespace

bool has_gpu() {
  if (cuda::device_count() > 0) return true;
  std::printf("GPU benchmarks: not registered (no CUDA device: %s).\n", cuda::unavailable_reason().c_str());
  return false;
}

bool check_gpu() {
  cuda::set_device(kDevice);
  bool ok = true;
  for (const char* list : {"resnet50", "tiny4096"}) ok &= check_list(list);
  return ok;
}

void register_gpu() {
  for (const std::string list : {"resnet50", "tiny4096"}) {
    const double elems = static_cast<double>(device_tensors(list).list.total());
    auto reg = [&](const std::string& name, double bytes, const std::string& roofline,
                   void (DeviceTensors::*variant)()) {
      benchmark::RegisterBenchmark(name.c_str(), BM_gpu, list, variant)
          ->Unit(benchmark::kMicrosecond)
          ->UseManualTime()
          // Manual time counts only the events' span, but each iteration also waits for its events on the
          // host: the default 0.5 s of manual time would take ~10 s of wall time per run at 50 us per call.
          ->MinTime(0.02);
      register_bytes(name, bytes, roofline);
    };
    const std::string copy = "gpu/roofline/copy/" + list;
    reg(copy, 8 * elems, copy, &DeviceTensors::copy);
    // The norm only reads: its fraction is of the copy's read+write bandwidth (a D2D copy is the best
    // measured way to stream bytes through HBM here; a pure read may go a little faster).
    reg("gpu/norm/multi_tensor/" + list, 4 * elems, copy, &DeviceTensors::norm_fused);
    reg("gpu/norm/per_tensor_launch/" + list, 4 * elems, copy, &DeviceTensors::norm_per_tensor);
    reg("gpu/pack/" + list, 8 * elems, copy, &DeviceTensors::pack);
    reg("gpu/unpack/" + list, 8 * elems, copy, &DeviceTensors::unpack);
  }
}

}  // namespace tinyddp::bench
