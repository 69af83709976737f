// composite() (engine/ops/composite.h): an op composed of engine ops recorded as 1.13's one node. Its graph is
// that node with the inputs' edges; its values, gradients and second derivatives are the composition's, bitwise;
// saved tensors are released as 1.13 releases its node's. And the view ops with 1.13's nodes (permute, split,
// unbind) and matmul's forms (pytorch_matmul, linear).
#include <gtest/gtest.h>

#include "tests/engine/test_util.h"

namespace tinyddp::test {
namespace {

using autograd::TensorList;

Tensor norm_of_rows(const Tensor& x) { return sqrt(sum(x * x, {1})); }

Tensor recorded_norm(const Tensor& x) {
  return composite("NormBackward1", {x}, [&] { return TensorList{norm_of_rows(x)}; })[0];
}

Tensor leaf(std::vector<double> values, const Shape& shape) { return make(std::move(values), shape).requires_grad_(); }

bool same_bits(const Tensor& a, const Tensor& b) { return a.shape() == b.shape() && a.to_vector<double>() == b.to_vector<double>(); }

TEST(Composite, OneNodeWithTheInputsEdges) {
  const Tensor x = leaf({3, 4, 1, -2, 2, 0.5}, {2, 3});
  const Tensor y = exp(x);
  const Tensor n = composite("AddcmulBackward0", {x, y, Tensor()}, [&] { return TensorList{x + y * 2.0}; })[0];
  ASSERT_TRUE(n.grad_fn());
  EXPECT_EQ(n.grad_fn()->name(), "AddcmulBackward0");
  const auto& edges = n.grad_fn()->next_edges();
  ASSERT_EQ(edges.size(), 3u);
  EXPECT_EQ(edges[0].node->name(), "AccumulateGrad");
  EXPECT_EQ(edges[1].node, y.grad_fn());
  EXPECT_FALSE(edges[2].valid());   // an absent input: no edge, as 1.13's None
}

TEST(Composite, ValuesGradientsAndSecondDerivativesAreTheCompositions) {
  const Tensor a = leaf({3, 4, 1, -2, 2, 0.5}, {2, 3}), b = leaf({3, 4, 1, -2, 2, 0.5}, {2, 3});
  const Tensor ya = recorded_norm(a), yb = norm_of_rows(b);
  EXPECT_TRUE(same_bits(ya, yb));
  autograd::GradOptions o;
  o.create_graph = true;
  const Tensor ga = autograd::grad({sum(ya * ya * ya)}, {a}, {}, o)[0];
  const Tensor gb = autograd::grad({sum(yb * yb * yb)}, {b}, {}, o)[0];
  EXPECT_TRUE(same_bits(ga, gb));
  const Tensor gga = autograd::grad({sum(ga * ga)}, {a}, {}, {})[0];
  const Tensor ggb = autograd::grad({sum(gb * gb)}, {b}, {}, {})[0];
  EXPECT_TRUE(same_bits(gga, ggb));
}

TEST(Composite, OutputsThatNeedNoGradientComeBackAsTheyAre) {
  const Tensor x = leaf({1, 5, 3}, {3});
  Tensor idx;
  const auto out = composite("MaxBackward0", {x}, [&] {
    MaxResult r = max(x, 0);
    idx = r.indices;
    return TensorList{r.values, r.indices};
  });
  EXPECT_EQ(out[0].grad_fn()->name(), "MaxBackward0");
  EXPECT_TRUE(out[1].is_same(idx));
  out[0].backward();
  EXPECT_EQ(x.grad().to_vector<double>(), (std::vector<double>{0, 1, 0}));
}

TEST(Composite, NoGraphWithoutGradMode) {
  const Tensor x = leaf({1, 2}, {1, 2});
  NoGradGuard no_grad;
  const Tensor y = recorded_norm(x);
  EXPECT_FALSE(y.grad_fn());
}

TEST(Composite, ASecondBackwardRaisesWhereTheCompositionSavedTensors) {
  const Tensor x = leaf({3, 4}, {1, 2});
  const Tensor n = recorded_norm(x);
  n.sum().backward();
  EXPECT_EQ(error_message([&] { n.sum().backward(); }), golden_error("backward_twice"));
  // a composition that saves nothing (as 1.13's PermuteBackward0) takes another backward
  const Tensor p = composite("PermuteBackward0", {x}, [&] { return TensorList{transpose(x, 0, 1)}; })[0];
  p.sum().backward();
  p.sum().backward();
  EXPECT_EQ(x.grad().to_vector<double>(), (std::vector<double>{0.6 + 2, 0.8 + 2}));
}

// Note [Releasing a composite's inner graph]: under create_graph the gradient's graph reaches inner nodes both
// through the composite and directly (through the inner outputs the inner rules saved); a backward through it
// without retain_graph runs both before anything is released.
TEST(Composite, ABackwardThroughTheGradientsGraphReachesInnerNodesTwice) {
  const Tensor a = leaf({3, 4, 1, -2, 2, 0.5}, {2, 3}), b = leaf({3, 4, 1, -2, 2, 0.5}, {2, 3});
  autograd::GradOptions o;
  o.create_graph = true;
  const Tensor na = recorded_norm(a), nb = norm_of_rows(b);
  const Tensor ga = autograd::grad({sum(a / unsqueeze(na, 1))}, {a}, {}, o)[0];
  const Tensor gb = autograd::grad({sum(b / unsqueeze(nb, 1))}, {b}, {}, o)[0];
  const Tensor gga = autograd::grad({sum(ga * ga)}, {a}, {}, {})[0];
  const Tensor ggb = autograd::grad({sum(gb * gb)}, {b}, {}, {})[0];
  EXPECT_TRUE(all_close(gga, ggb, 1e-12, 1e-12));
}

TEST(Composite, HooksAndRetainGradSeeTheCompositesOutputs) {
  const Tensor x = leaf({1, 2, 3, 4}, {2, 2});
  Tensor n = recorded_norm(x);
  int calls = 0;
  n.register_hook([&](const Tensor& g) {
    ++calls;
    return g * 2.0;
  });
  n.retain_grad();   // after the hook: it keeps the hook's result
  sum(n).backward();
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(n.grad().to_vector<double>(), (std::vector<double>{2, 2}));
  EXPECT_TRUE(all_close(x.grad(), x.detach() / unsqueeze(norm_of_rows(x.detach()), 1) * 2.0, 1e-15));
}

TEST(Composite, ACompositionReadingAnUnlistedTensorKeepsItsOwnGraph) {
  const Tensor x = leaf({1, 2}, {2}), hidden = leaf({3, 4}, {2});
  const Tensor y = composite("AddcmulBackward0", {x}, [&] { return TensorList{x * hidden}; })[0];
  EXPECT_EQ(y.grad_fn()->name(), "MulBackward0");   // the composition's, so that hidden gets its gradient
  sum(y).backward();
  EXPECT_EQ(hidden.grad().to_vector<double>(), (std::vector<double>{1, 2}));
}

TEST(ShapeNodes, PermuteIsAViewWithPermuteBackward0) {
  const Tensor x = leaf({1, 2, 3, 4, 5, 6}, {1, 2, 3});
  const Tensor p = permute(x, {2, 0, 1});
  EXPECT_EQ(p.grad_fn()->name(), "PermuteBackward0");
  EXPECT_EQ(p.shape(), (Shape{3, 1, 2}));
  EXPECT_EQ(p.storage(), x.storage());
  EXPECT_EQ(error_message([&] { permute(x, {0, 0, 1}); }), "permute(): duplicate dims are not allowed.");
  (p * arange(6, DType::f64).reshape({3, 1, 2})).sum().backward();
  EXPECT_EQ(x.grad().to_vector<double>(), (std::vector<double>{0, 2, 4, 1, 3, 5}));
}

TEST(ShapeNodes, SplitAndUnbindAreOneNodeForAllPieces) {
  const Tensor x = leaf({1, 2, 3, 4, 5, 6}, {2, 3});
  const auto pieces = split(x, 2, 1);
  ASSERT_EQ(pieces.size(), 2u);
  EXPECT_EQ(pieces[0].grad_fn(), pieces[1].grad_fn());
  EXPECT_EQ(pieces[0].grad_fn()->name(), "SplitBackward0");
  EXPECT_EQ(pieces[1].output_nr(), 1u);
  EXPECT_EQ(split_with_sizes(x, {1, 2}, 1)[0].grad_fn()->name(), "SplitWithSizesBackward0");
  (pieces[1] * 3.0).sum().backward();   // the other piece's gradient is zeros
  EXPECT_EQ(x.grad().to_vector<double>(), (std::vector<double>{0, 0, 3, 0, 0, 3}));
  const auto rows = unbind(x, 0);
  EXPECT_EQ(rows[1].grad_fn()->name(), "UnbindBackward0");
  EXPECT_EQ(rows[1].to_vector<double>(), (std::vector<double>{4, 5, 6}));
  EXPECT_EQ(error_message([&] { split_with_sizes(x, {1, 1}, 1); }),
            "split_with_sizes expects split_sizes to sum exactly to 3 (input tensor's size at dimension 1), but got "
            "split_sizes=[1, 1]");
}

TEST(ShapeNodes, ReshapeIsAViewWhereTheStridesAllow) {
  const Tensor x = leaf({1, 2, 3, 4, 5, 6, 7, 8}, {2, 4});
  const Tensor sliced = narrow(x, 1, 0, 2);   // (2, 2) of a (2, 4): rows 4 apart
  const Tensor r = reshape(sliced, {2, 2, 1});
  EXPECT_EQ(r.grad_fn()->name(), "ReshapeAliasBackward0");
  EXPECT_EQ(r.storage(), x.storage());
  EXPECT_EQ(reshape(t(x), {8}).grad_fn()->name(), "UnsafeViewBackward0");   // a transposed pair: a copy
}

TEST(MatmulForms, NodesPerOperandShapeAndTheEngineMatmulsValues) {
  const Tensor v = leaf({1, 2, 3}, {3}), m = leaf({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor b3 = leaf({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, {2, 2, 3});
  const Tensor w = leaf({1, -1, 2, 0.5, 3, -2}, {3, 2});
  const auto name = [](const Tensor& t) { return t.grad_fn()->name(); };
  EXPECT_EQ(name(pytorch_matmul(v, v)), "DotBackward0");
  EXPECT_EQ(name(pytorch_matmul(m, v)), "MvBackward0");
  EXPECT_EQ(name(pytorch_matmul(m, w)), "MmBackward0");
  const Tensor row = pytorch_matmul(v, w);
  EXPECT_EQ(name(row), "SqueezeBackward3");
  EXPECT_EQ(row.grad_fn()->next_edges()[0].node->name(), "MmBackward0");
  const Tensor folded = pytorch_matmul(b3, w);
  EXPECT_EQ(name(folded), "UnsafeViewBackward0");
  EXPECT_EQ(folded.grad_fn()->next_edges()[0].node->name(), "MmBackward0");
  EXPECT_TRUE(same_bits(folded, matmul(b3, w)));
  const Tensor batched = pytorch_matmul(b3, transpose(b3, 1, 2));
  EXPECT_EQ(batched.grad_fn()->next_edges()[0].node->name(), "BmmBackward0");
  const Tensor bias = leaf({0.5, -0.5}, {2});
  const Tensor y = linear(b3, t(w), bias);
  EXPECT_EQ(name(y), "ViewBackward0");
  EXPECT_EQ(y.grad_fn()->next_edges()[0].node->name(), "AddmmBackward0");
  EXPECT_TRUE(same_bits(y, matmul(b3, w) + bias));
}

// 1.13's matmul never returns a view: a 1-D row is squeezed in place (one version bump), folded and batched
// products end in _unsafe_view; with or without a graph. reshape's copy of a transposed tensor is not a view either.
TEST(MatmulForms, ResultsAreNotViews) {
  const Tensor v = leaf({1, 2, 3}, {3}), w = leaf({1, -1, 2, 0.5, 3, -2}, {3, 2});
  const Tensor b3 = leaf({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, {2, 2, 3});
  for (const bool graph : {true, false}) {
    std::optional<NoGradGuard> no_grad;
    if (!graph) no_grad.emplace();
    const Tensor row = pytorch_matmul(v, w);
    EXPECT_FALSE(row.is_view());
    EXPECT_EQ(row.version(), 1u);
    EXPECT_EQ(row.shape(), (Shape{2}));
    for (const Tensor& r : {pytorch_matmul(v, v), pytorch_matmul(b3, v), pytorch_matmul(b3, w),
                            pytorch_matmul(b3, transpose(b3, 1, 2))}) {
      EXPECT_FALSE(r.is_view());
      EXPECT_EQ(r.version(), 0u);
    }
  }
  const Tensor copied = reshape(t(w), {6});
  EXPECT_FALSE(copied.is_view());
  EXPECT_EQ(copied.grad_fn()->name(), "UnsafeViewBackward0");
}

}  // namespace
}  // namespace tinyddp::test
