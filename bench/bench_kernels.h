// Shared by bench_kernels.cpp (CPU benchmarks, main, the table) and bench_kernels_cuda.cu (GPU benchmarks,
// compiled only where CUDA is built): the tensor lists and the registry of bytes moved per benchmark.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tinyddp::bench {

// A list of gradient tensors, by element count (float32 in every benchmark).
struct TensorList {
  std::string name;
  std::vector<int64_t> numels;
  int64_t total() const {
    int64_t n = 0;
    for (int64_t k : numels) n += k;
    return n;
  }
};

// ResNet-50's parameters (torchvision's resnet50, 161 tensors, 25,557,032 elements): conv1 and its batch norm,
// 16 bottleneck blocks (1x1, 3x3, 1x1 convs, each with a batch norm's weight and bias; the first block of each
// stage adds a 1x1 downsample conv and its batch norm), and the 2048 -> 1000 classifier.
inline TensorList resnet50_list() {
  TensorList list{"resnet50", {}};
  auto conv = [&](int64_t out, int64_t in, int64_t k) { list.numels.push_back(out * in * k * k); };
  auto bn = [&](int64_t c) { list.numels.insert(list.numels.end(), {c, c}); };
  conv(64, 3, 7);
  bn(64);
  int64_t in = 64;
  const int64_t widths[4] = {64, 128, 256, 512}, blocks[4] = {3, 4, 6, 3};
  for (int s = 0; s < 4; ++s)
    for (int64_t b = 0; b < blocks[s]; ++b) {
      const int64_t w = widths[s], out = 4 * w;   // bottleneck expansion 4
      conv(w, in, 1), bn(w);
      conv(w, w, 3), bn(w);
      conv(out, w, 1), bn(out);
      if (b == 0) conv(out, in, 1), bn(out);      // downsample
      in = out;
    }
  list.numels.push_back(1000 * 2048);
  list.numels.push_back(1000);
  return list;
}

// Many tiny tensors: 4,096 of 1 to 512 elements (biases, norms' scales, small heads), ~1M elements in all.
// Launch and per-tensor overheads dominate here; 4 MB also sits in the CPU's L2/L3 and the GPU's L2.
inline TensorList tiny_list() {
  TensorList list{"tiny4096", {}};
  uint64_t state = 12345;   // a fixed LCG: the same list in every run and both files
  for (int i = 0; i < 4096; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    list.numels.push_back(1 + static_cast<int64_t>((state >> 33) % 512));
  }
  return list;
}

// What each benchmark moves and the roofline benchmark it is compared against (the table after the runs).
// bytes: per call, counting every byte read and every byte written once.
void register_bytes(const std::string& benchmark_name, double bytes, const std::string& roofline_name);

#ifdef TINYDDP_WITH_CUDA
// bench_kernels_cuda.cu. has_gpu(): a device is present (else prints why: the GPU benchmarks are then not
// registered). check_gpu(): every GPU variant's result against a float64 reference or the CPU kernels; false
// after printing each mismatch. register_gpu(): the GPU benchmarks, after the CPU ones.
bool has_gpu();
bool check_gpu();
void register_gpu();
#endif

}  // namespace tinyddp::bench
