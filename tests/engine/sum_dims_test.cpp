// sum over dims (the bias gradient's reduction) against an element-by-element walk in the input's order:
// the kernel merges runs of dims and adds whole rows, and must give the same bits (each output adds its
// inputs in input order, from 0).
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "tests/engine/test_util.h"

namespace tinyddp::test {
namespace {

template <typename T>
std::vector<T> walk_sum(const std::vector<T>& x, const Shape& shape, const std::vector<bool>& reduce) {
  const size_t nd = shape.size();
  std::vector<int64_t> out_strides(nd);
  int64_t acc = 1;
  for (size_t d = nd; d-- > 0;) {
    out_strides[d] = reduce[d] ? 0 : acc;
    if (!reduce[d]) acc *= shape[d];
  }
  std::vector<T> out(acc, T(0));
  std::vector<int64_t> idx(nd, 0);
  for (const T& v : x) {
    int64_t o = 0;
    for (size_t d = 0; d < nd; ++d) o += idx[d] * out_strides[d];
    out[o] += v;
    for (size_t d = nd; d-- > 0;) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

template <typename T>
void expect_same_bits(const Shape& shape, const std::vector<int64_t>& dims) {
  std::mt19937 rng(17);
  std::normal_distribution<double> normal;
  std::vector<T> values(numel_of(shape));
  for (T& v : values) v = static_cast<T>(normal(rng) * 1e3);   // wide magnitudes: rounding differs by order
  if (!values.empty()) values[0] = T(-0.0);
  std::vector<bool> reduce(shape.size(), false);
  for (int64_t d : dims) reduce[d] = true;
  const std::vector<T> expected = walk_sum(values, shape, reduce);
  const std::vector<T> actual = sum(from_vector(values, shape), dims).template to_vector<T>();
  ASSERT_EQ(actual.size(), expected.size());
  EXPECT_EQ(std::memcmp(actual.data(), expected.data(), actual.size() * sizeof(T)), 0)
      << "shape " << shape_str(shape) << ", max difference "
      << max_abs_diff(from_vector(actual, {int64_t(actual.size())}), from_vector(expected, {int64_t(expected.size())}));
}

TEST(SumDims, BiasGradientShapeIsBitwiseTheWalk) {
  expect_same_bits<float>({64, 256}, {0});
  expect_same_bits<double>({64, 10}, {0});
  expect_same_bits<float>({3, 1001}, {0});
}

TEST(SumDims, InterleavedRunsAndUnitDimsAreBitwiseTheWalk) {
  expect_same_bits<float>({4, 5, 6}, {1});
  expect_same_bits<float>({4, 5, 6}, {0, 2});
  expect_same_bits<double>({4, 5, 6}, {2});
  expect_same_bits<double>({2, 1, 3, 1, 4}, {0, 1});
  expect_same_bits<float>({1, 7, 1}, {0, 2});
  expect_same_bits<float>({1, 1}, {1});
  expect_same_bits<float>({5, 6, 7, 2}, {0, 1, 3});
}

}  // namespace
}  // namespace tinyddp::test
