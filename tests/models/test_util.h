// Helpers shared by the models tests.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "engine/tinyddp.h"

namespace tinyddp::testing_util {

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
