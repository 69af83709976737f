// Seeded random numbers, one generator per thread (ranks running as threads draw independently).
// They are drawn on the host (move them with .to(device)): a seed gives the same numbers on every device.
// mt19937_64 is fully specified by the C++ standard, and the distributions below are written out rather
// than taken from <random> (whose distributions differ between standard libraries), so a seed gives the
// same numbers everywhere.
#include <cmath>
#include <numbers>
#include <random>
#include <sstream>

#include "engine/ops/op_utils.h"

namespace tinyddp {

namespace {

thread_local std::mt19937_64 generator{0};

// Uniform in [0, 1) with 53 random bits.
double uniform01() { return static_cast<double>(generator() >> 11) * 0x1.0p-53; }

// Box-Muller; 1 - u keeps the log's argument in (0, 1].
double standard_normal() {
  const double u1 = 1.0 - uniform01(), u2 = uniform01();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

template <typename Draw>
Tensor fill_random(const Shape& shape, DType dtype, const char* op, Draw draw) {
  Tensor out = empty(shape, dtype);
  dispatch_floating(dtype, op, [&]<typename T>() {
    T* p = out.data_ptr<T>();
    for (int64_t i = 0; i < out.numel(); ++i) p[i] = static_cast<T>(draw());
  });
  return out;
}

}  // namespace

void manual_seed(uint64_t seed) { generator.seed(seed); }

std::string get_rng_state() {
  std::ostringstream os;
  os << generator;
  return os.str();
}

void set_rng_state(const std::string& state) {
  std::istringstream is(state);
  std::mt19937_64 restored;
  is >> restored;
  TINYDDP_CHECK(!is.fail(), "set_rng_state: expected a state returned by get_rng_state(), but could not read one "
                            "from the ", state.size(), " characters given.");
  generator = restored;
}

Tensor randn(const Shape& shape, DType dtype) { return fill_random(shape, dtype, "randn", standard_normal); }
Tensor rand(const Shape& shape, DType dtype) { return fill_random(shape, dtype, "rand", uniform01); }

Tensor randint(int64_t low, int64_t high, const Shape& shape) {
  TINYDDP_CHECK(low < high, "randint: expected low < high, but got low=", low, " and high=", high, ".");
  Tensor out = empty(shape, DType::i64);
  const uint64_t range = static_cast<uint64_t>(high - low);
  int64_t* p = out.data_ptr<int64_t>();
  for (int64_t i = 0; i < out.numel(); ++i) {
    // Rejection sampling keeps every value equally likely.
    const uint64_t limit = std::numeric_limits<uint64_t>::max() - std::numeric_limits<uint64_t>::max() % range;
    uint64_t r;
    do r = generator(); while (r >= limit);
    p[i] = low + static_cast<int64_t>(r % range);
  }
  return out;
}

}  // namespace tinyddp
