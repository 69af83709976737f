// The random ops (and nn::Linear's init) against PyTorch 1.13's values for the same seeds, bitwise:
// tests/golden/random.json (tests/golden/gen_random.py runs each case's steps on one seeded stream; here the
// engine runs them in order on its own). Big tensors are recorded as a digest: their sum is compared here, their bytes in
// tests/python/test_random.py.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <thread>

#include "models/nn/linear.h"
#include "tests/engine/test_util.h"

namespace tinyddp::test {
namespace {

const nlohmann::json& golden() {
  static const nlohmann::json g = [] {
    const std::string path = std::string(TINYDDP_SOURCE_DIR) + "/tests/golden/random.json";
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot open " + path);
    return nlohmann::json::parse(in);
  }();
  return g;
}

DType dtype_of(const nlohmann::json& step) {
  const std::string name = step.value("dtype", "float32");
  return name == "float64" ? DType::f64 : name == "int64" ? DType::i64 : DType::f32;
}

Shape shape_of(const nlohmann::json& v) { return v.get<Shape>(); }

// What the case's step produces, computed by the engine from `gen` (nullptr: the thread's default generator).
std::vector<Tensor> run_step(const nlohmann::json& step, Generator* gen) {
  NoGradGuard no_grad;
  const std::string op = step.at("op");
  const DType dtype = dtype_of(step);
  const std::vector<double> args = step.value("args", std::vector<double>{});
  if (op == "randn") return {randn(shape_of(step.at("shape")), dtype, gen)};
  if (op == "rand") return {rand(shape_of(step.at("shape")), dtype, gen)};
  if (op == "randint") return {randint(step.at("low"), step.at("high"), shape_of(step.at("shape")), gen)};
  if (op == "randperm") return {randperm(step.at("n"), gen)};
  if (op == "normal_" || op == "uniform_" || op == "bernoulli_" || op == "random_") {
    Shape shape = shape_of(step.at("shape"));
    Tensor t;
    if (step.value("transposed", false)) t = empty({shape.rbegin(), shape.rend()}, dtype).t();   // non-contiguous
    else t = empty(shape, dtype);
    if (op == "normal_") normal_(t, args.at(0), args.at(1), gen);
    if (op == "uniform_") uniform_(t, args.at(0), args.at(1), gen);
    if (op == "bernoulli_") bernoulli_(t, args.at(0), gen);
    if (op == "random_") random_(t, gen);
    return {t};
  }
  if (op == "linear") {
    nn::Linear layer(step.at("in"), step.at("out"), step.value("bias", true), dtype);
    if (!layer.bias().defined()) return {layer.weight()};
    return {layer.weight(), layer.bias()};
  }
  if (op == "dropout") {   // PyTorch's CPU dropout: ones * (bernoulli_(1 - p) / (1 - p))
    const double p = step.at("p");
    Tensor noise = empty(shape_of(step.at("shape")), dtype);
    bernoulli_(noise, 1.0 - p, gen);
    return {ones(noise.shape(), dtype) * (noise / (1.0 - p))};
  }
  throw std::runtime_error("random.json: unknown op " + op);
}

// Every value bitwise (doubles compare exactly: a float32 value is exactly a double), or the digest's sum.
void expect_matches(const Tensor& t, const nlohmann::json& want, const std::string& where) {
  ASSERT_EQ(t.shape(), shape_of(want.at("shape"))) << where;
  const std::vector<double> got = t.to(DType::f64).to_vector<double>();
  if (want.contains("digest")) {
    double sum = 0.0;
    for (double v : got) sum += v;
    const double expected = want.at("digest").at("sum");
    EXPECT_NEAR(sum, expected, 1e-9 * static_cast<double>(got.size())) << where << " (sum)";
    return;
  }
  const std::vector<double> values = want.at("values").get<std::vector<double>>();
  ASSERT_EQ(got.size(), values.size()) << where;
  size_t mismatches = 0, first = 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (got[i] != values[i] && mismatches++ == 0) first = i;
  EXPECT_EQ(mismatches, 0u) << where << ": first at " << first << ", got " << std::hexfloat
                            << (got.empty() ? 0.0 : got[first]) << " want " << (values.empty() ? 0.0 : values[first]);
}

TEST(RandomGolden, EveryCaseMatchesPyTorchBitwise) {
  const auto& cases = golden().at("cases");
  ASSERT_GE(cases.size(), 10u);
  for (const auto& c : cases) {
    const std::string name = c.at("name");
    manual_seed(c.at("seed"));
    std::optional<Generator> own;
    if (c.contains("generator_seed")) own.emplace(c.at("generator_seed").get<uint64_t>());
    Generator* gen = own ? &*own : nullptr;
    const auto& steps = c.at("steps");
    // nn.Embedding and nn.init exist in Python only: tests/python/test_random.py runs that case
    if (steps[0].at("op") == "embedding") continue;
    for (size_t s = 0; s < steps.size(); ++s) {
      const std::vector<Tensor> outputs = run_step(steps[s], gen);
      const auto& want = steps[s].at("outputs");
      ASSERT_EQ(outputs.size(), want.size()) << name << " step " << s;
      for (size_t o = 0; o < outputs.size(); ++o)
        expect_matches(outputs[o], want[o], name + " step " + std::to_string(s) + " output " + std::to_string(o));
    }
    if (c.contains("default_after"))   // a Generator of its own leaves the default stream where the seed put it
      expect_matches(rand({3}), c.at("default_after"), name + " default generator afterwards");
  }
}

TEST(RandomGolden, StateReplaysTheStreamIncludingTheCachedNormal) {
  manual_seed(5);
  (void)randn({3}, DType::f64);   // an odd count: the generator now holds the second value of a pair
  const std::string state = get_rng_state();
  const auto first = randn({5}, DType::f64).to_vector<double>();
  set_rng_state(state);
  EXPECT_EQ(randn({5}, DType::f64).to_vector<double>(), first);
  manual_seed(5);   // reseeding drops the cached value: the stream starts over
  const auto again = randn({3}, DType::f64).to_vector<double>();
  manual_seed(5);
  EXPECT_EQ(randn({3}, DType::f64).to_vector<double>(), again);
}

TEST(RandomGolden, InPlaceDrawsBumpTheVersionAndRefuseLeavesThatRequireGrad) {
  Tensor t = zeros({4});
  const auto v0 = t.version();
  normal_(t);
  EXPECT_EQ(t.version(), v0 + 1);
  Tensor leaf = zeros({4}).requires_grad_();
  EXPECT_NE(error_message([&] { uniform_(leaf, 0, 1); }).find("a leaf Variable that requires grad"), std::string::npos);
  NoGradGuard no_grad;
  uniform_(leaf, -1, 1);   // how nn.init fills parameters
  EXPECT_EQ(error_message([&] { uniform_(t, 1, 0); }),
            "uniform_ expects to return a [from, to) range, but found from=1 > to=0");
  EXPECT_EQ(error_message([&] { bernoulli_(t, 1.5); }), "bernoulli_ expects p to be in [0, 1], but got p=1.5");
  EXPECT_EQ(error_message([&] { normal_(t, 0, -1); }), "normal expects std >= 0.0, but found std -1");
}

}  // namespace
}  // namespace tinyddp::test
