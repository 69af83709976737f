// Errors. Two kinds, never mixed:
//   TINYDDP_CHECK(cond, ...)            a user error: bad input, misuse. Throws tinyddp::Error with a message
//                                       that says what was expected, what was found and what to try.
//   TINYDDP_INTERNAL_ASSERT(cond, ...)  a broken invariant inside tinyddp: a bug. Throws with "please report".
// Where PyTorch has a message for the same situation, tinyddp throws PyTorch's exact text (see
// tests/golden/autograd_errors.json), so that what users search for is what they see.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace tinyddp {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Errors for which PyTorch raises a Python exception other than RuntimeError: IndexError for a dimension or
// an index out of range, ValueError for a value of the wrong kind (item() of many elements). C++ code catches
// them as Error; the Python binding raises them as IndexError and ValueError (python/src/module.cpp).
class IndexError : public Error {
 public:
  using Error::Error;
};
class ValueError : public Error {
 public:
  using Error::Error;
};

namespace detail {
template <typename... Args>
std::string concat(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}
}  // namespace detail

}  // namespace tinyddp

#define TINYDDP_CHECK(cond, ...)                                               \
  do {                                                                         \
    if (!(cond)) throw ::tinyddp::Error(::tinyddp::detail::concat(__VA_ARGS__)); \
  } while (0)

// TINYDDP_CHECK throwing IndexError / ValueError (see above).
#define TINYDDP_CHECK_INDEX(cond, ...)                                                  \
  do {                                                                                  \
    if (!(cond)) throw ::tinyddp::IndexError(::tinyddp::detail::concat(__VA_ARGS__));   \
  } while (0)

#define TINYDDP_CHECK_VALUE(cond, ...)                                                  \
  do {                                                                                  \
    if (!(cond)) throw ::tinyddp::ValueError(::tinyddp::detail::concat(__VA_ARGS__));   \
  } while (0)

#define TINYDDP_INTERNAL_ASSERT(cond, ...)                                                     \
  do {                                                                                         \
    if (!(cond))                                                                               \
      throw ::tinyddp::Error(::tinyddp::detail::concat(                                        \
          "tinyddp internal assertion failed at ", __FILE__, ":", __LINE__, ": " #cond ". ",  \
          ##__VA_ARGS__, " This is a bug in tinyddp; please report it with a repro."));        \
  } while (0)
