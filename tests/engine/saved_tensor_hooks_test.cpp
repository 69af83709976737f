// Saved-tensor hooks (engine/autograd/saved_tensor_hooks.h) against PyTorch 1.13's saved_tensors_hooks:
// tests/golden/checkpoint.json, "saved_tensor_hooks" (tests/golden/gen_checkpoint.py mirrors each case).
#include <gtest/gtest.h>

#include <any>
#include <string>
#include <thread>
#include <vector>

#include "tests/engine/test_util.h"

namespace tinyddp::test {
namespace {

using autograd::SavedTensorHooksGuard;

const nlohmann::json& golden() {
  static const nlohmann::json g = [] {
    const std::string path = std::string(TINYDDP_SOURCE_DIR) + "/tests/golden/checkpoint.json";
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot open " + path);
    return nlohmann::json::parse(in).at("saved_tensor_hooks");
  }();
  return g;
}

Tensor leaf(const nlohmann::json& values) {
  return make(values.get<std::vector<double>>(), {static_cast<int64_t>(values.size())}, DType::f32).requires_grad_();
}

Tensor golden_tensor(const nlohmann::json& values) {
  return make(values.get<std::vector<double>>(), {static_cast<int64_t>(values.size())}, DType::f32);
}

autograd::PackHook identity_pack() {
  return [](const Tensor& t) -> std::any { return t; };
}
autograd::UnpackHook identity_unpack() {
  return [](const std::any& p) { return std::any_cast<Tensor>(p); };
}

// l = sum(exp(x * w)^2): each saved tensor is packed once when its op runs (under no-grad, seeing the tensor
// with its history) and unpacked once when its node runs, in the engine's order.
TEST(SavedTensorHooks, ChainPacksAndUnpacksAsPyTorch) {
  const auto& g = golden().at("chain");
  Tensor x = leaf(g.at("x")), w = leaf(g.at("w"));
  nlohmann::json log = nlohmann::json::array();
  Tensor l;
  {
    SavedTensorHooksGuard hooks(
        [&](const Tensor& t) -> std::any {
          const auto& fn = t.grad_fn();
          log.push_back({"pack", t.to_vector<double>(), t.requires_grad(), fn ? nlohmann::json(fn->name()) : nlohmann::json(),
                         GradMode::is_enabled()});
          return t;
        },
        [&](const std::any& p) {
          Tensor t = std::any_cast<Tensor>(p);
          log.push_back({"unpack", t.to_vector<double>()});
          return t;
        });
    l = sum(pow(exp(x * w), 2.0));
  }
  l.backward();   // the guard is gone: the tensors keep the hooks that packed them
  const auto& expected = g.at("log");
  ASSERT_EQ(log.size(), expected.size()) << log.dump();
  for (size_t i = 0; i < log.size(); ++i) {
    EXPECT_EQ(log[i][0], expected[i][0]) << i;
    EXPECT_TRUE(all_close(golden_tensor(log[i][1]), golden_tensor(expected[i][1]), 1e-6, 1e-6)) << i;
    if (log[i][0] == "pack") {
      EXPECT_EQ(log[i][2], expected[i][2]) << i;   // requires_grad
      EXPECT_EQ(log[i][3], expected[i][3]) << i;   // grad_fn
      EXPECT_EQ(log[i][4], expected[i][4]) << i;   // grad mode inside pack
    }
  }
  EXPECT_TRUE(all_close(x.grad(), golden_tensor(g.at("x_grad")), 1e-6, 1e-6));
  EXPECT_TRUE(all_close(w.grad(), golden_tensor(g.at("w_grad")), 1e-6, 1e-6));
}

TEST(SavedTensorHooks, NothingIsPackedWithoutAGraph) {
  int packs = 0;
  Tensor x = tensor({0.5, -0.25}).requires_grad_();
  {
    SavedTensorHooksGuard hooks([&](const Tensor& t) -> std::any { ++packs; return t; }, identity_unpack());
    {
      NoGradGuard no_grad;
      pow(x, 2.0);
    }
    pow(tensor({1.0}), 2.0);
  }
  EXPECT_EQ(packs, golden().at("packs_without_graph").get<int>());
}

TEST(SavedTensorHooks, OnlyTheInnermostHooksApply) {
  std::vector<std::string> order;
  Tensor x = tensor({0.5, -0.25}).requires_grad_();
  {
    SavedTensorHooksGuard outer([&](const Tensor& t) -> std::any { order.push_back("outer"); return t; },
                                identity_unpack());
    {
      SavedTensorHooksGuard inner([&](const Tensor& t) -> std::any { order.push_back("inner"); return t; },
                                  identity_unpack());
      pow(x, 2.0);
    }
    pow(x, 2.0);
  }
  EXPECT_EQ(nlohmann::json(order), golden().at("nesting"));
}

TEST(SavedTensorHooks, RetainGraphUnpacksOncePerBackward) {
  std::vector<std::string> order;
  Tensor x = tensor({0.5, -0.25}).requires_grad_();
  Tensor y;
  {
    SavedTensorHooksGuard hooks([&](const Tensor& t) -> std::any { order.push_back("pack"); return t; },
                                [&](const std::any& p) { order.push_back("unpack"); return std::any_cast<Tensor>(p); });
    y = sum(pow(x, 2.0));
  }
  y.backward({}, {.retain_graph = true});
  y.backward();
  EXPECT_EQ(nlohmann::json(order), golden().at("retain_graph"));
}

// With hooks there is no version check: the rule sees the modified value (PyTorch 1.13).
TEST(SavedTensorHooks, NoVersionCheckWithHooks) {
  Tensor v = tensor({1.0, 2.0}).requires_grad_();
  Tensor yy, z;
  {
    SavedTensorHooksGuard hooks(identity_pack(), identity_unpack());
    yy = v * 1.0;
    z = yy * yy;
  }
  {
    NoGradGuard no_grad;
    yy.add_(ones({2}));
  }
  EXPECT_NO_THROW(z.sum().backward());
  EXPECT_TRUE(all_close(v.grad(), golden_tensor(golden().at("inplace_after_save_grad")), 1e-6));
  // Without hooks the same program is caught.
  Tensor u = tensor({1.0, 2.0}).requires_grad_();
  Tensor uu = u * 1.0, zz = uu * uu;
  {
    NoGradGuard no_grad;
    uu.add_(ones({2}));
  }
  EXPECT_NE(error_message([&] { zz.sum().backward(); }).find("modified by an inplace operation"), std::string::npos);
}

TEST(SavedTensorHooks, TheRuleUsesWhatUnpackReturns) {
  Tensor v = tensor({1.0, 2.0}).requires_grad_();
  Tensor y;
  {
    SavedTensorHooksGuard hooks([](const Tensor& t) -> std::any { return t * 2.0; }, identity_unpack());
    y = pow(v, 2.0);
  }
  y.sum().backward();
  EXPECT_TRUE(all_close(v.grad(), golden_tensor(golden().at("doubled_saved_grad")), 1e-6));   // 2 * (2v)
}

// After a backward without retain_graph the packed value is dropped: the hook's object dies with it.
TEST(SavedTensorHooks, ReleaseDropsThePackedValue) {
  Tensor v = tensor({1.0, 2.0}).requires_grad_();
  auto alive = std::make_shared<int>(0);
  std::weak_ptr<int> watch = alive;
  Tensor y;
  {
    SavedTensorHooksGuard hooks([&](const Tensor& t) -> std::any { return std::make_pair(alive, t); },
                                [](const std::any& p) { return std::any_cast<std::pair<std::shared_ptr<int>, Tensor>>(p).second; });
    y = exp(v).sum();
  }
  alive.reset();
  EXPECT_FALSE(watch.expired());   // held by the SavedTensor's packed value
  y.backward();
  EXPECT_TRUE(watch.expired());
  EXPECT_EQ(error_message([&] { y.backward(); }), golden().at("backward_twice").get<std::string>());
}

TEST(SavedTensorHooks, PackMustNotModifyItsInput) {
  Tensor v = tensor({1.0, 2.0}).requires_grad_();
  Tensor y = v * 2.0;
  SavedTensorHooksGuard hooks(
      [](const Tensor& t) -> std::any {
        Tensor m = t;
        m.add_(ones({2}));
        return t;
      },
      identity_unpack());
  EXPECT_EQ(error_message([&] { y* y; }), golden().at("pack_inplace").get<std::string>());
}

// The unpacked copy gets the saved tensor's history back, so second derivatives reach the leaf:
// y = v^3 saves the leaf v; y = exp(u) saves its own output (grad_fn: the saving node).
TEST(SavedTensorHooks, HistoryIsRestoredForLeavesAndOutputs) {
  auto copy = [](const Tensor& t) -> std::any { return t.detach().clone(); };
  {
    const auto& g = golden().at("leaf_second_order");
    Tensor v = leaf(g.at("v"));
    Tensor y;
    {
      SavedTensorHooksGuard hooks(copy, identity_unpack());
      y = pow(v, 3.0);
    }
    Tensor dv = autograd::grad({y.sum()}, {v}, {}, {.create_graph = true})[0];
    dv.sum().backward();
    EXPECT_TRUE(all_close(v.grad(), golden_tensor(g.at("grad")), 1e-6, 1e-6));   // d^2/dv^2 v^3 = 6v
  }
  {
    const auto& g = golden().at("output_second_order");
    Tensor u = leaf(g.at("u"));
    Tensor y;
    {
      SavedTensorHooksGuard hooks(copy, identity_unpack());
      y = exp(u);
    }
    Tensor du = autograd::grad({y.sum()}, {u}, {}, {.create_graph = true})[0];
    ASSERT_TRUE(du.grad_fn() != nullptr);
    du.sum().backward();
    EXPECT_TRUE(all_close(u.grad(), golden_tensor(g.at("grad")), 1e-6, 1e-6));   // exp(u)
  }
}

// The stack is per thread: a guard on one rank's thread does not touch another's saves.
TEST(SavedTensorHooks, HooksArePerThread) {
  int packs = 0;
  SavedTensorHooksGuard hooks([&](const Tensor& t) -> std::any { ++packs; return t; }, identity_unpack());
  std::thread other([] {
    Tensor x = tensor({1.0}).requires_grad_();
    EXPECT_EQ(autograd::current_saved_tensor_hooks(), nullptr);
    pow(x, 2.0).sum().backward();
  });
  other.join();
  EXPECT_EQ(packs, 0);
  Tensor x = tensor({1.0}).requires_grad_();
  pow(x, 2.0);
  EXPECT_EQ(packs, 1);
}

TEST(SavedTensorHooks, EmptyHooksAreRefused) {
  EXPECT_NE(error_message([] { SavedTensorHooksGuard hooks(nullptr, identity_unpack()); }).find("empty pack"),
            std::string::npos);
  EXPECT_EQ(autograd::current_saved_tensor_hooks(), nullptr);
}

}  // namespace
}  // namespace tinyddp::test
