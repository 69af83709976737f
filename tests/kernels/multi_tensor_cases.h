// Test inputs shared by the CPU and CUDA multi-tensor kernel tests: a list of tensors laid out in one host
// buffer (so a test can copy the whole list to the device in one go), with the sizes that catch chunking bugs
// and pointers at every alignment, plus float64 references.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace tinyddp::test {

// Tensor i is buffer[offsets[i], offsets[i] + numels[i]). Gaps of 0-3 elements between tensors put their
// pointers at every alignment mod 16 bytes (so the CUDA kernels take both the vector and the scalar path).
struct TensorListLayout {
  std::vector<int64_t> numels;
  std::vector<int64_t> offsets;
  int64_t buffer_elems = 0;
};

// Chunk boundaries of both backends: the CPU chunk (64 Ki) and the CUDA chunk (16 Ki elements).
constexpr int64_t kCpuChunk = int64_t{1} << 16;
constexpr int64_t kCudaChunk = int64_t{1} << 14;

// `num_random` tensors of random small sizes (0 to 3000, some empty), after fixed sizes that sit on and around
// the chunk boundaries: 0, 1, 3, a chunk - 1, a chunk, a chunk + 1, several chunks plus a tail.
inline TensorListLayout make_layout(uint64_t seed, int num_random, bool with_big = true) {
  TensorListLayout layout;
  std::vector<int64_t> sizes = {0, 1, 3, 0, 2, 5, 4, 17};
  if (with_big)
    for (int64_t s : {kCudaChunk - 1, kCudaChunk, kCudaChunk + 1, kCpuChunk - 1, kCpuChunk, kCpuChunk + 1,
                      3 * kCpuChunk + 7})
      sizes.push_back(s);
  std::mt19937_64 rng(seed);
  for (int i = 0; i < num_random; ++i) sizes.push_back(rng() % 8 == 0 ? 0 : static_cast<int64_t>(rng() % 3001));
  int64_t cursor = 0;
  for (int64_t n : sizes) {
    cursor += static_cast<int64_t>(rng() % 4);   // 0-3 element gap: every alignment
    layout.offsets.push_back(cursor);
    layout.numels.push_back(n);
    cursor += n;
  }
  layout.buffer_elems = cursor + 4;
  return layout;
}

// Normal(0, 1) values everywhere (gaps included: a kernel that reads a gap changes the result).
template <typename T>
std::vector<T> random_buffer(int64_t n, uint64_t seed, double scale = 1.0) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, scale);
  std::vector<T> buffer(static_cast<size_t>(n));
  for (T& x : buffer) x = static_cast<T>(normal(rng));
  return buffer;
}

// Pointers into `base` (host or device) for the layout's tensors.
template <typename P>
std::vector<P*> pointers(P* base, const TensorListLayout& layout) {
  std::vector<P*> ptrs;
  for (int64_t off : layout.offsets) ptrs.push_back(base + off);
  return ptrs;
}

// sqrt(sum of squares) in long double over the layout's tensors.
template <typename T>
double reference_norm(const std::vector<T>& buffer, const TensorListLayout& layout) {
  long double sum = 0;
  for (size_t i = 0; i < layout.numels.size(); ++i)
    for (int64_t j = 0; j < layout.numels[i]; ++j) {
      const long double x = buffer[static_cast<size_t>(layout.offsets[i] + j)];
      sum += x * x;
    }
  return static_cast<double>(std::sqrt(sum));
}

// Relative error bound of the kernels' norm against the float64 reference: float32 sums ~1M squares in a few
// thousand-term lanes, then a few dozen partials; the error grows like eps * sqrt(terms) (2e-5 is ~100x the
// observed error), float64 the same with eps = 1.1e-16.
template <typename T>
constexpr double kNormRelTol = sizeof(T) == 4 ? 2e-5 : 1e-12;

template <typename T>
uint64_t bits(T x) {
  uint64_t b = 0;
  static_assert(sizeof(T) <= sizeof(b));
  __builtin_memcpy(&b, &x, sizeof(T));
  return b;
}

}  // namespace tinyddp::test
