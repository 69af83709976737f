// CPU multi-tensor kernels (kernels/cpu/multi_tensor.h) on raw host buffers: the norm against a float64
// reference over hundreds of tensors of odd sizes and alignments, determinism (the same bits twice, and at
// another alignment), bucket pack/unpack, clip_by_global_norm below and above the threshold, errors.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "base/error.h"
#include "kernels/cpu/multi_tensor.h"
#include "tests/kernels/multi_tensor_cases.h"

namespace tinyddp::test {
namespace {

namespace cpu = kernels::cpu;

template <typename T>
class CpuMultiTensor : public ::testing::Test {};
using FloatTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CpuMultiTensor, FloatTypes);

template <typename T>
T norm_of(const std::vector<T>& buffer, const TensorListLayout& layout) {
  T out = std::numeric_limits<T>::quiet_NaN();   // poison: the kernel must write it
  cpu::multi_tensor_l2norm(pointers<const T>(buffer.data(), layout), layout.numels, &out);
  return out;
}

TYPED_TEST(CpuMultiTensor, NormMatchesFloat64Reference) {
  using T = TypeParam;
  for (uint64_t seed : {1u, 2u, 3u}) {
    const TensorListLayout layout = make_layout(seed, /*num_random=*/300);
    const std::vector<T> buffer = random_buffer<T>(layout.buffer_elems, seed + 100);
    const double expected = reference_norm(buffer, layout);
    const T got = norm_of(buffer, layout);
    EXPECT_NEAR(got / expected, 1.0, kNormRelTol<T>) << "seed " << seed << ": got " << got << ", expected "
                                                     << expected << " over " << layout.numels.size() << " tensors";
  }
}

TYPED_TEST(CpuMultiTensor, NormOfSingleElementsAndEmptyLists) {
  using T = TypeParam;
  const std::vector<T> v = {T(3), T(4)};
  T out = std::numeric_limits<T>::quiet_NaN();
  cpu::multi_tensor_l2norm<T>({v.data(), v.data() + 1}, {1, 1}, &out);
  EXPECT_EQ(out, T(5));   // sqrt(9 + 16)
  out = std::numeric_limits<T>::quiet_NaN();
  cpu::multi_tensor_l2norm<T>({}, {}, &out);
  EXPECT_EQ(out, T(0));
  out = std::numeric_limits<T>::quiet_NaN();
  cpu::multi_tensor_l2norm<T>({nullptr, v.data()}, {0, 0}, &out);   // only empty tensors: null is fine
  EXPECT_EQ(out, T(0));
}

TYPED_TEST(CpuMultiTensor, NormIsBitwiseDeterministicAndAlignmentFree) {
  using T = TypeParam;
  const TensorListLayout layout = make_layout(7, 300);
  const std::vector<T> buffer = random_buffer<T>(layout.buffer_elems, 77);
  const T first = norm_of(buffer, layout);
  EXPECT_EQ(bits(first), bits(norm_of(buffer, layout)));
  // The same values one element further on (every pointer's alignment changes): the same bits
  // (Note [Deterministic multi-tensor norm] in kernels/cpu/multi_tensor.cpp).
  std::vector<T> shifted(buffer.size() + 1);
  std::copy(buffer.begin(), buffer.end(), shifted.begin() + 1);
  std::vector<const T*> ptrs = pointers<const T>(shifted.data() + 1, layout);
  T out = 0;
  cpu::multi_tensor_l2norm(ptrs, layout.numels, &out);
  EXPECT_EQ(bits(first), bits(out));
}

TYPED_TEST(CpuMultiTensor, LongListsOfTinyTensors) {
  using T = TypeParam;
  // 2000 tensors: more than one CUDA launch group (512), mostly tiny.
  const TensorListLayout layout = make_layout(11, 2000, /*with_big=*/false);
  const std::vector<T> buffer = random_buffer<T>(layout.buffer_elems, 111);
  EXPECT_NEAR(norm_of(buffer, layout) / reference_norm(buffer, layout), 1.0, kNormRelTol<T>);
}

// A bucket layout for the layout's tensors: packed in order with gaps of 0-3 elements (offsets need not be
// contiguous), gaps left as the poison value.
struct BucketLayout {
  std::vector<int64_t> offsets;
  int64_t elems = 0;
};
inline BucketLayout bucket_layout(const TensorListLayout& layout) {
  BucketLayout b;
  int64_t cursor = 0;
  for (size_t i = 0; i < layout.numels.size(); ++i) {
    cursor += static_cast<int64_t>(i % 3);
    b.offsets.push_back(cursor);
    cursor += layout.numels[i];
  }
  b.elems = cursor;
  return b;
}

TYPED_TEST(CpuMultiTensor, PackScalesAndUnpackRoundTrips) {
  using T = TypeParam;
  const TensorListLayout layout = make_layout(21, 200);
  const std::vector<T> grads = random_buffer<T>(layout.buffer_elems, 221);
  const BucketLayout bucket = bucket_layout(layout);
  const T poison = T(-12345);
  for (T factor : {T(1), T(0.25), T(1) / T(3)}) {   // 1/3: inexact, every element is one rounded multiply
    std::vector<T> flat(static_cast<size_t>(bucket.elems), poison);
    cpu::bucket_pack(pointers<const T>(grads.data(), layout), layout.numels, bucket.offsets, factor, flat.data());
    std::vector<bool> written(flat.size(), false);
    for (size_t i = 0; i < layout.numels.size(); ++i)
      for (int64_t j = 0; j < layout.numels[i]; ++j) {
        const size_t k = static_cast<size_t>(bucket.offsets[i] + j);
        ASSERT_EQ(flat[k], grads[static_cast<size_t>(layout.offsets[i] + j)] * factor) << "tensor " << i << " [" << j << "]";
        written[k] = true;
      }
    for (size_t k = 0; k < flat.size(); ++k)
      if (!written[k]) {
        ASSERT_EQ(flat[k], poison) << "pack wrote into a gap at " << k;
      }

    // Unpack into a poisoned copy of the gradient buffer: tensors get the bucket's values, gaps stay poisoned.
    std::vector<T> out(grads.size(), poison);
    cpu::bucket_unpack<T>(flat.data(), bucket.offsets, layout.numels, pointers<T>(out.data(), layout));
    std::vector<bool> in_tensor(out.size(), false);
    for (size_t i = 0; i < layout.numels.size(); ++i)
      for (int64_t j = 0; j < layout.numels[i]; ++j) {
        const size_t k = static_cast<size_t>(layout.offsets[i] + j);
        ASSERT_EQ(out[k], flat[static_cast<size_t>(bucket.offsets[i] + j)]);
        in_tensor[k] = true;
      }
    for (size_t k = 0; k < out.size(); ++k)
      if (!in_tensor[k]) {
        ASSERT_EQ(out[k], poison) << "unpack wrote outside the tensors at " << k;
      }
    if (factor == T(1)) {   // factor 1: a bitwise round trip
      std::vector<T> expected(grads.size(), poison);
      for (size_t i = 0; i < layout.numels.size(); ++i)
        std::copy_n(grads.begin() + layout.offsets[i], layout.numels[i], expected.begin() + layout.offsets[i]);
      EXPECT_EQ(out, expected);
    }
  }
}

TYPED_TEST(CpuMultiTensor, ClipAboveThresholdScalesByCoefficient) {
  using T = TypeParam;
  const TensorListLayout layout = make_layout(31, 200);
  const std::vector<T> original = random_buffer<T>(layout.buffer_elems, 331);
  const T norm = norm_of(original, layout);
  const double max_norm = static_cast<double>(norm) / 4;
  std::vector<T> grads = original;
  T total_norm = std::numeric_limits<T>::quiet_NaN();
  cpu::clip_by_global_norm(pointers<T>(grads.data(), layout), layout.numels, max_norm, &total_norm);
  EXPECT_EQ(bits(total_norm), bits(norm));   // the norm before clipping, from the same kernel
  const T coef = static_cast<T>(max_norm) / (norm + static_cast<T>(1e-6));   // PyTorch's formula, in T
  ASSERT_LT(coef, T(1));
  std::vector<T> expected = original;   // gaps untouched
  for (size_t i = 0; i < layout.numels.size(); ++i)
    for (int64_t j = 0; j < layout.numels[i]; ++j) expected[static_cast<size_t>(layout.offsets[i] + j)] *= coef;
  EXPECT_EQ(grads, expected);
  EXPECT_NEAR(norm_of(grads, layout) / max_norm, 1.0, 1e-5);   // clipped to max_norm (up to the 1e-6)
}

TYPED_TEST(CpuMultiTensor, ClipBelowThresholdLeavesTensorsAlone) {
  using T = TypeParam;
  const TensorListLayout layout = make_layout(41, 100);
  const std::vector<T> original = random_buffer<T>(layout.buffer_elems, 441);
  const T norm = norm_of(original, layout);
  for (double max_norm : {2.0 * static_cast<double>(norm), static_cast<double>(norm)}) {
    // max_norm == norm: coef = norm / (norm + 1e-6) < 1 in exact math, but rounds to 1 for a norm this large
    // in float32; either way the tensors stay within one rounding of themselves.
    std::vector<T> grads = original;
    T total_norm = 0;
    cpu::clip_by_global_norm(pointers<T>(grads.data(), layout), layout.numels, max_norm, &total_norm);
    EXPECT_EQ(bits(total_norm), bits(norm));
    const T coef = static_cast<T>(max_norm) / (norm + static_cast<T>(1e-6));
    if (coef >= T(1)) {
      EXPECT_EQ(grads, original) << "coefficient 1: nothing may change";
    }
  }
}

TYPED_TEST(CpuMultiTensor, RejectsBadArguments) {
  using T = TypeParam;
  std::vector<T> v(4, T(1));
  T out = 0;
  EXPECT_THROW(cpu::multi_tensor_l2norm<T>({v.data()}, {4, 4}, &out), Error);
  EXPECT_THROW(cpu::multi_tensor_l2norm<T>({v.data()}, {-1}, &out), Error);
  EXPECT_THROW(cpu::multi_tensor_l2norm<T>({nullptr}, {3}, &out), Error);
  EXPECT_THROW(cpu::multi_tensor_l2norm<T>({v.data()}, {4}, nullptr), Error);
  EXPECT_THROW(cpu::bucket_pack<T>({v.data()}, {4}, {}, T(1), v.data()), Error);
  EXPECT_THROW(cpu::bucket_pack<T>({v.data()}, {4}, {-2}, T(1), v.data()), Error);
  EXPECT_THROW(cpu::bucket_unpack<T>(v.data(), {0, 1}, {1}, {v.data()}), Error);
  EXPECT_THROW(cpu::clip_by_global_norm<T>({v.data()}, {4}, 0.0, &out), Error);
  EXPECT_THROW(cpu::clip_by_global_norm<T>({v.data()}, {4}, std::nan(""), &out), Error);
  try {
    cpu::multi_tensor_l2norm<T>({v.data(), v.data()}, {4}, &out);
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("expected one numel per tensor, got 2 tensors and 1 numels"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace tinyddp::test
