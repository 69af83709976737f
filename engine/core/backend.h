// Backend dispatch: the one place that picks kernels/cpu or kernels/cuda by the device holding the data.
// Ops call backend::unary<T>(device, ...) with the arguments of the kernels' shared contract; pointers
// are on `device`. A build without CUDA (no nvcc, TINYDDP_WITH_CUDA undefined) compiles the same ops;
// asking it for a CUDA device is an Error that says how to get a CUDA build.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

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

using Dims = std::vector<int64_t>;

// Throws: `device` is not usable in this build or on this machine. Names the device count and the reason.
[[noreturn]] void fail_unavailable(Device device);
// Makes device's GPU current on this thread (cheap when it already is); checks the index.
void use_cuda_device(Device device);

// ---- memory (bytes) ----
void* allocate(size_t nbytes, Device device);   // CPU: aligned malloc; CUDA: the caching allocator
void deallocate(void* ptr, Device device);
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

// ---- kernels: the contracts of kernels/cpu/*.h, on `device` ----
template <typename T>
void unary(Device d, kernels::UnaryOp op, const T* x, T* y, int64_t n, double a = 0.0, double b = 0.0) {
  TINYDDP_ON_DEVICE(d, unary<T>(op, x, y, n, a, b));
}
template <typename T>
void binary(Device d, kernels::BinaryOp op, const Dims& shape, const T* a, const Dims& a_strides, const T* b,
            const Dims& b_strides, T* out) {
  TINYDDP_ON_DEVICE(d, binary<T>(op, shape, a, a_strides, b, b_strides, out));
}
template <typename T>
void copy_to_contiguous(Device d, const Dims& shape, const T* src, const Dims& src_strides, T* dst) {
  TINYDDP_ON_DEVICE(d, copy_to_contiguous<T>(shape, src, src_strides, dst));
}
template <typename T>
void copy_from_contiguous(Device d, const Dims& shape, const T* src, T* dst, const Dims& dst_strides) {
  TINYDDP_ON_DEVICE(d, copy_from_contiguous<T>(shape, src, dst, dst_strides));
}
template <typename T>
void axpy(Device d, const T* x, const T* z, T alpha, T* y, int64_t n) {
  TINYDDP_ON_DEVICE(d, axpy<T>(x, z, alpha, y, n));
}
template <typename S, typename D>
void convert(Device d, const S* src, D* dst, int64_t n) {
  TINYDDP_ON_DEVICE(d, convert<S, D>(src, dst, n));
}
template <typename T>
void sum_dims(Device d, const Dims& shape, const std::vector<bool>& reduce, const T* x, T* out) {
  TINYDDP_ON_DEVICE(d, sum_dims<T>(shape, reduce, x, out));
}
template <typename T>
void max_dim(Device d, int64_t outer, int64_t size, int64_t inner, const T* x, T* values, int64_t* indices) {
  TINYDDP_ON_DEVICE(d, max_dim<T>(outer, size, inner, x, values, indices));
}
template <typename T>
void log_softmax(Device d, int64_t outer, int64_t size, int64_t inner, const T* x, T* y) {
  TINYDDP_ON_DEVICE(d, log_softmax<T>(outer, size, inner, x, y));
}
template <typename T>
void one_hot(Device d, int64_t outer, int64_t size, int64_t inner, const int64_t* indices, T* out) {
  TINYDDP_ON_DEVICE(d, one_hot<T>(outer, size, inner, indices, out));
}
template <typename T>
void gemm(Device d, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b,
          int64_t ldb, T* c, int64_t ldc) {
  TINYDDP_ON_DEVICE(d, gemm<T>(trans_a, trans_b, m, n, k, a, lda, b, ldb, c, ldc));
}
template <typename T>
void multi_tensor_l2norm(Device d, const std::vector<const T*>& tensors, const Dims& numels, T* out) {
  TINYDDP_ON_DEVICE(d, multi_tensor_l2norm<T>(tensors, numels, out));
}
template <typename T>
void bucket_pack(Device d, const std::vector<const T*>& srcs, const Dims& numels, const Dims& offsets, T factor,
                 T* flat) {
  TINYDDP_ON_DEVICE(d, bucket_pack<T>(srcs, numels, offsets, factor, flat));
}
template <typename T>
void bucket_unpack(Device d, const T* flat, const Dims& offsets, const Dims& numels, const std::vector<T*>& dsts) {
  TINYDDP_ON_DEVICE(d, bucket_unpack<T>(flat, offsets, numels, dsts));
}
template <typename T>
void clip_by_global_norm(Device d, const std::vector<T*>& tensors, const Dims& numels, double max_norm,
                         T* total_norm) {
  TINYDDP_ON_DEVICE(d, clip_by_global_norm<T>(tensors, numels, max_norm, total_norm));
}

}  // namespace tinyddp::backend
