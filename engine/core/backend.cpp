#include "engine/core/backend.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "engine/core/tensor.h"
#ifdef TINYDDP_WITH_CUDA
#include "kernels/cuda/runtime.h"
#endif

namespace tinyddp {

namespace {
// 64-byte alignment: a cache line, and enough for any SIMD width Eigen picks. Alignment is also what keeps
// results bitwise reproducible: Eigen's vectorized reductions peel scalar elements up to the first aligned
// packet, so a buffer that starts at another offset from an aligned boundary sums in another order.
constexpr size_t kHostAlignment = 64;

// Buffers below a page are malloc'd with kHostAlignment bytes to spare, and start at the first aligned
// address past malloc's pointer, which is kept in the 8 bytes just before that start (the start lies past
// malloc's pointer, and both are multiples of 8). Not aligned_alloc for them: glibc's memalign bypasses its
// per-thread cache and splits and frees a remainder chunk on every call, and for the small tensors of a long
// graph that made malloc's slow paths a third of the time per node (bench_autograd's chain: 5.9 -> 2.5 us).
// From a page up, aligned_alloc as before: there its cost is nothing beside the work on the buffer, and
// malloc + spare moved the large buffers of the DDP step (bench_ddp, cap 25 MB: 1-1.7 ms slower per step,
// in every interleaved round, with the same page-fault count; the cause was not isolated).
constexpr size_t kSmallHostBuffer = 4096;   // bytes; the path is chosen from nbytes, at allocation and free

void* allocate_host(size_t nbytes) {
  if (nbytes >= kSmallHostBuffer) {
    const size_t rounded = (nbytes + kHostAlignment - 1) / kHostAlignment * kHostAlignment;
    return std::aligned_alloc(kHostAlignment, rounded);
  }
  void* raw = std::malloc(nbytes + kHostAlignment);
  if (raw == nullptr) return nullptr;
  const uintptr_t start = (reinterpret_cast<uintptr_t>(raw) + kHostAlignment) & ~uintptr_t{kHostAlignment - 1};
  reinterpret_cast<void**>(start)[-1] = raw;
  return reinterpret_cast<void*>(start);
}
void free_host(void* ptr, size_t nbytes) {
  if (ptr == nullptr) return;
  std::free(nbytes >= kSmallHostBuffer ? ptr : static_cast<void**>(ptr)[-1]);
}

// HostAllocatorStats, live. Relaxed: they are counters, no one orders other memory by them.
struct HostCounters {
  std::atomic<uint64_t> allocations{0}, frees{0}, bytes_allocated{0}, bytes_freed{0};
};
HostCounters host_counters;
}  // namespace

int cuda_device_count() {
#ifdef TINYDDP_WITH_CUDA
  return kernels::cuda::device_count();
#else
  return 0;
#endif
}

void synchronize(Device device) {
  if (device.is_cpu()) return;
#ifdef TINYDDP_WITH_CUDA
  backend::use_cuda_device(device);
  kernels::cuda::synchronize(device.index);
#else
  backend::fail_unavailable(device);
#endif
}

namespace backend {

void fail_unavailable(Device device) {
#ifdef TINYDDP_WITH_CUDA
  const int count = kernels::cuda::device_count();
  if (count == 0)
    throw Error(detail::concat("device ", device.str(), " is not available: ", kernels::cuda::unavailable_reason(),
                               ". Run on a machine with an NVIDIA GPU and driver, or keep tensors on the CPU."));
  throw Error(detail::concat("device ", device.str(), " is not available: this machine has ", count,
                             " CUDA device(s), numbered 0 to ", count - 1, "."));
#else
  throw Error(detail::concat("device ", device.str(),
                             " is not available: tinyddp was built without CUDA (no nvcc was found at configure "
                             "time). Install the CUDA toolkit and reconfigure, or keep tensors on the CPU."));
#endif
}

void use_cuda_device(Device device) {
#ifdef TINYDDP_WITH_CUDA
  // The device this thread last made current; -1 until the first CUDA call of the thread.
  thread_local int current = -1;
  if (current == device.index) return;
  if (device.index < 0 || device.index >= kernels::cuda::device_count()) fail_unavailable(device);
  kernels::cuda::set_device(device.index);
  current = device.index;
#else
  fail_unavailable(device);
#endif
}

void* allocate(size_t nbytes, Device device) {
  if (device.is_cpu()) {
    void* p = allocate_host(nbytes);
    TINYDDP_CHECK(p != nullptr, "out of memory allocating ", nbytes, " bytes on the CPU.");
    host_counters.allocations.fetch_add(1, std::memory_order_relaxed);
    host_counters.bytes_allocated.fetch_add(nbytes, std::memory_order_relaxed);
    return p;
  }
#ifdef TINYDDP_WITH_CUDA
  use_cuda_device(device);
  return kernels::cuda::allocate(nbytes, device.index);
#else
  fail_unavailable(device);
#endif
}

void deallocate(void* ptr, size_t nbytes, Device device) {
  if (device.is_cpu()) {
    free_host(ptr, nbytes);
    host_counters.frees.fetch_add(1, std::memory_order_relaxed);
    host_counters.bytes_freed.fetch_add(nbytes, std::memory_order_relaxed);
    return;
  }
#ifdef TINYDDP_WITH_CUDA
  kernels::cuda::deallocate(ptr);
#endif
}

HostAllocatorStats host_allocator_stats() {
  constexpr auto relaxed = std::memory_order_relaxed;
  return {host_counters.allocations.load(relaxed), host_counters.frees.load(relaxed),
          host_counters.bytes_allocated.load(relaxed), host_counters.bytes_freed.load(relaxed)};
}

void copy_bytes(void* dst, Device dst_device, const void* src, Device src_device, size_t nbytes) {
  if (nbytes == 0) return;
  if (dst_device.is_cpu() && src_device.is_cpu()) {
    std::memcpy(dst, src, nbytes);
    return;
  }
#ifdef TINYDDP_WITH_CUDA
  if (src_device.is_cpu()) {
    use_cuda_device(dst_device);
    kernels::cuda::copy_host_to_device(dst, src, nbytes, dst_device.index);
  } else if (dst_device.is_cpu()) {
    use_cuda_device(src_device);
    kernels::cuda::copy_device_to_host(dst, src, nbytes, src_device.index);
  } else {
    TINYDDP_CHECK(src_device == dst_device, "copy between ", src_device.str(), " and ", dst_device.str(),
                  ": copies between two GPUs are not supported; go through the CPU (.to(Device::cpu())).");
    use_cuda_device(dst_device);
    kernels::cuda::copy_device_to_device(dst, src, nbytes, dst_device.index);
  }
#else
  fail_unavailable(dst_device.is_cpu() ? src_device : dst_device);
#endif
}

}  // namespace backend
}  // namespace tinyddp
