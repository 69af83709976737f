// The engine computes only what was asked (PyTorch's exec_info): autograd::grad(outputs, inputs) and
// backward(inputs=...) run only the nodes on a path to the inputs, and a node on the path computes no
// gradient for an edge that leads nowhere needed (a rule's needs_input_grad is false there). Hooks on the
// nodes left out do not fire, as in PyTorch. The gradients are bit for bit those of a full backward.
#include <gtest/gtest.h>

#include "tests/engine/test_util.h"

namespace tinyddp::test {
namespace {

// x (4, 3) -> h = tanh(x @ w0) (4, 5) -> y = sum(h @ w1): the shape of GradNorm's shared trunk and head.
struct TwoLayers {
  Tensor x = randn({4, 3}, DType::f64).requires_grad_();
  Tensor w0 = randn({3, 5}, DType::f64).requires_grad_();
  Tensor w1 = randn({5, 2}, DType::f64).requires_grad_();
  Tensor h, out, y;
  TwoLayers() {
    h = tanh(mm(x, w0));
    out = mm(h, w1);
    y = sum(out);
  }
};

// Counts the runs of a node and whether each of its outputs (gradients for its next edges) was defined.
struct NodeProbe {
  int runs = 0;
  std::vector<bool> defined;
  void attach(const std::shared_ptr<autograd::Node>& node) {
    node->add_post_hook([this](const autograd::TensorList& outputs, const autograd::TensorList&) {
      ++runs;
      defined.clear();
      for (const Tensor& o : outputs) defined.push_back(o.defined());
    });
  }
};

TEST(PrunedBackward, GradOfTheLastWeightRunsNothingBelowIt) {
  manual_seed(3);
  TwoLayers net;
  NodeProbe head_mm, tanh_node, trunk_mm;
  head_mm.attach(net.out.grad_fn());
  tanh_node.attach(net.h.grad_fn());
  trunk_mm.attach(net.h.grad_fn()->next_edges()[0].node);
  int h_hook_calls = 0;
  net.h.register_hook([&](const Tensor&) {
    ++h_hook_calls;
    return Tensor();
  });
  const Tensor g_w1 = autograd::grad({net.y}, {net.w1}, {}, {.retain_graph = true})[0];
  EXPECT_EQ(head_mm.runs, 1);
  EXPECT_EQ(head_mm.defined, (std::vector<bool>{false, true}));   // no gradient computed for h
  EXPECT_EQ(tanh_node.runs, 0);
  EXPECT_EQ(trunk_mm.runs, 0);
  EXPECT_EQ(h_hook_calls, 0);   // h's node is not on a path to w1: its tensor hook does not fire
  EXPECT_FALSE(net.w1.grad().defined());

  net.y.backward();   // everything: the same w1 gradient, bit for bit
  EXPECT_EQ(head_mm.defined, (std::vector<bool>{true, true}));
  EXPECT_EQ(tanh_node.runs, 1);
  EXPECT_EQ(trunk_mm.runs, 1);
  EXPECT_EQ(h_hook_calls, 1);
  EXPECT_EQ(max_abs_diff(g_w1, net.w1.grad()), 0.0);
}

TEST(PrunedBackward, BackwardInputsRunsOnlyThePathsToThem) {
  manual_seed(4);
  TwoLayers net;
  NodeProbe head_mm, trunk_mm;
  head_mm.attach(net.out.grad_fn());
  trunk_mm.attach(net.h.grad_fn()->next_edges()[0].node);
  BackwardOptions o;
  o.inputs = {net.w0};
  o.retain_graph = true;
  net.y.backward({}, o);
  EXPECT_EQ(head_mm.defined, (std::vector<bool>{true, false}));   // w1 is not asked for
  EXPECT_EQ(trunk_mm.defined, (std::vector<bool>{false, true}));  // nor is x
  EXPECT_FALSE(net.w1.grad().defined());
  EXPECT_FALSE(net.x.grad().defined());
  const Tensor pruned = net.w0.grad().clone();
  net.w0.set_grad(Tensor());
  net.y.backward();
  EXPECT_EQ(max_abs_diff(pruned, net.w0.grad()), 0.0);
}

TEST(PrunedBackward, GradOfANonLeafStopsAtIt) {
  manual_seed(5);
  TwoLayers net;
  NodeProbe head_mm, tanh_node;
  head_mm.attach(net.out.grad_fn());
  tanh_node.attach(net.h.grad_fn());
  const Tensor g_h = autograd::grad({net.y}, {net.h}, {}, {.retain_graph = true})[0];
  EXPECT_EQ(head_mm.defined, (std::vector<bool>{true, false}));
  EXPECT_EQ(tanh_node.runs, 0);   // h's own node is captured, not run
  const Tensor full = autograd::grad({net.y}, {net.h, net.w1})[0];
  EXPECT_EQ(max_abs_diff(g_h, full), 0.0);
}

// A restricted backward with create_graph records ops whose nodes save what their own backward needs:
// pruning applies to the node the engine runs, never to the nodes its rule records.
TEST(PrunedBackward, CreateGraphThroughARestrictedGradDifferentiatesAgain) {
  manual_seed(6);
  TwoLayers net;
  autograd::GradOptions o{.create_graph = true};
  const Tensor g_w1 = autograd::grad({net.y}, {net.w1}, {}, o)[0];
  const Tensor gg_x = autograd::grad({sum(g_w1 * g_w1)}, {net.x})[0];

  manual_seed(6);   // the same draws again
  TwoLayers ref;
  const auto both = autograd::grad({ref.y}, {ref.w1, ref.x}, {}, o);
  const Tensor ref_gg_x = autograd::grad({sum(both[0] * both[0])}, {ref.x})[0];
  EXPECT_TRUE(all_close(gg_x, ref_gg_x, 1e-12, 1e-12));
  EXPECT_GT(max_abs_diff(gg_x, zeros_like(gg_x)), 0.0);
}

}  // namespace
}  // namespace tinyddp::test
