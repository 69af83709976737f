// The user-facing autograd API: grad/backward options, grad mode, detach, hooks, engine callbacks, the
// engine's execution order, retain_grad and version counters.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "engine/autograd/custom_function.h"
#include "tests/engine/test_util.h"

namespace tinyddp::test {
namespace {

// ---- autograd::grad(allow_unused) ----

TEST(AutogradApi, AllowUnusedReturnsUndefinedForUnusedInputs) {
  const Tensor x = make({1.0, 2.0, 3.0}, {3}).requires_grad_();
  const Tensor z = make({4.0, 5.0, 6.0}, {3}).requires_grad_();
  const Tensor y = sum(x * x);
  autograd::GradOptions o;
  o.allow_unused = true;
  o.retain_graph = true;
  const auto g = autograd::grad({y}, {x, z}, {}, o);
  ASSERT_EQ(g.size(), 2u);
  EXPECT_TRUE(all_close(g[0], make({2.0, 4.0, 6.0}, {3}), 0.0));
  EXPECT_FALSE(g[1].defined());
  EXPECT_EQ(error_message([&] { autograd::grad({y}, {x, z}); }), golden_error("allow_unused"));
}

TEST(AutogradApi, GradWithoutCreateGraphReturnsNoHistory) {
  const Tensor x = make({1.0, 2.0}, {2}).requires_grad_();
  const auto g = autograd::grad({sum(pow(x, 3.0))}, {x});
  EXPECT_FALSE(g[0].requires_grad());
  EXPECT_EQ(g[0].grad_fn(), nullptr);
  EXPECT_FALSE(x.grad().defined());
}

TEST(AutogradApi, GradOfNonLeafInput) {
  const Tensor x = make({1.0, 2.0}, {2}).requires_grad_();
  const Tensor h = x * 3.0;
  const Tensor y = sum(h * h);
  const auto g = autograd::grad({y}, {h});   // dy/dh = 2h
  EXPECT_TRUE(all_close(g[0], make({6.0, 12.0}, {2}), 0.0));
}

// ---- backward(inputs=...) ----

TEST(AutogradApi, BackwardInputsAccumulatesOnlyIntoListedLeaves) {
  const Tensor a = make({1.0, 2.0}, {2}).requires_grad_();
  const Tensor b = make({3.0, 4.0}, {2}).requires_grad_();
  const Tensor c = make({0.5, -0.5}, {2}).requires_grad_();
  const Tensor e = exp(c);
  int exp_branch_hook_calls = 0;
  e.register_hook([&](const Tensor&) {
    ++exp_branch_hook_calls;
    return Tensor();
  });
  const Tensor loss = sum(a * b) + sum(e);
  BackwardOptions o;
  o.inputs = {a};
  o.retain_graph = true;
  loss.backward({}, o);
  EXPECT_TRUE(all_close(a.grad(), b.detach(), 0.0));
  EXPECT_FALSE(b.grad().defined());
  EXPECT_FALSE(c.grad().defined());
  EXPECT_EQ(exp_branch_hook_calls, 0);   // the exp branch leads to no listed input: it does not run
  o.inputs = {b, c};
  loss.backward({}, o);
  EXPECT_TRUE(all_close(a.grad(), b.detach(), 0.0));   // unchanged
  EXPECT_TRUE(all_close(b.grad(), a.detach(), 0.0));
  EXPECT_TRUE(all_close(c.grad(), exp(c.detach()), 0.0));
  EXPECT_EQ(exp_branch_hook_calls, 1);
}

// ---- grad mode ----

TEST(AutogradApi, NoGradGuardRecordsNothingAndRestores) {
  const Tensor x = make({1.0, 2.0}, {2}).requires_grad_();
  EXPECT_TRUE(GradMode::is_enabled());
  {
    NoGradGuard no_grad;
    EXPECT_FALSE(GradMode::is_enabled());
    const Tensor y = exp(x * 2.0) + x;
    EXPECT_FALSE(y.requires_grad());
    EXPECT_EQ(y.grad_fn(), nullptr);
    EXPECT_TRUE(y.is_leaf());
    {
      AutoGradMode enable(true);   // nested scopes restore what they found
      EXPECT_TRUE((x * 2.0).requires_grad());
    }
    EXPECT_FALSE(GradMode::is_enabled());
  }
  EXPECT_TRUE(GradMode::is_enabled());
  const Tensor y = x * 2.0;
  ASSERT_NE(y.grad_fn(), nullptr);
  EXPECT_EQ(y.grad_fn()->name(), "MulBackward1");
}

TEST(AutogradApi, OpsOnTensorsThatDoNotRequireGradRecordNothing) {
  const Tensor x = make({1.0, 2.0}, {2});
  const Tensor y = exp(x) * x;
  EXPECT_FALSE(y.requires_grad());
  EXPECT_EQ(y.grad_fn(), nullptr);
}

// ---- detach, requires_grad_ ----

TEST(AutogradApi, DetachSharesStorageAndVersionCounter) {
  const Tensor x = make({1.0, 2.0, 3.0}, {3}).requires_grad_();
  Tensor d = x.detach();
  EXPECT_EQ(d.storage().get(), x.storage().get());
  EXPECT_EQ(d.raw_data(), x.raw_data());
  EXPECT_FALSE(d.requires_grad());
  EXPECT_TRUE(d.is_leaf());
  EXPECT_EQ(d.grad_fn(), nullptr);
  const uint64_t v0 = x.version();
  d.mul_(2.0);   // allowed: d does not require grad
  EXPECT_EQ(x.version(), v0 + 1);
  EXPECT_EQ(d.version(), x.version());
  EXPECT_TRUE(all_close(x.detach(), make({2.0, 4.0, 6.0}, {3}), 0.0));
  // A detached non-leaf has no history either.
  const Tensor y = exp(x);
  EXPECT_EQ(y.detach().grad_fn(), nullptr);
  EXPECT_EQ(y.detach().storage().get(), y.storage().get());
}

TEST(AutogradApi, RequiresGradOnNonLeaf) {
  const Tensor x = make({1.0, 2.0}, {2}).requires_grad_();
  Tensor y = x * 2.0;
  EXPECT_FALSE(y.is_leaf());
  EXPECT_EQ(error_message([&] { y.requires_grad_(false); }),
            "you can only change requires_grad flags of leaf variables. If you want to use a computed variable in a "
            "subgraph that doesn't require differentiation use var_no_grad = var.detach().");
  EXPECT_TRUE(y.requires_grad());
  EXPECT_NO_THROW(y.requires_grad_(true));   // already true: a no-op, as PyTorch
  // On a leaf both directions work.
  Tensor z = make({1.0}, {1});
  z.requires_grad_(true);
  EXPECT_TRUE(z.requires_grad());
  z.requires_grad_(false);
  EXPECT_FALSE(z.requires_grad());
}

// ---- tensor hooks ----

TEST(AutogradApi, HookOnNonLeafFiresOnceAndCanReplaceGradient) {
  const Tensor x = make({1.0, 2.0}, {2}).requires_grad_();
  const Tensor h = x * 2.0;
  int calls = 0;
  Tensor seen;
  h.register_hook([&](const Tensor& g) {
    ++calls;
    seen = g.clone();
    return g * 10.0;
  });
  sum(h * h).backward();   // dL/dh = 2h = (4, 8)
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(all_close(seen, make({4.0, 8.0}, {2}), 0.0));
  EXPECT_TRUE(all_close(x.grad(), make({80.0, 160.0}, {2}), 0.0));   // 10 * 2h * 2
}

TEST(AutogradApi, HookSeesTheSummedGradientOfATensorUsedTwice) {
  const Tensor x = make({1.0, 2.0}, {2}).requires_grad_();
  const Tensor h = x * 1.0;
  int calls = 0;
  h.register_hook([&](const Tensor& g) {
    ++calls;
    EXPECT_TRUE(all_close(g, make({5.0, 5.0}, {2}), 0.0));
    return Tensor();
  });
  sum(h * 2.0 + h * 3.0).backward();
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(all_close(x.grad(), make({5.0, 5.0}, {2}), 0.0));
}

// A non-leaf that is both an input of autograd::grad (its gradient is captured) and on the path to another
// input (its node runs): its hook still fires once, and both results see the replaced gradient.
TEST(AutogradApi, HookOnCapturedNonLeafFiresOnce) {
  const Tensor x = make({1.0, 2.0}, {2}).requires_grad_();
  const Tensor h = x * 2.0;
  int calls = 0;
  h.register_hook([&](const Tensor& g) {
    ++calls;
    return g * 10.0;
  });
  const auto g = autograd::grad({sum(h * h)}, {h, x});   // dL/dh = 2h = (4, 8)
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(all_close(g[0], make({40.0, 80.0}, {2}), 0.0));
  EXPECT_TRUE(all_close(g[1], make({80.0, 160.0}, {2}), 0.0));
}

TEST(AutogradApi, HookOnLeafFiresOnceAndCanReplaceGradient) {
  const Tensor x = make({1.0, 2.0}, {2}).requires_grad_();
  int calls = 0;
  x.register_hook([&](const Tensor& g) {
    ++calls;
    return g + 1.0;
  });
  int keep_calls = 0;
  x.register_hook([&](const Tensor&) {
    ++keep_calls;
    return Tensor();   // undefined: keep the gradient as it is
  });
  sum(x * 3.0).backward();
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(keep_calls, 1);
  EXPECT_TRUE(all_close(x.grad(), make({4.0, 4.0}, {2}), 0.0));
}

// ---- post-accumulate-grad hooks ----

TEST(AutogradApi, PostAccumulateGradHookSeesUpdatedGradOncePerBackward) {
  const Tensor x = make({1.0, 2.0}, {2}).requires_grad_();
  std::vector<Tensor> grads_seen;
  x.register_post_accumulate_grad_hook([&](const Tensor& leaf) {
    EXPECT_TRUE(leaf.is_same(x));
    ASSERT_TRUE(leaf.grad().defined());
    grads_seen.push_back(leaf.grad().clone());
  });
  const Tensor y = sum(x * x);   // dy/dx = 2x = (2, 4)
  BackwardOptions o;
  o.retain_graph = true;
  y.backward({}, o);
  ASSERT_EQ(grads_seen.size(), 1u);
  EXPECT_TRUE(all_close(grads_seen[0], make({2.0, 4.0}, {2}), 0.0));
  y.backward();
  ASSERT_EQ(grads_seen.size(), 2u);
  EXPECT_TRUE(all_close(grads_seen[1], make({4.0, 8.0}, {2}), 0.0));   // already accumulated
}

TEST(AutogradApi, PostAccumulateGradHookFiresOnceForALeafUsedTwice) {
  const Tensor x = make({1.0, 2.0}, {2}).requires_grad_();
  int calls = 0;
  x.register_post_accumulate_grad_hook([&](const Tensor& leaf) {
    ++calls;
    EXPECT_TRUE(all_close(leaf.grad(), make({5.0, 5.0}, {2}), 0.0));
  });
  sum(x * 2.0 + x * 3.0).backward();
  EXPECT_EQ(calls, 1);
}

// ---- Engine::queue_callback ----

TEST(AutogradApi, QueuedCallbacksRunOnceInOrderAfterAllNodes) {
  const Tensor w1 = make({1.0, 2.0}, {2}).requires_grad_();
  const Tensor w2 = make({3.0, 4.0}, {2}).requires_grad_();
  std::vector<std::string> events;
  w1.register_post_accumulate_grad_hook([&](const Tensor&) { events.push_back("w1"); });
  w2.register_post_accumulate_grad_hook([&](const Tensor&) {
    events.push_back("w2");
    EXPECT_TRUE(autograd::Engine::in_backward());
  });
  const Tensor h = w1 * 2.0;
  h.register_hook([&](const Tensor&) {
    EXPECT_TRUE(autograd::Engine::in_backward());
    autograd::Engine::queue_callback([&] {
      events.push_back("cb1");
      autograd::Engine::queue_callback([&] { events.push_back("cb3 (queued by cb1)"); });
    });
    autograd::Engine::queue_callback([&] { events.push_back("cb2"); });
    return Tensor();
  });
  sum(h * w2).backward();
  EXPECT_FALSE(autograd::Engine::in_backward());
  ASSERT_EQ(events.size(), 5u);
  EXPECT_EQ(events[2], "cb1");
  EXPECT_EQ(events[3], "cb2");
  EXPECT_EQ(events[4], "cb3 (queued by cb1)");
  // The two accumulations come first, in some order.
  EXPECT_TRUE((events[0] == "w1" && events[1] == "w2") || (events[0] == "w2" && events[1] == "w1"));
  // A later backward does not rerun the callbacks.
  events.clear();
  sum(w1 * 1.0).backward();
  EXPECT_EQ(events, std::vector<std::string>{"w1"});
}

TEST(AutogradApi, QueueCallbackOutsideBackwardThrowsPyTorchsText) {
  EXPECT_FALSE(autograd::Engine::in_backward());
  EXPECT_EQ(error_message([] { autograd::Engine::queue_callback([] {}); }), golden_error("queue_callback_outside"));
}

// ---- execution order (what orders DDP's reducer hooks) ----

// PyTorch's order (tests/golden/engine_order.json, from gen_engine_order.py: post hooks on the AccumulateGrad
// nodes, where DDP's reducer hooks). The engine runs the highest sequence number first and AccumulateGrad nodes
// (the largest number) as soon as they are ready.
std::vector<std::string> golden_order(const std::string& key) {
  static const nlohmann::json g = [] {
    const std::string path = std::string(TINYDDP_SOURCE_DIR) + "/tests/golden/engine_order.json";
    std::ifstream f(path);
    if (!f) throw std::runtime_error("cannot open " + path);
    return nlohmann::json::parse(f);
  }();
  return g.at(key).get<std::vector<std::string>>();
}

// Two Linear layers as PyTorch builds them: addmm(bias, x, W.t()). layer2's AddmmBackward0 readies
// AccumulateGrad(b2) and TBackward0(W2); b2 runs first, then TBackward0 readies AccumulateGrad(W2), which
// outranks ReluBackward0; then layer 1 the same way.
TEST(AutogradApi, AccumulateGradOrderMatchesPyTorch) {
  manual_seed(3);
  const Tensor x = randn({5, 3}, DType::f64);
  const Tensor w1 = randn({4, 3}, DType::f64).requires_grad_(), b1 = randn({4}, DType::f64).requires_grad_();
  const Tensor w2 = randn({2, 4}, DType::f64).requires_grad_(), b2 = randn({2}, DType::f64).requires_grad_();
  std::vector<std::string> order;
  const std::vector<std::pair<std::string, Tensor>> named = {
      {"layer1.weight", w1}, {"layer1.bias", b1}, {"layer2.weight", w2}, {"layer2.bias", b2}};
  for (const auto& [name, p] : named)
    p.register_post_accumulate_grad_hook([&order, n = name](const Tensor&) { order.push_back(n); });
  const Tensor h = relu(addmm(b1, x, t(w1)));
  const Tensor out = addmm(b2, h, t(w2));
  mse_loss(out, zeros({5, 2}, DType::f64)).backward();
  EXPECT_EQ(order, golden_order("two_linear"));
}

// Two independent terms: the one built last (higher sequence numbers) runs first, whichever it is. This is the
// premise of tests/dist/reducer_order_test.cpp (ranks that build their terms in different orders).
TEST(AutogradApi, TheTermBuiltLastAccumulatesFirstAsInPyTorch) {
  for (const std::string first : {"small", "large"}) {
    const Tensor small = zeros({4}, DType::f64).requires_grad_(), large = zeros({6}, DType::f64).requires_grad_();
    std::vector<std::string> order;
    small.register_post_accumulate_grad_hook([&](const Tensor&) { order.push_back("small"); });
    large.register_post_accumulate_grad_hook([&](const Tensor&) { order.push_back("large"); });
    Tensor term_small, term_large;
    if (first == "small") {
      term_small = sum(small * 1.0);
      term_large = sum(large * 2.0);
    } else {
      term_large = sum(large * 2.0);
      term_small = sum(small * 1.0);
    }
    (term_small + term_large).backward();
    EXPECT_EQ(order, golden_order("two_terms_" + first + "_first")) << first << " built first";
  }
}

// ---- retain_grad ----

TEST(AutogradApi, RetainGradOnNonLeaf) {
  const Tensor x = make({1.0, 2.0}, {2}).requires_grad_();
  const Tensor h = x * 3.0;
  const Tensor not_retained = h * 1.0;
  h.retain_grad();
  h.retain_grad();   // twice is once
  const Tensor y = sum(not_retained * not_retained);   // dy/dh = 2 * 3x = (6, 12)
  BackwardOptions o;
  o.retain_graph = true;
  y.backward({}, o);
  EXPECT_TRUE(all_close(h.grad(), make({6.0, 12.0}, {2}), 0.0));
  EXPECT_FALSE(not_retained.grad().defined());
  EXPECT_TRUE(all_close(x.grad(), make({18.0, 36.0}, {2}), 0.0));
  y.backward();
  EXPECT_TRUE(all_close(h.grad(), make({12.0, 24.0}, {2}), 0.0));   // accumulates like a leaf's
}

// ---- version counter ----

TEST(AutogradApi, VersionCounterBumpsOnEveryInplaceOp) {
  Tensor a = make({1.0, 2.0, 3.0}, {3});
  const Tensor view_of_a = a.narrow(0, 1, 2);
  EXPECT_EQ(a.version(), 0u);
  a.add_(ones({3}, DType::f64));
  EXPECT_EQ(a.version(), 1u);
  a.add_(scalar_tensor(1.0, DType::f64), 2.0);   // broadcast path
  EXPECT_EQ(a.version(), 2u);
  a.mul_(2.0);
  EXPECT_EQ(a.version(), 3u);
  a.mul_(make({1.0, 2.0, 3.0}, {3}));
  EXPECT_EQ(a.version(), 4u);
  a.zero_();
  EXPECT_EQ(a.version(), 5u);
  a.copy_(make({7.0, 8.0, 9.0}, {3}));
  EXPECT_EQ(a.version(), 6u);
  a.fill_(1.5);
  EXPECT_EQ(a.version(), 7u);
  EXPECT_EQ(view_of_a.version(), 7u);   // views share the counter
  Tensor v = view_of_a;
  v.zero_();   // through the view: the base sees it, and its version
  EXPECT_EQ(a.version(), 8u);
  EXPECT_TRUE(all_close(a, make({1.5, 0.0, 0.0}, {3}), 0.0));
  // Out-of-place ops do not bump.
  const Tensor b = a * 2.0 + a;
  EXPECT_EQ(a.version(), 8u);
  EXPECT_EQ(b.version(), 0u);
}

TEST(AutogradApi, ModifiedByInplaceOperationError) {
  const Tensor w = make({1.0, 2.0, 3.0}, {3}, DType::f32).requires_grad_();
  Tensor x = make({4.0, 5.0, 6.0}, {3}, DType::f32);
  const Tensor y = sum(w * x);
  x.zero_();
  x.add_(ones({3}, DType::f32));
  EXPECT_EQ(error_message([&] { y.backward(); }),
            "one of the variables needed for gradient computation has been modified by an inplace operation: "
            "[torch.FloatTensor [3]] is at version 2; expected version 0 instead. Hint: enable anomaly detection to "
            "find the operation that failed to compute its gradient, with torch.autograd.set_detect_anomaly(True).");
  EXPECT_FALSE(w.grad().defined());
}

TEST(AutogradApi, InplaceOnUnsavedTensorIsFine) {
  const Tensor w = make({1.0, 2.0}, {2}).requires_grad_();
  Tensor x = make({4.0, 5.0}, {2});
  const Tensor y = sum(w + x);   // add saves nothing
  x.mul_(3.0);
  y.backward();
  EXPECT_TRUE(all_close(w.grad(), make({1.0, 1.0}, {2}), 0.0));
}

// ---- accumulation into .grad ----

TEST(AutogradApi, GradAccumulatesAcrossBackwardsInPlace) {
  const Tensor x = make({1.0, 2.0}, {2}).requires_grad_();
  sum(x * x).backward();
  const Tensor g = x.grad();
  const void* storage_before = g.storage().get();
  sum(x * 3.0).backward();
  EXPECT_EQ(x.grad().storage().get(), storage_before);   // updated in place (DDP's bucket views rely on it)
  EXPECT_TRUE(all_close(x.grad(), make({5.0, 7.0}, {2}), 0.0));
}

// A .grad accumulated with create_graph must be its own tensor: not a view of an incoming gradient
// (which can be a stride-0 expand, or shared with another leaf's .grad).
TEST(AutogradApi, CreateGraphGradIsNotAnAliasOfTheIncomingGradient) {
  const Tensor x = make({1.0, 2.0, 3.0}, {3}).requires_grad_();
  BackwardOptions o;
  o.create_graph = true;
  sum(x).backward({}, o);   // SumBackward0 hands back an expand (stride 0) of one element
  EXPECT_TRUE(all_close(x.grad(), ones({3}, DType::f64), 0.0));
  sum(x * x).backward();    // accumulates in place: 1 + 2x
  EXPECT_TRUE(all_close(x.grad(), make({3.0, 5.0, 7.0}, {3}), 0.0));

  const Tensor a = make({1.0, 2.0}, {2}).requires_grad_();
  const Tensor b = make({3.0, 4.0}, {2}).requires_grad_();
  sum(a + b).backward({}, o);   // AddBackward0 hands the same gradient to both
  {
    NoGradGuard no_grad;
    Tensor ga = a.grad();
    ga.zero_();
  }
  EXPECT_TRUE(all_close(a.grad(), zeros({2}, DType::f64), 0.0));
  EXPECT_TRUE(all_close(b.grad(), ones({2}, DType::f64), 0.0));
}

TEST(AutogradApi, SeedGradientIsNotAliasedIntoGrad) {
  const Tensor x = make({1.0, 2.0}, {2}).requires_grad_();
  Tensor seed = make({1.0, 1.0}, {2});
  BackwardOptions o;
  o.create_graph = true;
  x.backward(seed, o);   // the root is x's own AccumulateGrad: the seed arrives untouched
  seed.fill_(5.0);
  EXPECT_TRUE(all_close(x.grad(), ones({2}, DType::f64), 0.0));
}

TEST(AutogradApi, CreateGraphRetainedGradIsItsOwnContiguousTensor) {
  const Tensor x = make({1.0, 2.0, 3.0}, {3}).requires_grad_();
  const Tensor h = x * 2.0;
  h.retain_grad();
  BackwardOptions o;
  o.create_graph = true;
  sum(h).backward({}, o);   // h's gradient arrives as a stride-0 expand
  ASSERT_TRUE(h.grad().defined());
  EXPECT_TRUE(h.grad().is_contiguous());
  EXPECT_NE(h.grad().storage().get(), x.grad().storage().get());
  EXPECT_TRUE(all_close(h.grad(), ones({3}, DType::f64), 0.0));
}

// Anomaly mode is off by default: a NaN gradient reaches .grad silently. The guard turns it on for its scope
// only; on, the node that produced the NaN is named (the golden case anomaly_nan_gradient checks the text).
TEST(AutogradApi, AnomalyModeIsScopedAndOffByDefault) {
  EXPECT_FALSE(autograd::is_anomaly_enabled());
  const Tensor x = make({4.0, -1.0}, {2}).requires_grad_();
  sum(sqrt(x)).backward();
  const std::vector<double> g = x.grad().to_vector<double>();
  EXPECT_DOUBLE_EQ(g[0], 0.25);   // d sqrt(x)/dx = 1 / (2 sqrt(4))
  EXPECT_TRUE(std::isnan(g[1]));
  {
    autograd::DetectAnomalyGuard anomaly;
    EXPECT_TRUE(autograd::is_anomaly_enabled());
    const Tensor y = make({4.0, 9.0}, {2}).requires_grad_();
    EXPECT_NO_THROW(sum(sqrt(y)).backward());   // finite gradients pass the check
    EXPECT_THROW(sum(sqrt(x)).backward(), Error);
  }
  EXPECT_FALSE(autograd::is_anomaly_enabled());
}

// The front end's observer (what Python uses to keep and print the forward's stack): while the mode is on, every
// node made is announced, and a backward that throws at a node announces that node once, before the error
// propagates; with the mode off, neither. The in-place error's hint then points at that report, as 1.13's does.
namespace anomaly_observer {
std::vector<std::string> failed;
int created = 0;
void on_created(autograd::Node&) { ++created; }
void on_failed(autograd::Node& n) { failed.push_back(n.name()); }
}  // namespace anomaly_observer

TEST(AutogradApi, AnomalyObserverSeesNodesMadeAndTheNodeThatFailed) {
  namespace seen = anomaly_observer;
  autograd::set_anomaly_observer({seen::on_created, seen::on_failed});
  struct Unset {
    ~Unset() { autograd::set_anomaly_observer({}); }
  } unset;
  {
    const Tensor x = make({1.0, 2.0, 3.0}, {3}).requires_grad_();
    Tensor s = sigmoid(x);   // made with the mode off: not announced
    mul_(s, 2.0);
    EXPECT_EQ(seen::created, 0);
    try {
      sum(s).backward();
      ADD_FAILURE() << "the saved output was modified in place; backward must throw";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("Hint: enable anomaly detection"), std::string::npos) << e.what();
    }
    EXPECT_TRUE(seen::failed.empty());
  }
  autograd::DetectAnomalyGuard anomaly;
  const Tensor x = make({1.0, 2.0, 3.0}, {3}).requires_grad_();
  Tensor s = sigmoid(x);   // SigmoidBackward0, and x's AccumulateGrad for its edge
  mul_(s, 2.0);            // MulBackward0, rebased onto s
  const Tensor loss = sum(s);   // SumBackward0
  EXPECT_EQ(seen::created, 4);
  try {
    loss.backward();
    ADD_FAILURE() << "the saved output was modified in place; backward must throw";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("Hint: the backtrace further above shows the operation that failed to "
                                         "compute its gradient. The variable in question was changed in there or "
                                         "anywhere later. Good luck!"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(seen::failed, std::vector<std::string>{"SigmoidBackward0"});
  seen::failed.clear();
  const Tensor y = make({4.0, 9.0}, {2}).requires_grad_();
  sum(sqrt(y)).backward();   // nothing fails: nothing reported
  EXPECT_TRUE(seen::failed.empty());
}

// ---- hooks over all of a node's gradients (Python's grad_fn.register_prehook) ----

// y = x * 3; the hook sees dL/dy = [1, 1] before MulBackward0 runs and doubles it, so x.grad = 2 * 3 = 6.
TEST(AutogradApi, ListPreHookSeesAndReplacesTheNodesIncomingGradients) {
  const Tensor x = make({1.0, 2.0}, {2}).requires_grad_();
  const Tensor y = x * 3.0;
  int calls = 0;
  y.grad_fn()->add_list_pre_hook([&](autograd::TensorList& grads) {
    ++calls;
    ASSERT_EQ(grads.size(), 1u);
    EXPECT_TRUE(all_close(grads[0], make({1.0, 1.0}, {2}), 0.0));
    grads[0] = grads[0] * 2.0;
  });
  sum(y).backward();
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(all_close(x.grad(), make({6.0, 6.0}, {2}), 0.0));
}

// ---- what a custom Function's backward returns is checked against its input (1.13's validate_outputs) ----

autograd::TensorList custom_backward(const Tensor& a, const Tensor& returned) {
  auto node = std::make_shared<autograd::CustomFunctionNode>(
      "FnBackward", [returned](const autograd::TensorList&, const autograd::TensorList&) {
        return autograd::TensorList{returned};
      }, autograd::TensorList{a});
  Tensor out;
  {
    NoGradGuard no_grad;
    out = a * 2.0;
  }
  return autograd::wrap_custom_function_outputs(node, {a}, {out}, {}, {});
}

TEST(AutogradApi, CustomFunctionGradientIsSummedToItsInputOrRefused) {
  const Tensor a = make({1.0, 1.0}, {2}).requires_grad_();
  sum(custom_backward(a, ones({3, 2}, DType::f64))[0]).backward();   // [3, 2] broadcasts from [2]: summed over the rows
  EXPECT_TRUE(all_close(a.grad(), make({3.0, 3.0}, {2}), 0.0));
  const Tensor b = make({1.0, 1.0}, {2}).requires_grad_();
  sum(custom_backward(b, ones({2}, DType::f32))[0]).backward();
  EXPECT_EQ(b.grad().dtype(), DType::f64);
  const Tensor c = make({1.0, 1.0}, {2}).requires_grad_();
  EXPECT_EQ(error_message([&] { sum(custom_backward(c, ones({3}, DType::f64))[0]).backward(); }),
            "Function FnBackward returned an invalid gradient at index 0 - got [3] but expected shape compatible "
            "with [2]");
}

// 1.13 writes a first differentiable .grad (create_graph) into a new tensor with copy_, so its history is
// CopyBackwards; d(.grad)/dx of x^3 at 2 is 6x = 12.
TEST(AutogradApi, CreateGraphGradIsACopyBackwards) {
  const Tensor x = scalar_tensor(2.0, DType::f64).requires_grad_();
  BackwardOptions bo;
  bo.create_graph = true;
  pow(x, 3.0).backward({}, bo);
  ASSERT_TRUE(x.grad().grad_fn());
  EXPECT_EQ(x.grad().grad_fn()->name(), "CopyBackwards");
  EXPECT_NEAR(autograd::grad({x.grad()}, {x})[0].item(), 12.0, 1e-12);
}

}  // namespace
}  // namespace tinyddp::test
