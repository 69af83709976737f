// Devices, the caching allocator and copies (see runtime.h for the contract).
//
// Note [Why the caching allocator may reuse a block at once]
// cudaFree synchronizes the device and cudaMalloc is slow, so freed blocks are kept and handed out again.
// A block deallocated while a kernel still reads it is safe to reuse immediately because every kernel,
// copy and cuBLAS call of kernels/cuda runs on the one legacy default stream: the next user's work is
// queued behind the previous user's. Work on any other stream (NCCL's) must keep its memory alive itself.
#include "kernels/cuda/runtime.h"

#include <cuda_runtime.h>

#include <cstdio>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "base/error.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/launch.h"

namespace tinyddp::kernels::cuda {

using ::tinyddp::detail::concat;
using detail::DeviceGuard;

namespace {

// ---- device discovery ----

struct DeviceInfo {
  int count = 0;
  std::string reason;   // why count is 0, or ""
};

// Asked once: the visible devices do not change during a run (CUDA_VISIBLE_DEVICES is read at init).
const DeviceInfo& device_info() {
  static const DeviceInfo info = [] {
    DeviceInfo d;
    int n = 0;
    const cudaError_t err = cudaGetDeviceCount(&n);
    // A failed call leaves its (non-sticky) code as the last error; clear it so that a later
    // check_last_launch() does not report it.
    (void)cudaGetLastError();
    if (err == cudaSuccess && n > 0) {
      d.count = n;
      return d;
    }
    if (err == cudaSuccess) {
      d.reason = "no CUDA device visible (is CUDA_VISIBLE_DEVICES empty?)";
    } else if (err == cudaErrorInsufficientDriver) {
      d.reason = concat("no usable CUDA driver: none is installed or it is older than this build's CUDA ",
                        CUDART_VERSION / 1000, ".", (CUDART_VERSION % 1000) / 10, " runtime (", cudaGetErrorName(err),
                        ": ", cudaGetErrorString(err), ")");
    } else if (err == cudaErrorNoDevice) {
      d.reason = concat("no CUDA device found (", cudaGetErrorName(err), ": ", cudaGetErrorString(err), ")");
    } else {
      d.reason = concat("CUDA unavailable: cudaGetDeviceCount failed with ", cudaGetErrorName(err), " (",
                        cudaGetErrorString(err), ")");
    }
    return d;
  }();
  return info;
}

void check_device(int device, const char* what) {
  const int n = device_count();
  TINYDDP_CHECK(device >= 0 && device < n, what, ": cuda:", device, " requested but ",
                n == 0 ? concat("no CUDA device is usable: ", unavailable_reason())
                       : concat("only ", n, " CUDA device(s) are visible (cuda:0 .. cuda:", n - 1, ")"),
                ".");
}

// ---- caching allocator ----

// 512 bytes: the rounding unit of sizes, so that nearby sizes share a free list; also a multiple of
// every alignment a kernel needs (cudaMalloc itself returns 256-byte aligned memory).
constexpr size_t kRoundBytes = 512;

constexpr double kMiB = 1024.0 * 1024.0;

struct Block {
  int device = 0;
  size_t size = 0;   // rounded size: the key of its free list
};

struct DeviceCache {
  std::unordered_map<size_t, std::vector<void*>> free_blocks;   // rounded size -> cached blocks
  AllocatorStats stats;
};

class Allocator {
 public:
  void* allocate(size_t nbytes, int device) {
    check_device(device, "allocate");
    // allocate(0) still returns a unique, valid 512-byte block, so that callers never special-case 0.
    const size_t size = nbytes == 0 ? kRoundBytes : (nbytes + kRoundBytes - 1) / kRoundBytes * kRoundBytes;
    TINYDDP_CHECK(size >= nbytes, "CUDA allocation of ", nbytes, " bytes on cuda:", device, " is too large.");
    std::lock_guard<std::mutex> lock(mutex_);
    DeviceCache& cache = cache_for(device);
    void* ptr = nullptr;
    auto it = cache.free_blocks.find(size);
    if (it != cache.free_blocks.end() && !it->second.empty()) {
      ptr = it->second.back();
      it->second.pop_back();
      cache.stats.bytes_cached -= static_cast<int64_t>(size);
    } else {
      ptr = cuda_malloc_locked(size, device, cache);
    }
    cache.stats.allocations += 1;
    cache.stats.bytes_in_use += static_cast<int64_t>(size);
    live_[ptr] = Block{device, size};
    return ptr;
  }

