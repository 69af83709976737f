// The experiments' own random numbers: SplitMix64 (Steele, Lea, Flood 2014) and Box-Muller normals.
//
//   DataRng rng(seed, /*stream=*/3);          // independent streams per use: B, eps_i, x, noise, ...
//   std::vector<double> b = rng.normal(100 * 250, /*stddev=*/std::sqrt(10.0));
//
// Why not the engine's randn: that one is per thread and seeded globally (manual_seed), so data drawn with it
// would depend on which thread or rank drew them and on what the model initialization drew before. This
// generator is a pure function of (seed, stream, index): the same data on every rank, process and run, and
// written out in full here, so the numbers do not depend on a standard library's distribution code.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

namespace tinyddp::models::experiments {

class DataRng {
 public:
  DataRng(uint64_t seed, uint64_t stream) : state_(mix(seed * 0x9E3779B97F4A7C15ULL + mix(stream + 1))) {}

  uint64_t next_u64() { return mix(state_ += 0x9E3779B97F4A7C15ULL); }
  // Uniform in [0, 1), 53 random bits.
  double uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }
  // Standard normal (Box-Muller; the second value of each pair is dropped, which keeps the stream simple).
  double normal() {
    const double u1 = 1.0 - uniform();   // (0, 1]: log is finite
    const double u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
  }
  std::vector<double> normal(size_t n, double stddev = 1.0) {
    std::vector<double> v(n);
    for (double& x : v) x = stddev * normal();
    return v;
  }
  std::vector<double> uniform(size_t n, double lo, double hi) {
    std::vector<double> v(n);
    for (double& x : v) x = lo + (hi - lo) * uniform();
    return v;
  }

 private:
  static uint64_t mix(uint64_t z) {   // SplitMix64's finalizer
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  uint64_t state_;
};

}  // namespace tinyddp::models::experiments
