#include "bench/fma_roofline.h"

namespace tinyddp::bench {
namespace {

#if defined(__AVX512F__)
constexpr int kLanes = 16;
constexpr const char* kVectorName = "AVX-512, 16 floats";
#elif defined(__AVX__)
constexpr int kLanes = 8;
constexpr const char* kVectorName = "AVX, 8 floats";
#else
constexpr int kLanes = 4;
constexpr const char* kVectorName = "SSE, 4 floats";
#endif
// Independent accumulators. A core retires one FMA per port per cycle only if kChains >= latency x ports
// (4 cycles x 2 ports on current x86 cores: 8); 12 leaves margin and still fits in 16 vector registers.
constexpr int kChains = 12;

using Vec = float __attribute__((vector_size(kLanes * sizeof(float))));

}  // namespace

int64_t fma_flops_per_step() { return 2 * kLanes * kChains; }
const char* fma_vector_name() { return kVectorName; }

double fma_chains(int64_t steps) {
  Vec acc[kChains] = {};
  Vec one = {}, inc = {};
  one += 1.0f;
  inc += 1.0f;
  // Hide the values from the optimizer, so acc * 1 is not folded away, the FMA stays an FMA (this file is
  // built with -ffp-contract=fast: x * y + z contracts to one instruction), and the chains, equal in value,
  // are not merged into one.
  asm volatile("" : "+v"(one), "+v"(inc));
  for (Vec& a : acc) asm volatile("" : "+v"(a));
  for (int64_t s = 0; s < steps; ++s)
    for (int c = 0; c < kChains; ++c) acc[c] = acc[c] * one + inc;
  double sum = 0;
  for (int c = 0; c < kChains; ++c)
    for (int l = 0; l < kLanes; ++l) sum += acc[c][l];
  return sum;
}

}  // namespace tinyddp::bench
