// Helpers shared by the engine tests: tensor comparison that reports the max difference, the golden
// error texts, and catching an error's message.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "engine/tinyddp.h"

namespace tinyddp::test {

// max |a - b| over all elements (infinity when the shapes differ, so a shape mismatch never passes).
inline double max_abs_diff(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape()) return INFINITY;
  const auto va = a.to_vector<double>(), vb = b.to_vector<double>();
  double m = 0.0;
  for (size_t i = 0; i < va.size(); ++i) {
    const double d = std::abs(va[i] - vb[i]);
    if (std::isnan(d)) return INFINITY;
    m = std::max(m, d);
  }
  return m;
}

// |actual - expected| <= atol + rtol * |expected| elementwise; on failure reports the max difference and
// the worst element.
inline ::testing::AssertionResult all_close(const Tensor& actual, const Tensor& expected, double atol,
                                            double rtol = 0.0) {
  if (!actual.defined() || !expected.defined())
    return ::testing::AssertionFailure() << "undefined tensor (actual " << actual.defined() << ", expected "
                                         << expected.defined() << ")";
  if (actual.shape() != expected.shape())
    return ::testing::AssertionFailure() << "shape " << shape_str(actual.shape()) << " vs expected "
                                         << shape_str(expected.shape());
  const auto va = actual.to_vector<double>(), ve = expected.to_vector<double>();
  double max_diff = 0.0;
  size_t worst = 0;
  bool ok = true;
  for (size_t i = 0; i < va.size(); ++i) {
    const double d = std::abs(va[i] - ve[i]);
    if (!(d <= atol + rtol * std::abs(ve[i]))) ok = false;
    if (!(d <= max_diff)) {   // also catches NaN
      max_diff = d;
      worst = i;
    }
  }
  if (ok) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "max abs difference " << max_diff << " at flat index " << worst
                                       << " (actual " << va[worst] << ", expected " << ve[worst] << "; atol " << atol
                                       << ", rtol " << rtol << ")";
}

// Tensor from values with a shape, f64 unless told.
inline Tensor make(std::vector<double> values, const Shape& shape, DType dtype = DType::f64) {
  return from_vector(values, shape, dtype);
}

// The message of the tinyddp::Error that fn throws, or a marker that can never equal a real message.
inline std::string error_message(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("<not a tinyddp::Error: ") + e.what() + ">";
  }
  return "<no exception>";
}

// tests/golden/autograd_errors.json: PyTorch 1.13's exact RuntimeError texts, by case name.
inline const nlohmann::json& autograd_errors_golden() {
  static const nlohmann::json golden = [] {
    const std::string path = std::string(TINYDDP_SOURCE_DIR) + "/tests/golden/autograd_errors.json";
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot open " + path);
    return nlohmann::json::parse(in);
  }();
  return golden;
}

inline std::string golden_error(const std::string& key) {
  const auto& g = autograd_errors_golden();
  if (!g.contains(key)) throw std::runtime_error("autograd_errors.json has no key " + key);
  return g.at(key).get<std::string>();
}

}  // namespace tinyddp::test
