// Parameter files: bit-exact round trips and actionable load errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "models/nn/nn.h"
#include "tests/models/test_util.h"

namespace tinyddp {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using testing_util::error_of;

// A model with both dtypes: an f32 Linear and an f64 Linear.
struct Mixed : nn::Module {
  std::shared_ptr<nn::Linear> a = register_module("a", std::make_shared<nn::Linear>(3, 4));
  std::shared_ptr<nn::Linear> b = register_module("b", std::make_shared<nn::Linear>(4, 2, true, DType::f64));
};

// A path under gtest's temp dir, unique per test.
std::string temp_path(const std::string& stem) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  return (std::filesystem::path(::testing::TempDir()) /
          (std::string("tinyddp_") + info->name() + "_" + stem + ".params")).string();
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

std::string read_file(const std::string& path) {
  std::ostringstream os;
  os << std::ifstream(path).rdbuf();
  return os.str();
}

// Byte-wise equality of two tensors' elements (so -0.0 vs 0.0 or a last-bit change is caught).
bool same_bits(const Tensor& x, const Tensor& y) {
  if (x.dtype() != y.dtype() || x.shape() != y.shape()) return false;
  const Tensor a = x.contiguous(), b = y.contiguous();
  return std::memcmp(a.raw_data(), b.raw_data(), static_cast<size_t>(a.numel()) * element_size(a.dtype())) == 0;
}

TEST(Serialize, RoundTripIsBitExactAndKeepsParameterIdentity) {
  manual_seed(11);
  Mixed src;
  {
    // Awkward values: no short decimal, extremes, a subnormal, negative zero.
    NoGradGuard no_grad;
    Tensor w = src.b->weight();
    w.copy_(from_vector<double>({1.0 / 3.0, -0.0, 1e-310, std::numeric_limits<double>::max(), 0.1, -2.5e-17,
                                 std::nextafter(1.0, 2.0), 123456789.123456789},
                                {2, 4}));
    Tensor v = src.a->bias();
    v.copy_(from_vector<float>({1.0f / 3.0f, -0.0f, 1e-40f, std::numeric_limits<float>::max()}, {4}));
  }
  const std::string path = temp_path("roundtrip");
  nn::save_parameters(src, path);

  manual_seed(12);   // different initial values
  Mixed dst;
  std::vector<const void*> storage;
  for (const Tensor& p : dst.parameters()) storage.push_back(p.raw_data());
  const Tensor dst_w = dst.b->weight();
  nn::load_parameters(dst, path);

  const auto s = src.named_parameters(), d = dst.named_parameters();
  ASSERT_EQ(s.size(), d.size());
  for (size_t i = 0; i < s.size(); ++i) {
    EXPECT_EQ(s[i].first, d[i].first);
    EXPECT_TRUE(same_bits(s[i].second, d[i].second)) << s[i].first << " differs after save/load";
    EXPECT_EQ(d[i].second.raw_data(), storage[i]) << s[i].first << ": load must copy in place";
    EXPECT_TRUE(d[i].second.requires_grad());
  }
  EXPECT_TRUE(dst.b->weight().is_same(dst_w));
  EXPECT_TRUE(std::signbit(dst.b->weight().to_vector<double>()[1]));
}

TEST(Serialize, WritesTheDocumentedFormat) {
  nn::Linear lin(2, 1, true, DType::f64);
  {
    NoGradGuard no_grad;
    Tensor w = lin.weight(), b = lin.bias();
    w.copy_(from_vector<double>({0.5, -0.1}, {1, 2}));
    b.copy_(from_vector<double>({3.0}, {1}));
  }
  const std::string path = temp_path("format");
  nn::save_parameters(lin, path);
  EXPECT_EQ(read_file(path),
            "# tinyddp parameters v1\n"
            "weight f64 2 1 2\n"
            "0.5 -0.1\n"
            "bias f64 1 1\n"
            "3\n");
}

TEST(Serialize, LoadsAFileWrittenByPython) {
  // tests/golden/gen_tdp_params.py writes repr(float): "3.0" rather than "3", and f32 values widened to double.
  const std::string path = temp_path("python");
  write_file(path,
             "# tinyddp parameters v1\n"
             "weight f32 2 1 2\n"
             "0.10000000149011612 -2.0\n"
             "bias f32 1 1\n"
             "3.0\n");
  nn::Linear lin(2, 1);
  nn::load_parameters(lin, path);
  EXPECT_EQ(lin.weight().to_vector<float>(), (std::vector<float>{0.1f, -2.0f}));
  EXPECT_EQ(lin.bias().to_vector<float>(), (std::vector<float>{3.0f}));
}

// The file of nn::Linear(2, 1, f64) with the given body lines after the header.
std::string linear_file(const std::string& body) { return "# tinyddp parameters v1\n" + body; }

TEST(Serialize, LoadErrorsNameFileParameterAndFix) {
  nn::Linear lin(2, 1, true, DType::f64);
  const std::string path = temp_path("bad");
  const std::vector<double> before = lin.weight().to_vector<double>();

  write_file(path, linear_file("weight f64 2 1 2\n1 2\n"));
  EXPECT_THAT(error_of([&] { nn::load_parameters(lin, path); }),
              AllOf(HasSubstr(path), HasSubstr("missing parameters [bias]"), HasSubstr("Was the file saved from")));

  write_file(path, linear_file("weight f64 2 2 1\n1 2\nbias f64 1 1\n0\n"));
  EXPECT_THAT(error_of([&] { nn::load_parameters(lin, path); }),
              AllOf(HasSubstr(path), HasSubstr("size mismatch for parameter 'weight'"),
                    HasSubstr("the module expects shape [1, 2] but the file has shape [2, 1]")));

  write_file(path, linear_file("weight f32 2 1 2\n1 2\nbias f64 1 1\n0\n"));
  EXPECT_THAT(error_of([&] { nn::load_parameters(lin, path); }),
              AllOf(HasSubstr("dtype mismatch for parameter 'weight'"), HasSubstr("the module has f64, the file has f32")));

  write_file(path, linear_file("weight f64 2 1 2\n1 2\nbias f64 1 1\n0\nextra f64 0\n5\n"));
  EXPECT_THAT(error_of([&] { nn::load_parameters(lin, path); }),
              AllOf(HasSubstr("line 6"), HasSubstr("unexpected parameter 'extra'"), HasSubstr("[weight, bias]")));

  write_file(path, linear_file("weight f64 2 1 2\n1\nbias f64 1 1\n0\n"));
  EXPECT_THAT(error_of([&] { nn::load_parameters(lin, path); }),
              AllOf(HasSubstr("line 3"), HasSubstr("needs 2 values but its line has 1")));

  write_file(path, linear_file("weight f64 2 1 2\n1 abc\nbias f64 1 1\n0\n"));
  EXPECT_THAT(error_of([&] { nn::load_parameters(lin, path); }), HasSubstr("value 1 ('abc') is not a valid float64"));

  write_file(path, linear_file("weight f64 2 1 2\n1 2\nweight f64 2 1 2\n1 2\nbias f64 1 1\n0\n"));
  EXPECT_THAT(error_of([&] { nn::load_parameters(lin, path); }), HasSubstr("parameter 'weight' appears twice"));

  write_file(path, "# tinyddp parameters v2\nweight f64 2 1 2\n1 2\n");
  EXPECT_THAT(error_of([&] { nn::load_parameters(lin, path); }),
              AllOf(HasSubstr(path), HasSubstr("expected the header line '# tinyddp parameters v1'"),
                    HasSubstr("found '# tinyddp parameters v2'"), HasSubstr("save_parameters")));

  write_file(path, "");
  EXPECT_THAT(error_of([&] { nn::load_parameters(lin, path); }), HasSubstr("found an empty file"));

  EXPECT_THAT(error_of([&] { nn::load_parameters(lin, path + ".nonexistent"); }), HasSubstr("cannot open"));

  // A failed load leaves the module as it was, even when the bad entry comes after good ones.
  EXPECT_EQ(lin.weight().to_vector<double>(), before);
}

}  // namespace
}  // namespace tinyddp
