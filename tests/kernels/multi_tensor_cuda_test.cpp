// CUDA multi-tensor kernels (kernels/cuda/multi_tensor.h): the CPU suite's checks on the device. Inputs are
// fresh random buffers copied to the device, outputs are poisoned first, and results are compared with the
// float64 reference (relative error), with the CPU kernels, and with themselves (two runs, and the same values
// at another alignment: the same bits). That the norm never synchronizes with the host is not tested here
// (it would need a profiler); it holds by construction (kernels/cuda/multi_tensor.cu, Note [Why no atomics
// and no host sync]).
//
// Compiles in every build. Without CUDA (no TINYDDP_WITH_CUDA) or without a device every test skips.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "base/error.h"
#include "kernels/cpu/multi_tensor.h"
#include "tests/kernels/multi_tensor_cases.h"

#ifdef TINYDDP_WITH_CUDA
#include "kernels/cuda/multi_tensor.h"
#include "kernels/cuda/runtime.h"
#endif

namespace tinyddp::test {
namespace {

template <typename T>
class CudaMultiTensor : public ::testing::Test {
 protected:
  void SetUp() override {
#ifdef TINYDDP_WITH_CUDA
    if (kernels::cuda::device_count() == 0)
      GTEST_SKIP() << "no CUDA device: " << kernels::cuda::unavailable_reason();
#else
    GTEST_SKIP() << "built without CUDA";
#endif
  }
};
using FloatTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CudaMultiTensor, FloatTypes);

#ifdef TINYDDP_WITH_CUDA
namespace cuda = kernels::cuda;
constexpr int kDevice = 0;

// A device buffer of n elements of T from the caching allocator, freed on scope exit.
template <typename T>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(int64_t n) : n_(n) {
    ptr_ = static_cast<T*>(cuda::allocate(static_cast<size_t>(std::max<int64_t>(n, 1)) * sizeof(T), kDevice));
  }
  explicit DeviceBuffer(const std::vector<T>& host) : DeviceBuffer(static_cast<int64_t>(host.size())) { upload(host); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { cuda::deallocate(ptr_); }

  T* get() const { return ptr_; }
  void upload(const std::vector<T>& host) {
    ASSERT_EQ(static_cast<int64_t>(host.size()), n_);
    if (n_ > 0) cuda::copy_host_to_device(ptr_, host.data(), host.size() * sizeof(T), kDevice);
  }
  void fill(T value) { upload(std::vector<T>(static_cast<size_t>(n_), value)); }
  std::vector<T> download() const {   // synchronizes: the kernels before it have finished
    std::vector<T> host(static_cast<size_t>(n_));
    if (n_ > 0) cuda::copy_device_to_host(host.data(), ptr_, host.size() * sizeof(T), kDevice);
    return host;
  }

 private:
  T* ptr_ = nullptr;
  int64_t n_ = 0;
};

// The device norm of the layout's tensors inside `buffer` (element offset `shift` from its start).
template <typename T>
T device_norm(const DeviceBuffer<T>& buffer, const TensorListLayout& layout, int64_t shift = 0) {
  DeviceBuffer<T> out(1);
  out.fill(std::numeric_limits<T>::quiet_NaN());   // poison: the kernel must write it
  cuda::multi_tensor_l2norm(pointers<const T>(buffer.get() + shift, layout), layout.numels, out.get());
  return out.download()[0];
}

template <typename T>
T host_norm(const std::vector<T>& buffer, const TensorListLayout& layout) {
  T out = std::numeric_limits<T>::quiet_NaN();
  kernels::cpu::multi_tensor_l2norm(pointers<const T>(buffer.data(), layout), layout.numels, &out);
  return out;
}
#endif  // TINYDDP_WITH_CUDA

TYPED_TEST(CudaMultiTensor, NormMatchesFloat64ReferenceAndCpu) {
#ifdef TINYDDP_WITH_CUDA
  using T = TypeParam;
  for (uint64_t seed : {1u, 2u, 3u}) {
    const TensorListLayout layout = make_layout(seed, 300);
    const std::vector<T> host = random_buffer<T>(layout.buffer_elems, seed + 1000);
    const DeviceBuffer<T> device(host);
    const double expected = reference_norm(host, layout);
    const T got = device_norm(device, layout);
    EXPECT_NEAR(got / expected, 1.0, kNormRelTol<T>) << "seed " << seed << ": got " << got << ", expected " << expected;
    EXPECT_NEAR(got / host_norm(host, layout), 1.0, 2 * kNormRelTol<T>) << "CUDA vs CPU kernel";
  }
#endif
}

TYPED_TEST(CudaMultiTensor, NormOfSmallAndEmptyLists) {
#ifdef TINYDDP_WITH_CUDA
  using T = TypeParam;
  const DeviceBuffer<T> v(std::vector<T>{T(3), T(4)});
  DeviceBuffer<T> out(1);
  out.fill(std::numeric_limits<T>::quiet_NaN());
  cuda::multi_tensor_l2norm<T>({v.get(), v.get() + 1}, {1, 1}, out.get());
  EXPECT_EQ(out.download()[0], T(5));
  out.fill(std::numeric_limits<T>::quiet_NaN());
  cuda::multi_tensor_l2norm<T>({}, {}, out.get());
  EXPECT_EQ(out.download()[0], T(0));
  out.fill(std::numeric_limits<T>::quiet_NaN());
  cuda::multi_tensor_l2norm<T>({nullptr, v.get()}, {0, 0}, out.get());
  EXPECT_EQ(out.download()[0], T(0));
#endif
}

TYPED_TEST(CudaMultiTensor, NormIsBitwiseDeterministicAndAlignmentFree) {
#ifdef TINYDDP_WITH_CUDA
  using T = TypeParam;
  const TensorListLayout layout = make_layout(7, 300);
  const std::vector<T> host = random_buffer<T>(layout.buffer_elems, 7007);
  const DeviceBuffer<T> device(host);
  const T first = device_norm(device, layout);
  for (int run = 0; run < 3; ++run) EXPECT_EQ(bits(first), bits(device_norm(device, layout))) << "run " << run;
  // Shifted by 1..3 elements: every tensor's 16-byte alignment changes (vector and scalar paths swap).
  for (int64_t shift : {1, 2, 3}) {
    std::vector<T> shifted(host.size() + 3);
    std::copy(host.begin(), host.end(), shifted.begin() + shift);
    const DeviceBuffer<T> device_shifted(shifted);
    EXPECT_EQ(bits(first), bits(device_norm(device_shifted, layout, shift))) << "shift " << shift;
  }
#endif
}

TYPED_TEST(CudaMultiTensor, LongListsTakeSeveralLaunches) {
#ifdef TINYDDP_WITH_CUDA
  using T = TypeParam;
  // 2000 tensors = 4 launch groups of <= 512; with the big ones, groups of uneven chunk counts.
  for (bool with_big : {false, true}) {
    const TensorListLayout layout = make_layout(11, 2000, with_big);
    const std::vector<T> host = random_buffer<T>(layout.buffer_elems, 1111);
    const DeviceBuffer<T> device(host);
    EXPECT_NEAR(device_norm(device, layout) / reference_norm(host, layout), 1.0, kNormRelTol<T>);
  }
#endif
}

TYPED_TEST(CudaMultiTensor, PackScalesAndUnpackRoundTrips) {
#ifdef TINYDDP_WITH_CUDA
  using T = TypeParam;
  const TensorListLayout layout = make_layout(21, 600);   // > 512 tensors: two launches
  const std::vector<T> grads = random_buffer<T>(layout.buffer_elems, 2121);
  const DeviceBuffer<T> d_grads(grads);
  // Bucket offsets with gaps of 0-2 elements, so bucket slots are misaligned too.
  std::vector<int64_t> offsets;
  int64_t bucket_elems = 0;
  for (size_t i = 0; i < layout.numels.size(); ++i) {
    bucket_elems += static_cast<int64_t>(i % 3);
    offsets.push_back(bucket_elems);
    bucket_elems += layout.numels[i];
  }
  const T poison = T(-12345);
  for (T factor : {T(1), T(0.25), T(1) / T(3)}) {
    DeviceBuffer<T> flat(bucket_elems);
    flat.fill(poison);
    cuda::bucket_pack(pointers<const T>(d_grads.get(), layout), layout.numels, offsets, factor, flat.get());
    // The CPU kernel on the same inputs is the expected bucket: one rounded multiply per element either way.
    std::vector<T> expected_flat(static_cast<size_t>(bucket_elems), poison);
    kernels::cpu::bucket_pack(pointers<const T>(grads.data(), layout), layout.numels, offsets, factor,
                              expected_flat.data());
    const std::vector<T> got_flat = flat.download();
    ASSERT_EQ(got_flat, expected_flat) << "factor " << factor;

    DeviceBuffer<T> d_out(layout.buffer_elems);
    d_out.fill(poison);
    cuda::bucket_unpack<T>(flat.get(), offsets, layout.numels, pointers<T>(d_out.get(), layout));
    std::vector<T> expected_out(grads.size(), poison);
    kernels::cpu::bucket_unpack<T>(expected_flat.data(), offsets, layout.numels, pointers<T>(expected_out.data(), layout));
    ASSERT_EQ(d_out.download(), expected_out) << "factor " << factor;
  }
#endif
}

TYPED_TEST(CudaMultiTensor, ClipAboveThresholdScalesOnTheDevice) {
#ifdef TINYDDP_WITH_CUDA
  using T = TypeParam;
  const TensorListLayout layout = make_layout(31, 300);
  const std::vector<T> original = random_buffer<T>(layout.buffer_elems, 3131);
  DeviceBuffer<T> grads(original);
  const T norm = device_norm(grads, layout);
  const double max_norm = static_cast<double>(norm) / 4;
  DeviceBuffer<T> total_norm(1);
  total_norm.fill(std::numeric_limits<T>::quiet_NaN());
  cuda::clip_by_global_norm(pointers<T>(grads.get(), layout), layout.numels, max_norm, total_norm.get());
  EXPECT_EQ(bits(total_norm.download()[0]), bits(norm));
  const T coef = static_cast<T>(max_norm) / (norm + static_cast<T>(1e-6));   // what the device computes, in T
  std::vector<T> expected = original;   // gaps untouched
  for (size_t i = 0; i < layout.numels.size(); ++i)
    for (int64_t j = 0; j < layout.numels[i]; ++j) expected[static_cast<size_t>(layout.offsets[i] + j)] *= coef;
  EXPECT_EQ(grads.download(), expected);
  EXPECT_NEAR(static_cast<double>(device_norm(grads, layout)) / max_norm, 1.0, 1e-5);
#endif
}

TYPED_TEST(CudaMultiTensor, ClipBelowThresholdLeavesTensorsAlone) {
#ifdef TINYDDP_WITH_CUDA
  using T = TypeParam;
  const TensorListLayout layout = make_layout(41, 300);
  const std::vector<T> original = random_buffer<T>(layout.buffer_elems, 4141);
  DeviceBuffer<T> grads(original);
  const T norm = device_norm(grads, layout);
  DeviceBuffer<T> total_norm(1);
  total_norm.fill(std::numeric_limits<T>::quiet_NaN());
  cuda::clip_by_global_norm(pointers<T>(grads.get(), layout), layout.numels, 2.0 * static_cast<double>(norm),
                            total_norm.get());
  EXPECT_EQ(bits(total_norm.download()[0]), bits(norm));
  EXPECT_EQ(grads.download(), original) << "coefficient 1: nothing may change";
#endif
}

TYPED_TEST(CudaMultiTensor, RejectsBadArguments) {
#ifdef TINYDDP_WITH_CUDA
  using T = TypeParam;
  const DeviceBuffer<T> v(4);
  EXPECT_THROW(cuda::multi_tensor_l2norm<T>({v.get()}, {4, 4}, v.get()), Error);
  EXPECT_THROW(cuda::multi_tensor_l2norm<T>({nullptr}, {3}, v.get()), Error);
  EXPECT_THROW(cuda::multi_tensor_l2norm<T>({v.get()}, {4}, nullptr), Error);
  EXPECT_THROW(cuda::bucket_pack<T>({v.get()}, {4}, {-1}, T(1), v.get()), Error);
  EXPECT_THROW(cuda::clip_by_global_norm<T>({v.get()}, {4}, -1.0, v.get()), Error);
#endif
}

}  // namespace
}  // namespace tinyddp::test
