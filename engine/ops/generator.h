// The random generator behind randn, rand, randint, randperm, uniform_, normal_ and bernoulli_: PyTorch 1.13's
// CPU generator, so that a seed gives PyTorch's numbers, draw for draw.
//
//   manual_seed(42);                          // seeds this thread's default generator
//   Tensor w = randn({3, 4});                 // == torch.manual_seed(42); torch.randn(3, 4)  (bitwise, float32)
//   Generator g(7);                           // an independent stream (torch.Generator().manual_seed(7))
//   Tensor p = randperm(10, &g);
//
// The engine is a Mersenne Twister (mt19937, 32-bit words) seeded with the seed's low 32 bits, as PyTorch's
// CPUGeneratorImpl is; std::mt19937's sequence and seeding are fixed by the C++ standard, so the raw stream is
// the same everywhere. What turns raw words into numbers is written out in random.cpp, each transform as
// PyTorch's kernels compute it (see Note [Matching PyTorch's random numbers] there).
//
// One default generator per thread (ranks running as threads draw independently, as separate processes would),
// seeded with kDefaultSeed until manual_seed is called on that thread.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <string>

namespace tinyddp {

class Generator {
 public:
  // LibTorch's default seed (c10's default_rng_seed_val). Python's torch seeds its default generator randomly
  // at import; tinyddp keeps every run reproducible instead.
  static constexpr uint64_t kDefaultSeed = 67280421310721ULL;

  explicit Generator(uint64_t seed = kDefaultSeed) { manual_seed(seed); }

  // Restarts the stream: the same seed gives the same draws again. Only the low 32 bits reach the engine (as
  // in PyTorch); initial_seed() returns the seed as given.
  void manual_seed(uint64_t seed) {
    initial_seed_ = seed;
    engine_.seed(static_cast<std::mt19937::result_type>(seed & 0xffffffffULL));
    next_double_normal_.reset();
  }
  uint64_t initial_seed() const { return initial_seed_; }

  uint32_t random() { return static_cast<uint32_t>(engine_()); }
  // Two words, the first as the high half (PyTorch's random64).
  uint64_t random64() {
    const uint64_t hi = random(), lo = random();
    return (hi << 32) | lo;
  }

  // A standard normal drawn in double precision, one Box-Muller pair at a time: the second value of a pair is
  // kept for the next call (PyTorch's next_double_normal_sample), so draws of odd length stay on PyTorch's stream.
  double standard_normal();

  // The whole state (torch.get_rng_state / set_rng_state): setting a state got earlier replays the same draws
  // from there. Opaque text; only set_state reads it.
  std::string state() const;
  void set_state(const std::string& state);

 private:
  std::mt19937 engine_;
  uint64_t initial_seed_ = kDefaultSeed;
  std::optional<double> next_double_normal_;
};

// The calling thread's default generator: what every random op draws from when it is given no generator.
Generator& default_generator();

}  // namespace tinyddp
