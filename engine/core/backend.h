// Backend dispatch: the one place that picks kernels/cpu or kernels/cuda by the device holding the data.
// Ops call backend::unary<T>(device, ...) with the arguments of the kernel's contract (kernels/contract.h);
// pointers are on `device`. A build without CUDA (no nvcc, TINYDDP_WITH_CUDA undefined) compiles the same ops;
// asking it for a CUDA device is an Error that says how to get a CUDA build.
#pragma once

#include <cstddef>
#include <cstdint>

#include "engine/core/dtype.h"
#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/multi_tensor.h"
#include "kernels/cpu/reduce.h"
#ifdef TINYDDP_WITH_CUDA
#include "kernels/cuda/elementwise.h"
#include "kernels/cuda/matmul.h"
#include "kernels/cuda/multi_tensor.h"
#include "kernels/cuda/reduce.h"
#endif

namespace tinyddp::backend {

using kernels::Dims;

// Throws: `device` is not usable in this build or on this machine. Names the device count and the reason.
[[noreturn]] void fail_unavailable(Device device);
// Makes device's GPU current on this thread (cheap when it already is); checks the index.
void use_cuda_device(Device device);

// ---- memory (bytes) ----
void* allocate(size_t nbytes, Device device);   // CPU: aligned malloc; CUDA: the caching allocator
void deallocate(void* ptr, size_t nbytes, Device device);   // nbytes: as allocated

// What the CPU allocator handed out since the process started, over all threads: lets a test promise "no new
// buffers" (a steady-state DDP step). Counted with relaxed atomics, a few ns next to a malloc.
struct HostAllocatorStats {
  uint64_t allocations = 0;       // calls of allocate(..., cpu)
  uint64_t frees = 0;             // calls of deallocate(..., cpu)
  uint64_t bytes_allocated = 0;   // the bytes those allocations asked for
  uint64_t bytes_freed = 0;
  int64_t bytes_in_use() const { return static_cast<int64_t>(bytes_allocated - bytes_freed); }
};
HostAllocatorStats host_allocator_stats();
// Any direction between host and device; device-to-device copies are queued on the compute stream,
// copies that touch the host return when the host side is ready.
void copy_bytes(void* dst, Device dst_device, const void* src, Device src_device, size_t nbytes);

}  // namespace tinyddp::backend

// Runs kernels::cpu::CALL or kernels::cuda::CALL (CALL is the rest of the arguments, commas allowed).
#ifdef TINYDDP_WITH_CUDA
#define TINYDDP_ON_DEVICE(device, ...)            \
  do {                                            \
    if ((device).is_cpu()) {                      \
      ::tinyddp::kernels::cpu::__VA_ARGS__;       \
    } else {                                      \
      ::tinyddp::backend::use_cuda_device(device); \
      ::tinyddp::kernels::cuda::__VA_ARGS__;      \
    }                                             \
  } while (0)
#else
#define TINYDDP_ON_DEVICE(device, ...)                   \
  do {                                                   \
    if ((device).is_cpu()) {                             \
      ::tinyddp::kernels::cpu::__VA_ARGS__;              \
    } else {                                             \
      ::tinyddp::backend::fail_unavailable(device);      \
    }                                                    \
  } while (0)
#endif

namespace tinyddp::backend {

using kernels::BinaryOp;
using kernels::CompareOp;
using kernels::UnaryOp;

// ---- kernels: backend::name(device, params...) for each kernel of kernels/contract.h ----
#define TINYDDP_FORWARD_KERNEL(name, types, params, args)                        \
  TINYDDP_HEAD_##types void name(Device device, TINYDDP_UNPARENTHESIZE params) { \
    TINYDDP_ON_DEVICE(device, name<TINYDDP_TARGS_##types> args);                 \
  }
TINYDDP_KERNELS(TINYDDP_FORWARD_KERNEL)
#undef TINYDDP_FORWARD_KERNEL

}  // namespace tinyddp::backend
