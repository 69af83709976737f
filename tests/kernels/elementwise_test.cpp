// CPU elementwise kernels (kernels/cpu/elementwise.h) on raw host buffers: the results IEEE says are correctly
// rounded (sqrt, and the divisions pow uses for its exponents -1, -2 and -0.5) are, for every input: PyTorch's CPU
// kernels compute them exactly so, and tinyddp's optimizers and norms match its bits only if these do.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/cpu/elementwise.h"

namespace tinyddp::test {
namespace {

namespace cpu = kernels::cpu;
using kernels::UnaryOp;

template <typename T>
class CpuElementwise : public ::testing::Test {};
using FloatTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CpuElementwise, FloatTypes);

// Positive inputs over many binades, enough that an approximation off by an ulp anywhere shows.
template <typename T>
std::vector<T> positive_inputs() {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> exponent(-20.0, 20.0);
  std::vector<T> x(4099);   // odd: the vector loops' tails too
  for (T& v : x) v = static_cast<T>(std::exp2(exponent(rng)));
  return x;
}

template <typename T>
std::vector<T> run_unary(UnaryOp op, const std::vector<T>& x, double a = 0) {
  std::vector<T> y(x.size());
  cpu::unary<T>(op, x.data(), y.data(), static_cast<int64_t>(x.size()), a, 0);
  return y;
}

TYPED_TEST(CpuElementwise, SqrtIsCorrectlyRounded) {
  using T = TypeParam;
  const std::vector<T> x = positive_inputs<T>();
  const std::vector<T> y = run_unary(UnaryOp::sqrt, x);
  int wrong = 0;
  for (size_t i = 0; i < x.size(); ++i) wrong += y[i] != std::sqrt(x[i]);
  EXPECT_EQ(wrong, 0) << "of " << x.size() << " inputs";
}

TYPED_TEST(CpuElementwise, PowOfSpecialExponentsIsPyTorchsArithmetic) {
  using T = TypeParam;
  const std::vector<T> x = positive_inputs<T>();
  struct Case {
    double exponent;
    T (*expected)(T);
  };
  const Case cases[] = {{-1.0, [](T v) { return T(1) / v; }},
                        {-2.0, [](T v) { return T(1) / (v * v); }},
                        {0.5, [](T v) { return std::sqrt(v); }},
                        {-0.5, [](T v) { return T(1) / std::sqrt(v); }},
                        {3.0, [](T v) { return v * v * v; }}};
  for (const Case& c : cases) {
    const std::vector<T> y = run_unary(UnaryOp::pow, x, c.exponent);
    int wrong = 0;
    for (size_t i = 0; i < x.size(); ++i) wrong += y[i] != c.expected(x[i]);
    EXPECT_EQ(wrong, 0) << "pow(x, " << c.exponent << ") of " << x.size() << " inputs";
  }
}

}  // namespace
}  // namespace tinyddp::test