  void deallocate(void* ptr) {
    if (ptr == nullptr) return;
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = live_.find(ptr);
    TINYDDP_INTERNAL_ASSERT(it != live_.end(), "cuda::deallocate got a pointer (", ptr,
                            ") that cuda::allocate did not hand out, or that was already returned.");
    const Block block = it->second;
    live_.erase(it);
    DeviceCache& cache = cache_for(block.device);
    cache.free_blocks[block.size].push_back(ptr);
    cache.stats.bytes_in_use -= static_cast<int64_t>(block.size);
    cache.stats.bytes_cached += static_cast<int64_t>(block.size);
  }

  void empty_cache() {
    std::lock_guard<std::mutex> lock(mutex_);
    for (int device = 0; device < static_cast<int>(caches_.size()); ++device) empty_device_locked(device);
  }

  AllocatorStats stats(int device) {
    check_device(device, "allocator_stats");
    std::lock_guard<std::mutex> lock(mutex_);
    return cache_for(device).stats;
  }

 private:
  DeviceCache& cache_for(int device) {
    if (static_cast<int>(caches_.size()) <= device) caches_.resize(device + 1);
    return caches_[device];
  }

  // cudaFree every cached block of `device`. Caller holds mutex_.
  void empty_device_locked(int device) {
    DeviceCache& cache = cache_for(device);
    if (cache.stats.bytes_cached == 0) return;
    DeviceGuard guard(device);
    for (auto& [size, blocks] : cache.free_blocks) {
      // Each block leaves the list before its cudaFree, so that a throw leaves no freed block cached.
      while (!blocks.empty()) {
        void* p = blocks.back();
        blocks.pop_back();
        cache.stats.bytes_cached -= static_cast<int64_t>(size);
        TINYDDP_CUDA_CHECK(cudaFree(p));
      }
    }
    cache.free_blocks.clear();
  }

  // A fresh block from cudaMalloc; on out-of-memory, empties this device's cache and retries once.
  // Caller holds mutex_.
  void* cuda_malloc_locked(size_t size, int device, DeviceCache& cache) {
    void* ptr = nullptr;
    {
      DeviceGuard guard(device);
      cache.stats.cuda_malloc_calls += 1;
      cudaError_t err = cudaMalloc(&ptr, size);
      if (err == cudaSuccess) return ptr;
      if (err != cudaErrorMemoryAllocation) detail::throw_cuda_error(err, "cudaMalloc(&ptr, size)", __FILE__, __LINE__);
      (void)cudaGetLastError();   // out-of-memory is not sticky: clear it before retrying
    }
    const int64_t cached_before = cache.stats.bytes_cached;
    empty_device_locked(device);
    {
      DeviceGuard guard(device);
      cache.stats.cuda_malloc_calls += 1;
      cudaError_t err = cudaMalloc(&ptr, size);
      if (err == cudaSuccess) return ptr;
      if (err != cudaErrorMemoryAllocation) detail::throw_cuda_error(err, "cudaMalloc(&ptr, size)", __FILE__, __LINE__);
      (void)cudaGetLastError();
      size_t free_bytes = 0, total_bytes = 0;
      const bool have_info = cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess;
      (void)cudaGetLastError();
      char buf[512];
      std::snprintf(buf, sizeof(buf),
                    "CUDA out of memory: tried to allocate %.2f MiB on cuda:%d; %.2f MiB in use by tinyddp, "
                    "%.2f MiB was cached (freed and retried)",
                    size / kMiB, device, cache.stats.bytes_in_use / kMiB, cached_before / kMiB);
      std::string msg = buf;
      if (have_info) {
        std::snprintf(buf, sizeof(buf), "; the device has %.2f MiB free of %.2f MiB total", free_bytes / kMiB,
                      total_bytes / kMiB);
        msg += buf;
      }
      msg += ". Try a smaller batch or model, release tensors you no longer need, or check that no other "
             "process is using this GPU (nvidia-smi).";
      throw Error(msg);
    }
  }

