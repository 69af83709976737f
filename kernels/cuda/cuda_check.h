// Internal to kernels/cuda: turning CUDA runtime and cuBLAS return codes into tinyddp::Error.
//
//   TINYDDP_CUDA_CHECK(cudaMemcpy(...));        throws "CUDA error at file:line: <call> failed: <name> (<string>)"
//   TINYDDP_CUBLAS_CHECK(cublasSgemm(...));     likewise with cuBLAS's status name and string
//   DeviceGuard guard(device);                  makes `device` current until the end of the scope
//
// A failed runtime call also leaves its code in the thread's "last error" slot, where the next
// check_last_launch() would find it and blame an innocent kernel; the check clears it before throwing.
// (A sticky error, a kernel fault, cannot be cleared: every later call reports it, which is what we want.)
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <string>

#include "base/error.h"

namespace tinyddp::kernels::cuda::detail {

[[noreturn]] inline void throw_cuda_error(cudaError_t err, const char* call, const char* file, int line) {
  (void)cudaGetLastError();   // clear the non-sticky copy of this error (see the note at the top)
  throw ::tinyddp::Error(::tinyddp::detail::concat("CUDA error at ", file, ":", line, ": ", call, " failed: ",
                                                   cudaGetErrorName(err), " (", cudaGetErrorString(err), ")"));
}

[[noreturn]] inline void throw_cublas_error(cublasStatus_t status, const char* call, const char* file, int line) {
  throw ::tinyddp::Error(::tinyddp::detail::concat("cuBLAS error at ", file, ":", line, ": ", call, " failed: ",
                                                   cublasGetStatusName(status), " (", cublasGetStatusString(status),
                                                   ")"));
}

// Makes `device` current on this thread and restores the previous one on scope exit, so that a
// function working on an explicit device leaves the caller's current device as it was.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    cudaError_t err = cudaGetDevice(&previous_);
    if (err != cudaSuccess) throw_cuda_error(err, "cudaGetDevice(&previous)", __FILE__, __LINE__);
    if (previous_ != device) {
      err = cudaSetDevice(device);
      if (err != cudaSuccess) throw_cuda_error(err, "cudaSetDevice(device)", __FILE__, __LINE__);
      changed_ = true;
    }
  }
  ~DeviceGuard() {
    if (changed_) (void)cudaSetDevice(previous_);   // best effort: a destructor must not throw
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = 0;
  bool changed_ = false;
};

}  // namespace tinyddp::kernels::cuda::detail

#define TINYDDP_CUDA_CHECK(call)                                                                    \
  do {                                                                                              \
    const cudaError_t tinyddp_cuda_err_ = (call);                                                   \
    if (tinyddp_cuda_err_ != cudaSuccess)                                                           \
      ::tinyddp::kernels::cuda::detail::throw_cuda_error(tinyddp_cuda_err_, #call, __FILE__, __LINE__); \
  } while (0)

#define TINYDDP_CUBLAS_CHECK(call)                                                                        \
  do {                                                                                                    \
    const cublasStatus_t tinyddp_cublas_status_ = (call);                                                 \
    if (tinyddp_cublas_status_ != CUBLAS_STATUS_SUCCESS)                                                  \
      ::tinyddp::kernels::cuda::detail::throw_cublas_error(tinyddp_cublas_status_, #call, __FILE__, __LINE__); \
  } while (0)
