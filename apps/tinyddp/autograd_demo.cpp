// `tinyddp autograd`: the engine explained by running it. Each section prints what it does and checks
// the number it prints against the closed form, so the walkthrough doubles as a smoke test.
#include <cmath>
#include <functional>
#include <iomanip>
#include <iostream>
#include <set>
#include <string>

#include "apps/tinyddp/commands.h"
#include "engine/tinyddp.h"

namespace tinyddp::app {

namespace {

// Prints the backward graph reachable from t's grad_fn, one node per line, children indented.
void print_graph(std::ostream& out, const std::shared_ptr<autograd::Node>& node, int depth,
                 std::set<const autograd::Node*>& seen) {
  out << std::string(2 * depth + 4, ' ') << node->name();
  if (node->name() != "AccumulateGrad") out << "  (sequence_nr " << node->sequence_nr() << ")";
  if (!seen.insert(node.get()).second) {
    out << "  [shared, shown above]\n";
    return;
  }
  out << "\n";
  for (const auto& e : node->next_edges())
    if (e.valid()) print_graph(out, e.node, depth + 1, seen);
}

void section(std::ostream& out, const char* title) { out << "\n== " << title << " ==\n"; }

void expect_close(double got, double want, const char* what) {
  TINYDDP_CHECK(std::abs(got - want) <= 1e-9 * std::max(1.0, std::abs(want)), "autograd demo: ", what, " came out ", got,
                " but the closed form says ", want, ". This is a bug in tinyddp.");
}

}  // namespace

int run_autograd_demo(std::ostream& out) {
  out << std::setprecision(6);
  manual_seed(0);

  section(out, "1. The graph is recorded as the forward runs");
  // A one-layer net: y = tanh(x W^T + b), loss = mean((y - target)^2).
  Tensor W = randn({2, 3}, DType::f64).requires_grad_();
  Tensor b = randn({2}, DType::f64).requires_grad_();
  Tensor x = randn({4, 3}, DType::f64);
  Tensor target = randn({4, 2}, DType::f64);
  Tensor y = tanh(addmm(b, x, t(W)));
  Tensor loss = mse_loss(y, target);
  out << "  loss = mse_loss(tanh(addmm(b, x, W.t())), target) = " << loss.item() << "\n"
      << "  loss.grad_fn() and what it points to (later nodes have larger sequence numbers):\n";
  std::set<const autograd::Node*> seen;
  print_graph(out, loss.grad_fn(), 0, seen);

  section(out, "2. backward() runs the newest node first; AccumulateGrad as soon as it is ready");
  b.register_post_accumulate_grad_hook([&](const Tensor&) { out << "  AccumulateGrad wrote b.grad\n"; });
  W.register_post_accumulate_grad_hook([&](const Tensor&) { out << "  AccumulateGrad wrote W.grad\n"; });
  loss.backward({}, {.retain_graph = true});
  out << "  (b is reached first: addmm hands its gradient straight to b, W's goes through TBackward0.)\n"
      << "  This order is what DDP's reducer sees as 'gradient ready', and what its buckets follow.\n";

  section(out, "3. retain_graph: saved tensors are freed after a backward unless retained");
  const double first = W.grad().to_vector<double>()[0];
  loss.backward();   // allowed: the first backward retained the graph; this one frees it
  const double twice = W.grad().to_vector<double>()[0];
  expect_close(twice, 2 * first, "the accumulated gradient after two backwards");
  out << "  second backward (graph retained): W.grad[0,0] " << first << " -> " << twice << " (gradients accumulate)\n";
  try {
    loss.backward();
    out << "  third backward unexpectedly succeeded\n";
    return 1;
  } catch (const Error& e) {
    out << "  third backward (graph freed) raises PyTorch's error:\n    \"" << e.what() << "\"\n";
  }

  section(out, "4. create_graph: the backward is itself recorded, so it can be differentiated again");
  Tensor s = tensor({2.0}, DType::f64).requires_grad_();
  Tensor f = s.pow(3).sum();   // f = s^3
  Tensor d1 = autograd::grad({f}, {s}, {}, {.create_graph = true})[0];    // 3 s^2 = 12
  Tensor d2 = autograd::grad({d1.sum()}, {s}, {}, {.create_graph = true})[0];   // 6 s = 12
  Tensor d3 = autograd::grad({d2.sum()}, {s})[0];                          // 6
  expect_close(d1.item(), 12.0, "d/ds s^3 at 2");
  expect_close(d2.item(), 12.0, "d2/ds2 s^3 at 2");
  expect_close(d3.item(), 6.0, "d3/ds3 s^3 at 2");
  out << "  f = s^3 at s = 2:  f' = 3s^2 = " << d1.item() << ",  f'' = 6s = " << d2.item() << ",  f''' = 6 = "
      << d3.item() << "\n  d1.grad_fn() = " << d1.grad_fn()->name()
      << ": the first derivative has a graph of its own because the backward ran with grad mode on.\n";

  section(out, "5. Why GradNorm needs it: d/dw of a gradient norm");
  // Two task losses on the same layer W; the gradient norm of the weighted sum depends on the weights w.
  Tensor w = tensor({0.7, 1.3}, DType::f64).requires_grad_();
  W.set_grad(Tensor());
  Tensor h = tanh(addmm(b, x, t(W)));
  Tensor L1 = mse_loss(h.narrow(1, 0, 1), target.narrow(1, 0, 1));
  Tensor L2 = mse_loss(h.narrow(1, 1, 1), target.narrow(1, 1, 1));
  Tensor total = w.narrow(0, 0, 1).sum() * L1 + w.narrow(0, 1, 1).sum() * L2;
  Tensor gW = autograd::grad({total}, {W}, {}, {.create_graph = true})[0];
  Tensor norm = gW.pow(2).sum().sqrt();
  Tensor dnorm_dw = autograd::grad({norm}, {w})[0];
  out << "  ||grad_W (0.7 L1 + 1.3 L2)|| = " << norm.item() << ";  d/dw = [" << dnorm_dw.to_vector<double>()[0] << ", "
      << dnorm_dw.to_vector<double>()[1] << "]\n"
      << "  (tests/models check these quantities against PyTorch 1.13's on a two-task MLP.)\n";
  out << "\nMore: docs/autograd.md\n";
  return 0;
}

}  // namespace tinyddp::app