  std::mutex mutex_;                              // guards everything below; allocate runs on many threads
  std::unordered_map<void*, Block> live_;         // every handed-out pointer: its device and rounded size
  std::vector<DeviceCache> caches_;               // indexed by device
};

// Never destroyed: cudaFree after the CUDA runtime has shut down at exit would fail, and the driver
// frees everything at process exit anyway.
Allocator& allocator() {
  static Allocator* a = new Allocator();
  return *a;
}

}  // namespace

int device_count() {
  try {
    return device_info().count;
  } catch (...) {   // e.g. bad_alloc building the reason string: still "no device", never an exception
    return 0;
  }
}

std::string unavailable_reason() {
  try {
    return device_info().reason;
  } catch (...) {
    return "CUDA unavailable";
  }
}

void set_device(int device) {
  check_device(device, "set_device");
  TINYDDP_CUDA_CHECK(cudaSetDevice(device));
}

int current_device() {
  int device = 0;
  TINYDDP_CUDA_CHECK(cudaGetDevice(&device));
  return device;
}

void synchronize(int device) {
  check_device(device, "synchronize");
  DeviceGuard guard(device);
  const cudaError_t err = cudaDeviceSynchronize();
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    throw Error(concat("CUDA error on cuda:", device, " found at synchronize: ", cudaGetErrorName(err), " (",
                       cudaGetErrorString(err),
                       "). An earlier asynchronous kernel or copy failed; rerun with CUDA_LAUNCH_BLOCKING=1 to see "
                       "which one."));
  }
}

void* allocate(size_t nbytes, int device) { return allocator().allocate(nbytes, device); }
void deallocate(void* ptr) { allocator().deallocate(ptr); }
void empty_cache() { allocator().empty_cache(); }
AllocatorStats allocator_stats(int device) { return allocator().stats(device); }

void copy_host_to_device(void* dst, const void* src, size_t nbytes, int device) {
  if (nbytes == 0) return;
  DeviceGuard guard(device);
  // Synchronous: cudaMemcpy on the legacy default stream runs after queued kernels, and returns once
  // the host buffer may be reused.
  TINYDDP_CUDA_CHECK(cudaMemcpy(dst, src, nbytes, cudaMemcpyHostToDevice));
}

void copy_device_to_host(void* dst, const void* src, size_t nbytes, int device) {
  if (nbytes == 0) return;
  DeviceGuard guard(device);
  // Returns once the copy has landed in host memory (it waits for the kernels queued before it).
  TINYDDP_CUDA_CHECK(cudaMemcpy(dst, src, nbytes, cudaMemcpyDeviceToHost));
}

void copy_device_to_device(void* dst, const void* src, size_t nbytes, int device) {
  if (nbytes == 0) return;
  DeviceGuard guard(device);
  TINYDDP_CUDA_CHECK(cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyDeviceToDevice, detail::kComputeStream));
}

void check_last_launch(const char* what) {
  const cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess) return;
  throw Error(concat("CUDA kernel launch failed in ", what, ": ", cudaGetErrorName(err), " (",
                     cudaGetErrorString(err),
                     "). If the error is from an earlier asynchronous kernel, rerun with CUDA_LAUNCH_BLOCKING=1 to "
                     "see which one."));
}

}  // namespace tinyddp::kernels::cuda
