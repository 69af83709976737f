// Higher-order derivatives: nested autograd::grad with create_graph, against closed forms, and a
// second-order quantity against PyTorch 1.13 (tests/golden/create_graph_mlp.*).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "tests/engine/test_util.h"

namespace tinyddp::test {
namespace {

// d/dx of sum(y) wrt x, differentiable again.
Tensor d_dx(const Tensor& y, const Tensor& x) {
  autograd::GradOptions o;
  o.create_graph = true;
  return autograd::grad({sum(y)}, {x}, {}, o)[0];
}

// The golden second derivative: f(x) = x^3, d^2f/dx^2 = 6x = 6*2 = 12 at x = 2.
TEST(HigherOrder, GoldenSecondDerivativeOfCube) {
  const Tensor x = scalar_tensor(2.0, DType::f64).requires_grad_();
  const Tensor d1 = d_dx(pow(x, 3.0), x);   // 3x^2 = 12
  const Tensor d2 = d_dx(d1, x);            // 6x = 12
  EXPECT_NEAR(d1.item(), 12.0, 1e-12);
  EXPECT_NEAR(d2.item(), 12.0, 1e-12);
  // The same through x*x*x (mul's rule) and through backward(create_graph) into .grad.
  const Tensor y = x * x * x;
  BackwardOptions bo;
  bo.create_graph = true;
  y.backward({}, bo);
  ASSERT_TRUE(x.grad().requires_grad());
  autograd::GradOptions go;
  const Tensor d2_mul = autograd::grad({x.grad()}, {x}, {}, go)[0];
  EXPECT_NEAR(d2_mul.item(), 12.0, 1e-12);
}

// A second backward(create_graph) adds into an existing .grad out of place, keeping both histories, as
// PyTorch's AccumulateGrad does (`variable.grad = grad + new_grad` under grad mode): f = x^3 at x = 2, twice,
// so .grad = 3x^2 + 3x^2 = 24 and d(.grad)/dx = 6x + 6x = 24; the first .grad tensor is left as it was (12).
TEST(HigherOrder, CreateGraphAddsIntoAnExistingGradOutOfPlace) {
  const Tensor x = scalar_tensor(2.0, DType::f64).requires_grad_();
  BackwardOptions bo;
  bo.create_graph = true;
  pow(x, 3.0).backward({}, bo);
  const Tensor first = x.grad();
  ASSERT_TRUE(first.requires_grad());
  (x * x * x).backward({}, bo);
  EXPECT_NEAR(x.grad().item(), 24.0, 1e-12);
  EXPECT_NEAR(first.item(), 12.0, 1e-12) << "the earlier .grad was modified in place";
  EXPECT_NE(x.grad().storage(), first.storage());
  ASSERT_TRUE(x.grad().requires_grad()) << "the sum must stay differentiable";
  const Tensor d2 = autograd::grad({x.grad()}, {x})[0];
  EXPECT_NEAR(d2.item(), 24.0, 1e-12);
}

// f(x) = x^3 e^x, elementwise.
//   f'   = (3x^2 + x^3) e^x
//   f''  = (6x + 6x^2 + x^3) e^x
//   f''' = (6 + 18x + 9x^2 + x^3) e^x      [d/dx of f'': (6 + 12x + 3x^2) e^x + (6x + 6x^2 + x^3) e^x]
TEST(HigherOrder, ThirdDerivativeOfCubeTimesExp) {
  const std::vector<double> xs = {-1.5, -0.3, 0.0, 0.7, 1.2};
  const Tensor x = make(xs, {5}).requires_grad_();
  const Tensor f = pow(x, 3.0) * exp(x);
  const Tensor d1 = d_dx(f, x), d2 = d_dx(d1, x), d3 = d_dx(d2, x);
  std::vector<double> e1, e2, e3;
  for (double v : xs) {
    e1.push_back((3 * v * v + v * v * v) * std::exp(v));
    e2.push_back((6 * v + 6 * v * v + v * v * v) * std::exp(v));
    e3.push_back((6 + 18 * v + 9 * v * v + v * v * v) * std::exp(v));
  }
  EXPECT_TRUE(all_close(d1, make(e1, {5}), 1e-12, 1e-12));
  EXPECT_TRUE(all_close(d2, make(e2, {5}), 1e-12, 1e-12));
  EXPECT_TRUE(all_close(d3, make(e3, {5}), 1e-12, 1e-12));
}

// f(x) = sum(tanh(x)), t = tanh(x).
//   f'   = 1 - t^2
//   f''  = -2t (1 - t^2)
//   f''' = -2 (1 - t^2)^2 + 4t^2 (1 - t^2) = (1 - t^2)(6t^2 - 2)
TEST(HigherOrder, ThirdDerivativeOfSumTanh) {
  const std::vector<double> xs = {-2.0, -0.5, 0.1, 0.9, 1.7, 3.0};
  const Tensor x = make(xs, {2, 3}).requires_grad_();
  const Tensor d3 = d_dx(d_dx(d_dx(tanh(x), x), x), x);
  std::vector<double> expected;
  for (double v : xs) {
    const double t = std::tanh(v);
    expected.push_back((1 - t * t) * (6 * t * t - 2));
  }
  EXPECT_TRUE(all_close(d3, make(expected, {2, 3}), 1e-12, 1e-12));
}

// d^n/dx^n e^{2x} = 2^n e^{2x}: the fourth order, through exp's saved output and mul by a scalar.
TEST(HigherOrder, FourthDerivativeOfExp) {
  const Tensor x = make({-0.5, 0.25, 1.0}, {3}).requires_grad_();
  Tensor d = exp(x * 2.0);
  for (int n = 0; n < 4; ++n) d = d_dx(d, x);
  std::vector<double> expected;
  for (double v : {-0.5, 0.25, 1.0}) expected.push_back(16.0 * std::exp(2.0 * v));
  EXPECT_TRUE(all_close(d, make(expected, {3}), 1e-12, 1e-12));
}

// Mixed partials: f(x, y) = x^2 y^3 -> d^2f/dxdy = 6 x y^2, whichever order.
TEST(HigherOrder, MixedPartialsCommute) {
  const Tensor x = scalar_tensor(1.5, DType::f64).requires_grad_();
  const Tensor y = scalar_tensor(-2.0, DType::f64).requires_grad_();
  const Tensor f = pow(x, 2.0) * pow(y, 3.0);
  autograd::GradOptions o;
  o.create_graph = true;
  const auto g = autograd::grad({f}, {x, y}, {}, o);
  const Tensor dxy = autograd::grad({g[0]}, {y}, {}, o)[0];
  const Tensor dyx = autograd::grad({g[1]}, {x}, {}, o)[0];
  EXPECT_NEAR(dxy.item(), 6 * 1.5 * 4.0, 1e-12);
  EXPECT_NEAR(dyx.item(), 6 * 1.5 * 4.0, 1e-12);
}

// ---- PyTorch golden: d/dtheta ||dL/dtheta||^2 through a small MLP (float64) ----

std::map<std::string, Tensor> read_params(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::string line;
  std::getline(in, line);
  if (line != "# tinyddp parameters v1") throw std::runtime_error("bad header in " + path + ": " + line);
  std::map<std::string, Tensor> out;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::istringstream header(line);
    std::string name, dtype;
    int ndim;
    header >> name >> dtype >> ndim;
    Shape shape(ndim);
    for (auto& d : shape) header >> d;
    std::getline(in, line);
    std::istringstream values(line);
    std::vector<double> v(static_cast<size_t>(numel_of(shape)));
    for (auto& x : v) values >> x;
    if (!values) throw std::runtime_error("short values line for " + name);
    out[name] = from_vector(v, shape, DType::f64);
  }
  return out;
}

Tensor from_json(const nlohmann::json& j) {
  return from_vector(j.at("values").get<std::vector<double>>(), j.at("shape").get<Shape>(), DType::f64);
}

TEST(HigherOrder, GradOfGradNormMatchesPyTorch) {
  const std::string dir = std::string(TINYDDP_SOURCE_DIR) + "/tests/golden/";
  auto params = read_params(dir + "create_graph_mlp.params");
  std::ifstream in(dir + "create_graph_mlp.json");
  ASSERT_TRUE(in) << "missing create_graph_mlp.json";
  const nlohmann::json golden = nlohmann::json::parse(in);
  // nn.Sequential(Linear(4, 8), Tanh(), Linear(8, 8), ReLU(), Linear(8, 3)), Linear = addmm(b, x, W^T).
  const std::vector<std::string> names = {"0.weight", "0.bias", "2.weight", "2.bias", "4.weight", "4.bias"};
  std::vector<Tensor> theta;
  for (const auto& n : names) {
    ASSERT_TRUE(params.count(n)) << n;
    theta.push_back(params[n].requires_grad_());
  }
  const Tensor x = from_json(golden["x"]), y = from_json(golden["y"]);
  Tensor h = tanh(addmm(theta[1], x, t(theta[0])));
  h = relu(addmm(theta[3], h, t(theta[2])));
  const Tensor loss = mse_loss(addmm(theta[5], h, t(theta[4])), y);
  EXPECT_NEAR(loss.item(), golden["loss"].get<double>(), 1e-12);

  autograd::GradOptions o;
  o.create_graph = true;
  const auto grads = autograd::grad({loss}, theta, {}, o);
  Tensor gn2 = scalar_tensor(0.0, DType::f64);
  for (size_t i = 0; i < grads.size(); ++i) {
    EXPECT_TRUE(all_close(grads[i], from_json(golden["grads"][names[i]]), 1e-12, 1e-10)) << names[i];
    gn2 = gn2 + sum(grads[i] * grads[i]);
  }
  EXPECT_NEAR(gn2.item(), golden["grad_norm_sq"].get<double>(), 1e-12);
  const auto gg = autograd::grad({gn2}, theta);
  for (size_t i = 0; i < gg.size(); ++i)
    EXPECT_TRUE(all_close(gg[i], from_json(golden["grad_of_grad_norm_sq"][names[i]]), 1e-12, 1e-10)) << names[i];
}

}  // namespace
}  // namespace tinyddp::test
