// sum over dims. Floating-point matrices (the reduction of everything, of rows, or of columns: the bias gradient's)
// round as PyTorch 1.13's CPU cascade_sum does (kernels/cpu/cascade_sum.h, Note [ATen's cascade sum]): the bits
// of 1.13's results, hashed (FNV-1a over the output's bytes; values from tests/golden's formula below, hashes
// printed by PyTorch 1.13 for the same inputs). Three runs of dims or more keep an element-by-element walk in the
// input's order: the kernel merges runs of dims and adds whole rows, and must give the walk's bits.
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

// The inputs PyTorch summed: ((i * 7919) % 2003 - 1001) / 7 * (1 + i % 13) in double, cast to T (exact
// arithmetic, so the same values everywhere). In PyTorch 1.13:
//   t = torch.tensor(values, dtype=torch.float64).to(dtype).reshape(shape); fnv1a(t.sum(dims).numpy().tobytes())
template <typename T>
void expect_pytorch_bits(const Shape& shape, const std::vector<int64_t>& dims, uint64_t expected_fnv1a) {
  std::vector<T> values(numel_of(shape));
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = static_cast<T>(static_cast<double>(static_cast<int64_t>((i * 7919) % 2003) - 1001) / 7.0 *
                               static_cast<double>(1 + i % 13));
  const std::vector<T> actual = sum(from_vector(values, shape), dims).template to_vector<T>();
  uint64_t h = 0xcbf29ce484222325ULL;
  const auto* bytes = reinterpret_cast<const unsigned char*>(actual.data());
  for (size_t i = 0; i < actual.size() * sizeof(T); ++i) h = (h ^ bytes[i]) * 0x100000001b3ULL;
  EXPECT_EQ(h, expected_fnv1a) << "shape " << shape_str(shape) << ": not PyTorch 1.13's sums, bit for bit";
}

TEST(SumDims, MatricesRoundAsPyTorchsCascadeSum) {
  expect_pytorch_bits<float>({64, 256}, {0}, 0xb30d73b6b1fe4907ULL);    // columns, 32 at a time, then 8 at a time
  expect_pytorch_bits<double>({64, 10}, {0}, 0xdcb793fce1d39abaULL);
  expect_pytorch_bits<float>({3, 1001}, {0}, 0xa6d017158151765aULL);
  expect_pytorch_bits<float>({7, 300}, {1}, 0x4a6b476f373ec829ULL);     // rows, as vectors of 8
  expect_pytorch_bits<double>({5, 6}, {1}, 0x9916dd57393b1930ULL);
  expect_pytorch_bits<double>({4, 5, 6}, {2}, 0xde64eaf54576cf68ULL);   // (20, 6) rows
  expect_pytorch_bits<float>({1000}, {0}, 0x0948b4792571a52fULL);        // everything
  expect_pytorch_bits<float>({5}, {0}, 0x5eeb7ad07dd869f8ULL);           // below one vector
  expect_pytorch_bits<float>({40, 3}, {0}, 0xd6fc5cb93459d91aULL);       // columns below one vector
  expect_pytorch_bits<float>({40, 6}, {0}, 0xb6ab3a3e5efc8091ULL);
  expect_pytorch_bits<float>({33, 70}, {1}, 0xa69f16c90dc578dfULL);
  expect_pytorch_bits<double>({300, 40}, {0}, 0xc6b4d62f18b8f348ULL);   // several cascade levels
}

TEST(SumDims, InterleavedRunsAndUnitDimsAreBitwiseTheWalk) {
  expect_same_bits<float>({4, 5, 6}, {1});
  expect_same_bits<float>({4, 5, 6}, {0, 2});
  expect_same_bits<double>({2, 1, 3, 1, 4}, {0, 1});
  expect_same_bits<float>({1, 7, 1}, {0, 2});
  expect_same_bits<float>({1, 1}, {1});
  expect_same_bits<float>({5, 6, 7, 2}, {0, 1, 3});
}

}  // namespace
}  // namespace tinyddp::test
