// The CUDA runtime as tinyddp uses it: devices, the caching allocator, copies, the compute stream.
//
//   void* p = cuda::allocate(1 << 20, /*device=*/0);   // from the cache; cudaMalloc only on a miss
//   cuda::deallocate(p);                              // back to the cache, never cudaFree mid-run
//
// Invariants:
//  - every kernel of kernels/cuda runs on compute_stream(device) of the device that owns its pointers;
//    that stream is the legacy default stream, so host copies and kernels stay in program order and a
//    block returned to the cache can be handed out again at once (stream order makes it safe);
//  - memory used on another stream (NCCL's communication stream) must be kept alive by its user until
//    that stream is done with it: the allocator knows one stream only;
//  - nothing here links the CUDA driver library: the runtime is linked statically and finds the driver
//    at run time, so device_count() is 0 (not a crash) on a machine without one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace tinyddp::kernels::cuda {

// Number of usable devices; 0 when there is no driver or no device (never throws).
int device_count();
// Why device_count() is 0, in words ("no CUDA driver" ...), or "" when it is not.
std::string unavailable_reason();

// Makes `device` current on this thread (cudaSetDevice); throws naming the device count if out of range.
void set_device(int device);
int current_device();
// Blocks until all work on `device` finished; turns a kernel fault into an Error.
void synchronize(int device);

// ---- caching allocator ----
// Sizes are rounded up to 512 bytes; a freed block waits in a per-(device, size) free list and is reused
// for the next request of that rounded size. cudaMalloc runs only when no cached block fits; on
// out-of-memory the cache is emptied once and the request retried.
void* allocate(size_t nbytes, int device);
void deallocate(void* ptr);     // ptr from allocate(); nullptr is ignored
void empty_cache();             // cudaFree every cached (unused) block

struct AllocatorStats {
  int64_t cuda_malloc_calls = 0;   // cudaMalloc calls since start: flat after warm-up
  int64_t allocations = 0;         // allocate() calls served
  int64_t bytes_in_use = 0;        // handed out and not yet returned (rounded sizes)
  int64_t bytes_cached = 0;        // held in free lists
};
AllocatorStats allocator_stats(int device);

// ---- copies (byte counts; pointers on `device` where they are device pointers) ----
// Host <-> device copies return when the host side may be reused or read (they synchronize).
void copy_host_to_device(void* dst, const void* src, size_t nbytes, int device);
void copy_device_to_host(void* dst, const void* src, size_t nbytes, int device);
// Ordered on the compute stream; returns at once.
void copy_device_to_device(void* dst, const void* src, size_t nbytes, int device);

// Throws an Error naming `what` if the last launch on this thread failed (cudaGetLastError).
void check_last_launch(const char* what);

}  // namespace tinyddp::kernels::cuda
