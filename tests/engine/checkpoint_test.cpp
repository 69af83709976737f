// Activation checkpointing (engine/autograd/checkpoint.h) against PyTorch 1.13's torch.utils.checkpoint:
// tests/golden/checkpoint.json (tests/golden/gen_checkpoint.py builds the same model and cases).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include "base/warning.h"
#include "engine/autograd/accumulate_grad.h"
#include "tests/engine/test_util.h"

namespace tinyddp::test {
namespace {

using autograd::checkpoint;
using autograd::CheckpointOptions;
using autograd::Engine;
using autograd::TensorList;

const nlohmann::json& golden() {
  static const nlohmann::json g = [] {
    const std::string path = std::string(TINYDDP_SOURCE_DIR) + "/tests/golden/checkpoint.json";
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot open " + path);
    return nlohmann::json::parse(in);
  }();
  return g;
}

Tensor matrix(const nlohmann::json& rows) {
  std::vector<double> flat;
  for (const auto& row : rows)
    for (double v : row) flat.push_back(v);
  return make(flat, {static_cast<int64_t>(rows.size()), static_cast<int64_t>(rows[0].size())}, DType::f32);
}

Tensor flat(const nlohmann::json& values) {
  return make(values.get<std::vector<double>>(), {static_cast<int64_t>(values.size())}, DType::f32);
}

Tensor flattened(const Tensor& t) { return t.detach().reshape({t.numel()}); }

// lin1 = Linear(4, 8), lin2 = Linear(8, 8) with the golden's values; forward as F.linear builds it.
struct Model {
  Tensor x, w1, b1, w2, b2;
  explicit Model(bool x_requires_grad) {
    const auto& m = golden().at("model");
    x = matrix(m.at("x")).requires_grad_(x_requires_grad);
    w1 = matrix(m.at("w1")).requires_grad_();
    b1 = flat(m.at("b1")).requires_grad_();
    w2 = matrix(m.at("w2")).requires_grad_();
    b2 = flat(m.at("b2")).requires_grad_();
  }
  Tensor lin1(const Tensor& in) const { return relu(addmm(b1, in, t(w1))); }
  Tensor lin2(const Tensor& in) const { return addmm(b2, in, t(w2)); }
  std::vector<std::pair<std::string, Tensor>> params() const {
    return {{"lin1.weight", w1}, {"lin1.bias", b1}, {"lin2.weight", w2}, {"lin2.bias", b2}};
  }
};

// The golden's events: "post <param>" from a post hook on each AccumulateGrad node (where DDP's reducer
// hooks); each weight's hook queues a "callback <param>", which runs when the graph task it was queued in ends.
struct EventLog {
  std::vector<std::string> events;
  std::vector<std::shared_ptr<autograd::Node>> accumulators;   // the graph caches them weakly: keep them alive
  explicit EventLog(const Model& model) {
    for (const auto& [name, p] : model.params()) {
      auto acc = autograd::grad_accumulator(p);
      acc->add_post_hook([this, name = name](const TensorList&, const TensorList&) {
        events.push_back("post " + name);
        if (name.ends_with(".weight")) Engine::queue_callback([this, name] { events.push_back("callback " + name); });
      });
      accumulators.push_back(acc);
    }
  }
};

CheckpointOptions mode_options(const std::string& mode) { return {.use_reentrant = mode == "reentrant"}; }

class CheckpointGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(CheckpointGolden, MatchesPyTorch) {
  const std::string key = GetParam();
  const auto& g = golden().at("cases").at(key);
  const std::string case_name = key.substr(0, key.find('/')), mode = key.substr(key.find('/') + 1);
  Model model(case_name == "second_linear");
  EventLog log(model);
  auto segment = [&](Tensor (Model::*layer)(const Tensor&) const, const Tensor& in) {
    auto fn = [&model, layer](const Tensor& t) { return (model.*layer)(t); };
    return mode == "none" ? fn(in) : checkpoint(fn, in, mode_options(mode));
  };
  std::vector<std::string> warnings;
  Tensor out;
  {
    WarningHandlerGuard collect([&](const std::string& m) { warnings.push_back(m); });
    out = case_name == "second_linear" ? segment(&Model::lin2, model.lin1(model.x))
                                       : model.lin2(segment(&Model::lin1, model.x));
  }
  std::shared_ptr<autograd::Node> node =
      case_name == "second_linear" ? out.grad_fn() : out.grad_fn()->next_edges()[1].node;
  if (case_name == "second_linear") {
    out.register_hook([&](const Tensor&) { log.events.push_back("enter"); return Tensor(); });
    node->add_post_hook([&](const TensorList&, const TensorList&) { log.events.push_back("exit"); });
  }
  Tensor loss = mean(pow(out, 2.0));
  loss.backward();

