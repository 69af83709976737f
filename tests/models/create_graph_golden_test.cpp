// Higher-order gradients through nn modules against PyTorch 1.13 golden data (tests/golden/gen_create_graph.py,
// float64, seed 1234). Each quantity is computed here the way the script computes it, with autograd::grad's
// create_graph / retain_graph, and compared to 1e-10 (absolute, or relative above magnitude 1).
//
// Legend: N = batch, W = trunk.2.weight (8, 8), the last shared layer of the two-task model.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <string>

#include "models/nn/nn.h"
#include "tests/models/test_util.h"

namespace tinyddp {
namespace {

using nlohmann::json;

// f64 throughout, so that 1e-10 checks the math, not float32 rounding.
constexpr DType kF64 = DType::f64;
// PyTorch and tinyddp sum in different orders; 1e-10 leaves room for that and nothing else (the quantities
// are O(1) and computed in f64, where reordering costs ~1e-15).
constexpr double kTolerance = 1e-10;

using testing_util::load_json;
using testing_util::tensor_of;

// Compares `actual` to `expected` elementwise; on failure prints the largest difference and where it is.
void expect_close(const std::string& what, const std::vector<double>& actual, const Shape& actual_shape,
                  const std::vector<double>& expected, const Shape& expected_shape) {
  ASSERT_EQ(actual_shape, expected_shape) << what << ": shape";
  ASSERT_EQ(actual.size(), expected.size()) << what;
  double max_diff = 0, at_expected = 0;
  size_t worst = 0;
  bool ok = true;
  for (size_t i = 0; i < actual.size(); ++i) {
    const double diff = std::abs(actual[i] - expected[i]);
    if (!(diff <= kTolerance * std::max(1.0, std::abs(expected[i])))) ok = false;   // NaN fails too
    if (!(diff <= max_diff)) max_diff = diff, worst = i, at_expected = expected[i];
  }
  EXPECT_TRUE(ok) << what << ": max |difference| " << max_diff << " at element " << worst << " (expected "
                  << at_expected << ", got " << actual[worst] << "), tolerance " << kTolerance;
}

void expect_close(const std::string& what, const Tensor& actual, const json& expected) {
  ASSERT_TRUE(actual.defined()) << what << " is undefined";
  if (expected.is_number()) {
    expect_close(what, actual.to_vector<double>(), actual.shape(), {expected.get<double>()}, {});
  } else if (expected.is_array()) {
    expect_close(what, actual.to_vector<double>(), actual.shape(), expected.get<std::vector<double>>(),
                 {static_cast<int64_t>(expected.size())});
  } else {
    expect_close(what, actual.to_vector<double>(), actual.shape(), expected.at("values").get<std::vector<double>>(),
                 expected.at("shape").get<Shape>());
  }
}

Tensor norm(const Tensor& g) { return sqrt((g * g).sum()); }

// torch.stack of scalars: (n,).
Tensor stack_scalars(const std::vector<Tensor>& scalars) {
  std::vector<Tensor> rows;
  for (const Tensor& s : scalars) rows.push_back(s.reshape({1}));
  return cat(rows, 0);
}

// Python's w[i] on a 1-D tensor: a differentiable scalar.
Tensor element(const Tensor& v, int64_t i) { return v.narrow(0, i, 1).reshape({}); }

// (a) loss = mse(mlp(x), y);  g = dloss/dtheta (create_graph);  gn2 = sum_p ||g_p||^2;  d gn2 / dtheta = 2 H g.
TEST(CreateGraphGolden, MlpGradOfGradNormSquared) {
  const json golden = load_json("tests/golden/create_graph_mlp.json");
  nn::Sequential mlp(nn::Linear(4, 8, true, kF64), nn::Tanh(), nn::Linear(8, 8, true, kF64), nn::ReLU(),
                     nn::Linear(8, 3, true, kF64));
  nn::load_parameters(mlp, "tests/golden/create_graph_mlp.params");
  const auto named = mlp.named_parameters();
  const std::vector<Tensor> params = mlp.parameters();
  ASSERT_EQ(golden.at("grads").size(), named.size());

  const Tensor x = tensor_of(golden.at("x")), y = tensor_of(golden.at("y"));   // (5, 4), (5, 3)
  const Tensor loss = mse_loss(mlp(x), y);
  expect_close("loss", loss, golden.at("loss"));

  const std::vector<Tensor> grads = autograd::grad({loss}, params, {}, {.create_graph = true});
  ASSERT_EQ(grads.size(), params.size());
  Tensor gn2 = zeros({}, kF64);
  for (size_t i = 0; i < grads.size(); ++i) {
    expect_close("grad of " + named[i].first, grads[i], golden.at("grads").at(named[i].first));
    ASSERT_TRUE(grads[i].requires_grad()) << "create_graph = true must give differentiable grads";
    gn2 = gn2 + (grads[i] * grads[i]).sum();
  }
  expect_close("grad_norm_sq", gn2, golden.at("grad_norm_sq"));

  const std::vector<Tensor> gg = autograd::grad({gn2}, params);
  for (size_t i = 0; i < gg.size(); ++i)
    expect_close("d grad_norm_sq / d " + named[i].first, gg[i], golden.at("grad_of_grad_norm_sq").at(named[i].first));
}

// The two-task model of gen_create_graph.py, registered in the same order so the parameter names match.
struct TwoTask : nn::Module {
  std::shared_ptr<nn::Sequential> trunk = register_module(
      "trunk", std::make_shared<nn::Sequential>(nn::Linear(4, 8, true, kF64), nn::Tanh(),
                                                nn::Linear(8, 8, true, kF64), nn::ReLU()));
  std::shared_ptr<nn::Linear> head_a = register_module("head_a", std::make_shared<nn::Linear>(8, 1, true, kF64));
  std::shared_ptr<nn::Linear> head_b = register_module("head_b", std::make_shared<nn::Linear>(8, 3, true, kF64));
};

// (b) GradNorm (Chen et al. 2018) on W:
//   total = w0 L1 + w1 L2,  n = ||d total / dW||,  dn/dw;
//   G_i = ||d (w_i L_i) / dW||,  r = Lt / mean(Lt) with Lt_i = L_i / L0_i,  target = mean(G) r^alpha (constant),
//   Lgrad = sum_i |G_i - target_i|,  dLgrad/dw;  closed form dLgrad/dw_i = sign(G_i - target_i) ||dL_i/dW||.
TEST(CreateGraphGolden, GradNormSecondOrder) {
  const json golden = load_json("tests/golden/gradnorm_second_order.json");
  TwoTask m;
  nn::load_parameters(m, "tests/golden/gradnorm_second_order.params");

  const Tensor x = tensor_of(golden.at("x"));     // (6, 4)
  const Tensor ya = tensor_of(golden.at("ya"));   // (6, 1)
  const auto yb_values = golden.at("yb").get<std::vector<int64_t>>();
  const Tensor yb = from_vector<int64_t>(yb_values, {static_cast<int64_t>(yb_values.size())});   // (6,)

  const Tensor h = (*m.trunk)(x);   // (6, 8)
  const Tensor L1 = mse_loss((*m.head_a)(h), ya);
  const Tensor L2 = cross_entropy((*m.head_b)(h), yb);
  const std::vector<Tensor> L = {L1, L2};
  expect_close("L1", L1, golden.at("L1"));
  expect_close("L2", L2, golden.at("L2"));

  Tensor w = tensor_of(golden.at("w"));   // (2,) task weights
  w.requires_grad_();
  const Tensor W = m.trunk->at<nn::Linear>(2)->weight();   // (8, 8)

  // Norm of the gradient of the weighted total loss, and its derivative wrt w.
  const Tensor total = element(w, 0) * L1 + element(w, 1) * L2;
  const Tensor gW = autograd::grad({total}, {W}, {}, {.create_graph = true})[0];
  expect_close("dW_total", gW, golden.at("dW_total"));
  const Tensor n = norm(gW);
  expect_close("total_grad_norm", n, golden.at("total_grad_norm"));
  const Tensor dn_dw = autograd::grad({n}, {w}, {}, {.retain_graph = true})[0];
  expect_close("d_total_grad_norm_dw", dn_dw, golden.at("d_total_grad_norm_dw"));

  // Per-task weighted gradient norms.
  std::vector<Tensor> G;
  for (int64_t i = 0; i < 2; ++i) {
    const Tensor gi = autograd::grad({element(w, i) * L[i]}, {W}, {}, {.retain_graph = true, .create_graph = true})[0];
    G.push_back(norm(gi));
  }
  const Tensor Gs = stack_scalars(G);
  expect_close("G", Gs, golden.at("G"));

  // Balance loss with alpha = 1.5 and synthetic initial losses L0 (plain numbers, as .item() makes them).
  const double alpha = golden.at("alpha").get<double>();
  const std::vector<double> L0 = {1.1 * L1.item(), 0.9 * L2.item()};
  expect_close("L0", from_vector<double>(L0, {2}), golden.at("L0"));
  const Tensor Lt = stack_scalars({L1 / L0[0], L2 / L0[1]});
  const Tensor r = Lt / Lt.mean();
  expect_close("r", r, golden.at("r"));
  const Tensor target = (Gs.mean() * r.pow(alpha)).detach();
  expect_close("target", target, golden.at("target"));
  EXPECT_FALSE(target.requires_grad());
  const Tensor Lgrad = (Gs - target).abs().sum();
  expect_close("Lgrad", Lgrad, golden.at("Lgrad"));
  const Tensor dLgrad_dw = autograd::grad({Lgrad}, {w})[0];
  expect_close("d_Lgrad_dw", dLgrad_dw, golden.at("d_Lgrad_dw"));

  // Closed form: G_i = w_i ||dL_i/dW|| and target is constant, so dLgrad/dw_i = sign(G_i - target_i) ||dL_i/dW||.
  std::vector<Tensor> closed, gnorm;
  for (int64_t i = 0; i < 2; ++i) {
    gnorm.push_back(norm(autograd::grad({L[i]}, {W}, {}, {.retain_graph = true})[0]));
    closed.push_back(sign(element(Gs, i) - element(target, i)).detach() * gnorm.back());
  }
  expect_close("grad_W_L_norm", stack_scalars(gnorm), golden.at("grad_W_L_norm"));
  const Tensor closed_form = stack_scalars(closed).detach();
  expect_close("d_Lgrad_dw_closed_form", closed_form, golden.at("d_Lgrad_dw_closed_form"));
  // And the autograd result agrees with the closed form computed here, independently of the golden file.
  expect_close("d_Lgrad_dw vs closed form", dLgrad_dw.to_vector<double>(), dLgrad_dw.shape(),
               closed_form.to_vector<double>(), closed_form.shape());
}

}  // namespace
}  // namespace tinyddp
