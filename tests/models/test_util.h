// Helpers shared by the models tests.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "engine/tinyddp.h"

namespace tinyddp::testing_util {

// A golden file of tests/golden/ (tests run from the repository root).
inline nlohmann::json load_json(const std::string& path) {
  std::ifstream in(path);
  if (!in.is_open()) throw Error("cannot open golden file '" + path + "'; run the tests from the repository root.");
  return nlohmann::json::parse(in);
}

// A tensor written by the golden generators as {"shape": [...], "values": [...]}, in float64.
inline Tensor tensor_of(const nlohmann::json& j) {
  return from_vector<double>(j.at("values").get<std::vector<double>>(), j.at("shape").get<Shape>(), DType::f64);
}

// The message of the tinyddp::Error that `fn` throws; fails the test (and returns "") when it throws nothing.
template <typename Fn>
std::string error_of(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a tinyddp::Error, but nothing was thrown";
  return "";
}

}  // namespace tinyddp::testing_util