  EXPECT_TRUE(all_close(flattened(out), flat(g.at("out")), 1e-6, 1e-6));
  EXPECT_NEAR(loss.item(), g.at("loss").get<double>(), 1e-6);
  EXPECT_EQ(node ? nlohmann::json(node->name()) : nlohmann::json(), g.at("grad_fn"));
  EXPECT_EQ(nlohmann::json(warnings), g.at("warnings"));
  for (const auto& [name, p] : model.params()) {
    const auto& expected = g.at("grads").at(name);
    ASSERT_EQ(p.grad().defined(), !expected.is_null()) << name;
    if (p.grad().defined()) EXPECT_TRUE(all_close(flattened(p.grad()), flat(expected), 1e-6, 1e-6)) << name;
  }
  ASSERT_EQ(model.x.grad().defined(), !g.at("x_grad").is_null());
  if (model.x.grad().defined()) EXPECT_TRUE(all_close(flattened(model.x.grad()), flat(g.at("x_grad")), 1e-6, 1e-6));
  EXPECT_EQ(nlohmann::json(log.events), g.at("events"));
}

INSTANTIATE_TEST_SUITE_P(Cases, CheckpointGolden,
                         ::testing::Values("second_linear/reentrant", "second_linear/non_reentrant", "second_linear/none",
                                           "frozen_input/reentrant", "frozen_input/non_reentrant", "frozen_input/none"),
                         [](const auto& info) {
                           std::string name = info.param;
                           std::replace(name.begin(), name.end(), '/', '_');
                           return name;
                         });

// The reentrant node's edges lead to the segment's inputs only: lin2's parameters are not in the graph the
// outer backward walks (which is why DDP's unused-parameter search cannot find them).
TEST(Checkpoint, ReentrantNodeReachesOnlyItsInputs) {
  Model model(true);
  Tensor h = model.lin1(model.x);
  Tensor out = checkpoint([&](const Tensor& in) { return model.lin2(in); }, h);
  ASSERT_EQ(out.grad_fn()->next_edges().size(), 1u);
  EXPECT_EQ(out.grad_fn()->next_edges()[0].node, h.grad_fn());
  EXPECT_EQ(out.grad_fn()->num_inputs(), 1u);
}

// Several inputs and outputs, one input without grad, one output unused: the gradients equal those without
// checkpointing, in both forms.
TEST(Checkpoint, GradientsEqualThoseWithoutCheckpoint) {
  auto run = [](int form) {   // 0: none, 1: reentrant, 2: non-reentrant
    Tensor a = make({0.3, -1.2, 2.0, 0.7}, {2, 2}).requires_grad_();
    Tensor b = make({1.5, -0.5}, {2});   // no grad
    Tensor w = make({0.2, 0.4, -0.6, 0.8}, {2, 2}).requires_grad_();
    autograd::CheckpointFunction fn = [&](const TensorList& in) {
      Tensor h = tanh(matmul(in[0], w) + in[1]);
      return TensorList{h * h, exp(h)};
    };
    TensorList outs = form == 0 ? fn({a, b}) : checkpoint(fn, {a, b}, {.use_reentrant = form == 1});
    sum(outs[0] * 3.0).backward();   // outs[1] unused: its gradient is zeros inside the reentrant node
    return std::make_pair(a.grad(), w.grad());
  };
  const auto [a0, w0] = run(0);
  for (int form : {1, 2}) {
    const auto [a, w] = run(form);
    EXPECT_TRUE(all_close(a, a0, 1e-12, 1e-12)) << form;
    EXPECT_TRUE(all_close(w, w0, 1e-12, 1e-12)) << form;
  }
}

// Each reentrant segment runs a backward of its own inside the outer one: a hook queues a callback, which
// runs when that nested backward ends, before the outer backward goes on.
TEST(Checkpoint, EachReentrantSegmentRunsANestedBackward) {
  Tensor x = make({0.5, -1.0, 2.0}, {3}).requires_grad_();
  Tensor w1 = make({1.0, 2.0, 3.0}, {3}).requires_grad_(), w2 = make({-1.0, 0.5, 0.25}, {3}).requires_grad_();
  std::vector<std::string> events;
  std::vector<int> nested_depths;
  int nodes_running = 0;   // CheckpointFunctionBackward nodes running right now
  std::vector<std::shared_ptr<autograd::Node>> hold;
  for (auto [name, w] : {std::pair<std::string, Tensor>{"w1", w1}, {"w2", w2}}) {
    auto acc = autograd::grad_accumulator(w);
    acc->add_post_hook([&, name = name](const TensorList&, const TensorList&) {
      nested_depths.push_back(nodes_running);
      Engine::queue_callback([&, name] { events.push_back("callback " + name); });
    });
    hold.push_back(acc);
  }
  Tensor h1 = checkpoint([&](const Tensor& t) { return tanh(t * w1); }, x);
  Tensor h2 = checkpoint([&](const Tensor& t) { return tanh(t * w2); }, h1);
  for (const Tensor& h : {h1, h2}) {
    h.register_hook([&, name = h.grad_fn()->name()](const Tensor&) {
      ++nodes_running;
      events.push_back("enter " + name);
      return Tensor();
    });
    h.grad_fn()->add_post_hook([&](const TensorList&, const TensorList&) { --nodes_running; events.push_back("exit"); });
  }
  sum(h2).backward();
  EXPECT_EQ(nested_depths, (std::vector<int>{1, 1}));   // both parameters' hooks fired inside a nested backward
  EXPECT_EQ(events, (std::vector<std::string>{"enter CheckpointFunctionBackward", "callback w2", "exit",
                                              "enter CheckpointFunctionBackward", "callback w1", "exit"}));
}

TEST(Checkpoint, ErrorsAndCallCountsMatchPyTorch) {
  const auto& e = golden().at("errors");
  Tensor x = matrix(golden().at("model").at("x")).requires_grad_();
  Tensor w = matrix(golden().at("model").at("w1")).requires_grad_();
  auto f = [&](const Tensor& in) { return relu(matmul(in, t(w))); };
  EXPECT_EQ(error_message([&] { autograd::grad({sum(checkpoint(f, x))}, {x}); }), e.at("reentrant_grad").get<std::string>());
  EXPECT_EQ(error_message([&] { sum(checkpoint(f, x)).backward({}, {.inputs = {x}}); }),
            e.at("reentrant_backward_inputs").get<std::string>());
  EXPECT_EQ(error_message([&] { sum(checkpoint([](const Tensor& in) { return in.detach() * 2.0; }, x)).backward(); }),
            e.at("reentrant_no_output_requires_grad").get<std::string>());
  int calls = 0;
  auto fewer = [&](const Tensor& in) { return ++calls == 1 ? (in * in) * in : in * 2.0 + 0.0; };
  EXPECT_EQ(error_message([&] { sum(checkpoint(fewer, x, {.use_reentrant = false})).backward(); }),
            e.at("non_reentrant_fewer_saved").get<std::string>());

  const TensorList g = autograd::grad({sum(checkpoint(f, x, {.use_reentrant = false}))}, {x, w});
  EXPECT_TRUE(all_close(flattened(g[0]), flat(e.at("non_reentrant_grad").at("x")), 1e-6, 1e-6));
  EXPECT_TRUE(all_close(flattened(g[1]), flat(e.at("non_reentrant_grad").at("w")), 1e-6, 1e-6));

  for (const std::string mode : {"reentrant", "non_reentrant"}) {
    int count = 0;
    Tensor y = checkpoint([&](const Tensor& in) { ++count; return sum(in * in); }, x, mode_options(mode));
    y.backward({}, {.retain_graph = true});
    y.backward();
    EXPECT_EQ(count, e.at("function_calls_two_backwards_" + mode).get<int>()) << mode;

    int packs = 0;
    autograd::SavedTensorHooksGuard outer([&](const Tensor& t) -> std::any { ++packs; return t; },
                                          [](const std::any& p) { return std::any_cast<Tensor>(p); });
    checkpoint(f, x, mode_options(mode));
    EXPECT_EQ(packs, e.at("outer_hook_packs").at(mode).get<int>()) << mode;
  }
}

// More saves in the recomputation (4) than in the forward (2): tinyddp's error (PyTorch's Python raises
// IndexError from its placeholder list).
TEST(Checkpoint, NonReentrantRecomputationMustSaveTheSameTensors) {
  Tensor x = make({0.5, -1.0}, {2}).requires_grad_();
  int calls = 0;
  auto more = [&](const Tensor& in) { return ++calls == 1 ? in * in : (in * in) * in; };
  EXPECT_NE(error_message([&] { sum(checkpoint(more, x, {.use_reentrant = false})).backward(); })
                .find("the recomputation saved more tensors for backward than the forward did (2)"),
            std::string::npos);
}

// preserve_rng_state: the recomputation draws the forward's numbers (d sum(x * r) / dx = r), and the
// surrounding stream is left as if no recomputation had drawn.
TEST(Checkpoint, PreserveRngStateReplaysTheForwardsDraws) {
  for (bool reentrant : {true, false}) {
    manual_seed(7);
    Tensor x = make({0.5, -1.0, 2.0, 0.25}, {4}).requires_grad_();
    Tensor noise;
    Tensor y = checkpoint([&](const Tensor& in) {
      Tensor r = randn({4}, DType::f64);
      if (!noise.defined()) noise = r;
      return in * r;
    }, x, {.use_reentrant = reentrant});
    const std::string before = get_rng_state();
    sum(y).backward();
    EXPECT_EQ(get_rng_state(), before) << reentrant;
    EXPECT_TRUE(all_close(x.grad(), noise, 0.0)) << reentrant;
  }
  manual_seed(7);
  Tensor x = make({0.5, -1.0, 2.0, 0.25}, {4}).requires_grad_();
  Tensor noise;
  Tensor y = checkpoint([&](const Tensor& in) {
    Tensor r = randn({4}, DType::f64);
    if (!noise.defined()) noise = r;
    return in * r;
  }, x, {.preserve_rng_state = false});
  sum(y).backward();
  EXPECT_GT(max_abs_diff(x.grad(), noise), 1e-3);   // a fresh draw: other numbers
}

TEST(Checkpoint, WarnsWhenNoInputRequiresGradEvenUnderNoGrad) {
  Tensor w = make({1.0, 2.0}, {2}).requires_grad_();
  std::vector<std::string> warnings;
  WarningHandlerGuard collect([&](const std::string& m) { warnings.push_back(m); });
  {
    NoGradGuard no_grad;
    checkpoint([&](const Tensor& in) { return in * w; }, make({1.0, 1.0}, {2}));
  }
  checkpoint([&](const Tensor& in) { return in * w; }, make({1.0, 1.0}, {2}), {.use_reentrant = false});
  EXPECT_EQ(warnings, std::vector<std::string>{golden().at("cases").at("frozen_input/reentrant").at("warnings")[0]});
}

// The example of docs/autograd.md, "Activation checkpointing" (kept identical to the snippet there).
TEST(CheckpointDoc, ExampleInAutogradMd) {
  using namespace tinyddp::autograd;
  // A block of 4 layers h = tanh(h @ W_k); B = 32 rows, D = 64 features, f32.
  manual_seed(0);
  std::vector<Tensor> ws;
  for (int k = 0; k < 4; ++k) ws.push_back((randn({64, 64}) * 0.1).requires_grad_());
  auto block = [&](const Tensor& in) {
    Tensor h = in;
    for (const Tensor& w : ws) h = tanh(matmul(h, w));
    return h;
  };
  Tensor x = randn({32, 64}).requires_grad_();

  // What the ops keep for backward, counted by a saved-tensor hook that changes nothing.
  int64_t saved_bytes = 0;
  auto count = [&](const Tensor& t) -> std::any { saved_bytes += t.numel() * 4; return t; };
  auto keep = [](const std::any& p) { return std::any_cast<Tensor>(p); };

  Tensor plain;
  {
    SavedTensorHooksGuard hooks(count, keep);
    plain = block(x);
  }
  EXPECT_EQ(saved_bytes, 4 * (32 * 64 + 64 * 64 + 32 * 64) * 4);   // per layer: h, W, tanh's output
  const Tensor g_plain = autograd::grad({sum(plain)}, {ws[0]})[0];

  saved_bytes = 0;
  Tensor y;
  {
    SavedTensorHooksGuard hooks(count, keep);
    y = checkpoint(block, x);   // reentrant: the block runs under no-grad
  }
  EXPECT_EQ(saved_bytes, 32 * 64 * 4);   // the input only
  EXPECT_EQ(y.grad_fn()->name(), "CheckpointFunctionBackward");

  // W_0's AccumulateGrad runs inside the nested backward: a callback its hook queues has run by the time
  // the checkpoint's node is done.
  int callbacks = 0, seen_when_node_done = -1;
  auto acc = grad_accumulator(ws[0]);
  acc->add_post_hook([&](const TensorList&, const TensorList&) { Engine::queue_callback([&] { ++callbacks; }); });
  y.grad_fn()->add_post_hook([&](const TensorList&, const TensorList&) { seen_when_node_done = callbacks; });
  sum(y).backward();
  EXPECT_EQ(seen_when_node_done, 1);
  EXPECT_TRUE(all_close(ws[0].grad(), g_plain, 1e-6, 1e-5));

  // Non-reentrant: the ordinary graph, so autograd::grad works.
  Tensor z = checkpoint(block, x, {.use_reentrant = false});
  EXPECT_TRUE(all_close(autograd::grad({sum(z)}, {ws[0]})[0], g_plain, 1e-6, 1e-5));
}

// base/warning.h: per-thread handlers that nest; without one, stderr.
TEST(Warning, HandlersNestPerThreadAndDefaultToStderr) {
  std::vector<std::string> outer_seen, inner_seen;
  {
    WarningHandlerGuard outer([&](const std::string& m) { outer_seen.push_back(m); });
    {
      WarningHandlerGuard inner([&](const std::string& m) { inner_seen.push_back(m); });
      warn("a");
      std::thread([] {
        ::testing::internal::CaptureStderr();
        warn("from another thread");
        EXPECT_EQ(::testing::internal::GetCapturedStderr(), "Warning: from another thread\n");
      }).join();
    }
    warn("b");
  }
  EXPECT_EQ(inner_seen, std::vector<std::string>{"a"});
  EXPECT_EQ(outer_seen, std::vector<std::string>{"b"});
  ::testing::internal::CaptureStderr();
  warn("c");
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "Warning: c\n");
}

}  // namespace
}  // namespace tinyddp::test
