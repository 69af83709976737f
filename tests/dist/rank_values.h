// Test inputs for the allreduce tests: rank r's values, chosen so that folding the ranks in another order
// rounds differently.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <type_traits>
#include <vector>

namespace tinyddp::dist::test_inputs {

// Rank r's element i for input `seed`: magnitudes from 1e-3 to 1e5 and both signs (integers up to 1e12).
template <typename T>
std::vector<T> values(int rank, int64_t count, uint64_t seed) {
  std::mt19937_64 gen(seed * 1000 + static_cast<uint64_t>(rank));
  std::uniform_real_distribution<double> mantissa(-1.0, 1.0);
  std::uniform_int_distribution<int> exponent(-3, 5);
  std::vector<T> v(static_cast<size_t>(count));
  for (T& x : v) {
    if constexpr (std::is_integral_v<T>)
      x = static_cast<T>(mantissa(gen) * 1e12);
    else
      x = static_cast<T>(mantissa(gen) * std::pow(10.0, exponent(gen)));
  }
  return v;
}

}  // namespace tinyddp::dist::test_inputs
