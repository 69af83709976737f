// nn::Module, Linear, activations, Sequential and loss modules.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "models/nn/nn.h"
#include "tests/models/test_util.h"

namespace tinyddp {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing_util::error_of;

std::vector<std::string> names_of(const nn::Module& m) {
  std::vector<std::string> out;
  for (const auto& [name, _] : m.named_parameters()) out.push_back(name);
  return out;
}

// A trunk and two heads; `scale` is registered last but, being the root's own parameter, is listed first
// (PyTorch visits a module's own parameters before its children's).
struct MultiHead : nn::Module {
  std::shared_ptr<nn::Sequential> trunk =
      register_module("trunk", std::make_shared<nn::Sequential>(nn::Linear(4, 8), nn::ReLU(), nn::Linear(8, 8)));
  std::shared_ptr<nn::Linear> head_a = register_module("head_a", std::make_shared<nn::Linear>(8, 1));
  std::shared_ptr<nn::Linear> head_b = register_module("head_b", std::make_shared<nn::Linear>(8, 3, false));
  Tensor scale = register_parameter("scale", ones({1}));
};

TEST(Module, NamedParametersAreRecursiveDottedAndInRegistrationOrder) {
  MultiHead m;
  EXPECT_THAT(names_of(m), ElementsAre("scale", "trunk.0.weight", "trunk.0.bias", "trunk.2.weight", "trunk.2.bias",
                                       "head_a.weight", "head_a.bias", "head_b.weight"));
  // The listed tensors are the registered handles themselves, and parameters() matches named_parameters().
  const auto params = m.parameters();
  ASSERT_EQ(params.size(), 8u);
  EXPECT_TRUE(params[0].is_same(m.scale));
  EXPECT_TRUE(params[3].is_same(m.trunk->at<nn::Linear>(2)->weight()));
  EXPECT_TRUE(params[7].is_same(m.head_b->weight()));
  EXPECT_TRUE(m.parameter("trunk.2.bias").is_same(m.trunk->at<nn::Linear>(2)->bias()));
  for (const Tensor& p : params) EXPECT_TRUE(p.requires_grad() && p.is_leaf());
  EXPECT_THAT(error_of([&] { m.parameter("trunk.1.weight"); }),
              AllOf(HasSubstr("no parameter named 'trunk.1.weight'"), HasSubstr("trunk.2.weight")));
}

TEST(Module, NamedChildrenAndModules) {
  MultiHead m;
  std::vector<std::string> children, modules;
  for (const auto& [name, _] : m.named_children()) children.push_back(name);
  for (const auto& [name, _] : m.named_modules()) modules.push_back(name);
  EXPECT_THAT(children, ElementsAre("trunk", "head_a", "head_b"));
  EXPECT_THAT(modules, ElementsAre("", "trunk", "trunk.0", "trunk.1", "trunk.2", "head_a", "head_b"));
}

// Registers a given tensor as its "weight", so that two modules can hold one tensor.
struct Holder : nn::Module {
  explicit Holder(Tensor w) { register_parameter("weight", std::move(w)); }
};

TEST(Module, SharedParameterIsListedOnceUnderItsFirstName) {
  struct Tied : nn::Module {
    Tensor w = randn({3, 2});
    std::shared_ptr<Holder> a = register_module("a", std::make_shared<Holder>(w));
    std::shared_ptr<Holder> b = register_module("b", std::make_shared<Holder>(w));   // same tensor as a's
    std::shared_ptr<Holder> c = register_module("c", std::make_shared<Holder>(randn({2})));
  } tied;
  EXPECT_THAT(names_of(tied), ElementsAre("a.weight", "c.weight"));
  EXPECT_TRUE(tied.parameters()[0].is_same(tied.w));

  // A module registered twice is visited once too, as PyTorch's named_modules memo does.
  struct SharedChild : nn::Module {
    std::shared_ptr<nn::Linear> enc = register_module("enc", std::make_shared<nn::Linear>(2, 2));
    std::shared_ptr<nn::Linear> dec = register_module("dec", enc);
  } shared;
  EXPECT_THAT(names_of(shared), ElementsAre("enc.weight", "enc.bias"));
}

TEST(Module, RegistrationRejectsBadNames) {
  nn::Module m;
  m.register_parameter("w", zeros({2}));
  EXPECT_THAT(error_of([&] { m.register_parameter("w", zeros({2})); }), HasSubstr("attribute 'w' already exists"));
  EXPECT_THAT(error_of([&] { m.register_module("w", std::make_shared<nn::ReLU>()); }),
              HasSubstr("attribute 'w' already exists"));
  EXPECT_THAT(error_of([&] { m.register_parameter("a.b", zeros({2})); }),
              HasSubstr("parameter name can't contain \".\""));
  EXPECT_THAT(error_of([&] { m.register_module("", std::make_shared<nn::ReLU>()); }),
              HasSubstr("module name can't be empty string"));
  Tensor leaf = randn({2}).requires_grad_();
  EXPECT_THAT(error_of([&] { m.register_parameter("nonleaf", leaf * 2.0); }),
              HasSubstr("Cannot assign non-leaf Tensor to parameter 'nonleaf'"));
}

// Runs one backward so that every parameter of `m` has a .grad.
void fill_grads(nn::Module& m) {
  Tensor loss = zeros({});
  for (const Tensor& p : m.parameters()) loss = loss + (p * p).sum();
  loss.backward();
}

TEST(Module, ZeroGradZeroesInPlaceByDefault) {
  MultiHead m;
  fill_grads(m);
  std::vector<const void*> storage;
  for (const Tensor& p : m.parameters()) {
    ASSERT_TRUE(p.grad().defined());
    storage.push_back(p.grad().raw_data());
  }
  m.zero_grad();
  const auto params = m.parameters();
  for (size_t i = 0; i < params.size(); ++i) {
    const Tensor& g = params[i].grad();
    ASSERT_TRUE(g.defined()) << "parameter " << i;
    EXPECT_EQ(g.raw_data(), storage[i]) << "zero_grad() must keep .grad's storage (parameter " << i << ")";
    for (float v : g.to_vector<float>()) EXPECT_EQ(v, 0.0f);
  }
}

TEST(Module, ZeroGradSetToNoneDropsGrads) {
  MultiHead m;
  fill_grads(m);
  m.zero_grad(/*set_to_none=*/true);
  for (const Tensor& p : m.parameters()) EXPECT_FALSE(p.grad().defined());
  m.zero_grad();   // nothing to zero: must not throw or create grads
  for (const Tensor& p : m.parameters()) EXPECT_FALSE(p.grad().defined());
}

TEST(Module, ZeroGradDetachesAGradWithHistory) {
  nn::Linear lin(2, 2, true, DType::f64);
  Tensor loss = (lin.weight() * lin.weight()).sum();
  loss.backward({}, {.create_graph = true});   // .grad = 2 w, with a graph back to w
  ASSERT_NE(lin.weight().grad().grad_fn(), nullptr);
  lin.zero_grad();
  const Tensor& g = lin.weight().grad();
  EXPECT_EQ(g.grad_fn(), nullptr);
  EXPECT_FALSE(g.requires_grad());
  for (double v : g.to_vector<double>()) EXPECT_EQ(v, 0.0);
}

TEST(Module, TrainAndEvalPropagateToDescendants) {
  MultiHead m;
  auto all_modes = [&] {
    std::vector<bool> modes;
    for (const auto& [_, mod] : m.named_modules()) modes.push_back(mod->is_training());
    return modes;
  };
  EXPECT_THAT(all_modes(), ::testing::Each(true));
  m.eval();
  EXPECT_THAT(all_modes(), ::testing::Each(false));
  EXPECT_FALSE((*m.trunk)[1]->is_training());
  m.trunk->train();   // only the subtree
  EXPECT_FALSE(m.is_training());
  EXPECT_TRUE(m.trunk->at<nn::Linear>(2)->is_training());
  EXPECT_FALSE(m.head_a->is_training());
  m.train(true);
  EXPECT_THAT(all_modes(), ::testing::Each(true));
}

TEST(Module, DefaultForwardThrowsNamingTheType) {
  MultiHead m;
  EXPECT_THAT(error_of([&] { m.forward(zeros({1, 4})); }),
              AllOf(HasSubstr("Module [MultiHead] is missing the required \"forward\" function")));
  nn::MSELoss mse;
  EXPECT_THAT(error_of([&] { mse.forward(zeros({1})); }), HasSubstr("Module [MSELoss]"));
}

// register_forward_hook: after forward, in registration order, through operator() only (a direct forward()
// runs none), in Sequential's children too; removal by id, twice harmlessly, also from inside a hook.
TEST(Module, ForwardHooksRunAfterEachCallInOrderAndAreRemovable) {
  auto first = std::make_shared<nn::Linear>(2, 3);
  auto second = std::make_shared<nn::ReLU>();
  nn::Sequential seq{first, second};
  std::vector<std::string> calls;
  Tensor seen_input, seen_output;
  const int64_t a = first->register_forward_hook([&](nn::Module& m, const Tensor& in, const Tensor& out) {
    calls.push_back("a:" + m.type_name());
    seen_input = in;
    seen_output = out;
  });
  const int64_t b =
      first->register_forward_hook([&](nn::Module&, const Tensor&, const Tensor&) { calls.push_back("b"); });
  second->register_forward_hook([&](nn::Module& m, const Tensor&, const Tensor&) { calls.push_back(m.type_name()); });
  const Tensor x = randn({4, 2});
  const Tensor y = seq(x);
  EXPECT_THAT(calls, ElementsAre("a:Linear", "b", "ReLU"));
  EXPECT_TRUE(seen_input.is_same(x));
  EXPECT_EQ(seen_output.shape(), (Shape{4, 3}));
  EXPECT_EQ(relu(seen_output).to_vector<float>(), y.to_vector<float>()) << "the hook saw the Linear's own output";

  calls.clear();
  first->forward(x);
  EXPECT_TRUE(calls.empty()) << "a direct forward() runs no hook";

  first->remove_forward_hook(a);
  first->remove_forward_hook(a);   // already removed: ignored
  (*first)(x);
  EXPECT_THAT(calls, ElementsAre("b"));

  // A hook that removes itself runs this once, and the hooks after it still run this call.
  calls.clear();
  first->remove_forward_hook(b);
  int64_t once = -1;
  once = first->register_forward_hook([&](nn::Module& m, const Tensor&, const Tensor&) {
    calls.push_back("once");
    m.remove_forward_hook(once);
  });
  first->register_forward_hook([&](nn::Module&, const Tensor&, const Tensor&) { calls.push_back("after"); });
  (*first)(x);
  (*first)(x);
  EXPECT_THAT(calls, ElementsAre("once", "after", "after"));
  EXPECT_THAT(error_of([&] { first->register_forward_hook(nullptr); }), HasSubstr("the hook is empty"));
}

TEST(Module, PrintsLikePyTorch) {
  nn::Sequential seq(nn::Linear(4, 8), nn::Tanh(), nn::Linear(8, 3, false));
  EXPECT_EQ(seq.to_string(),
            "Sequential(\n"
            "  (0): Linear(in_features=4, out_features=8, bias=True)\n"
            "  (1): Tanh()\n"
            "  (2): Linear(in_features=8, out_features=3, bias=False)\n"
            ")");
}

TEST(Linear, ShapesAndInitBounds) {
  manual_seed(7);
  nn::Linear lin(16, 5);
  EXPECT_EQ(lin.weight().shape(), (Shape{5, 16}));
  EXPECT_EQ(lin.bias().shape(), (Shape{5}));
  EXPECT_EQ(lin.weight().dtype(), DType::f32);
  const float bound = 1.0f / 4.0f;   // 1 / sqrt(16)
  float lo = 1, hi = -1;
  for (const Tensor& p : lin.parameters())
    for (float v : p.to_vector<float>()) {
      EXPECT_GE(v, -bound);
      EXPECT_LT(v, bound);
      lo = std::min(lo, v), hi = std::max(hi, v);
    }
  // 85 draws from U[-1/4, 1/4) spread over most of the range (fails only if init ignored the bound).
  EXPECT_LT(lo, -0.15f);
  EXPECT_GT(hi, 0.15f);
  // Same seed, same parameters.
  manual_seed(7);
  nn::Linear again(16, 5);
  EXPECT_EQ(again.weight().to_vector<float>(), lin.weight().to_vector<float>());
  EXPECT_EQ(again.bias().to_vector<float>(), lin.bias().to_vector<float>());
}

// y[n, o] = b[o] + sum_i x[n, i] W[o, i], computed with plain loops.
std::vector<double> reference_linear(const Tensor& x, const nn::Linear& lin) {
  const auto xv = x.to_vector<double>(), wv = lin.weight().to_vector<double>();
  const auto bv = lin.bias().defined() ? lin.bias().to_vector<double>() : std::vector<double>(lin.out_features());
  const int64_t rows = x.numel() / lin.in_features(), in = lin.in_features(), out = lin.out_features();
  std::vector<double> y;
  for (int64_t n = 0; n < rows; ++n)
    for (int64_t o = 0; o < out; ++o) {
      double acc = 0;
      for (int64_t i = 0; i < in; ++i) acc += xv[n * in + i] * wv[o * in + i];
      y.push_back(acc + bv[o]);
    }
  return y;
}

void expect_near_all(const std::vector<double>& a, const std::vector<double>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-12) << "element " << i;
}

// 1.13's graph: addmm for a 2-D input; a contiguous 3-D input flattened into addmm's rows and viewed back.
TEST(Linear, ForwardRecordsPyTorchsNodes) {
  nn::Linear lin(3, 2, true, DType::f64);
  Tensor x2 = randn({4, 3}, DType::f64);
  Tensor y2 = lin(x2);
  EXPECT_EQ(y2.shape(), (Shape{4, 2}));
  ASSERT_NE(y2.grad_fn(), nullptr);
  EXPECT_EQ(y2.grad_fn()->name(), "AddmmBackward0");
  expect_near_all(y2.to_vector<double>(), reference_linear(x2, lin));

  Tensor x3 = randn({2, 5, 3}, DType::f64);
  Tensor y3 = lin(x3);
  EXPECT_EQ(y3.shape(), (Shape{2, 5, 2}));
  EXPECT_EQ(y3.grad_fn()->name(), "ViewBackward0");
  EXPECT_EQ(y3.grad_fn()->next_edges()[0].node->name(), "AddmmBackward0");
  expect_near_all(y3.to_vector<double>(), reference_linear(x3, lin));

  nn::Linear no_bias(3, 2, false, DType::f64);
  EXPECT_THAT(names_of(no_bias), ElementsAre("weight"));
  expect_near_all(no_bias(x2).to_vector<double>(), reference_linear(x2, no_bias));
}

TEST(Linear, WrongInputsRaisePyTorchsTexts) {
  // 1.13's F.linear texts (what users search for): rows (leading dims flattened) x last dim against in x out
  nn::Linear lin(4, 8);
  EXPECT_EQ(error_of([&] { lin(zeros({5, 3})); }), "mat1 and mat2 shapes cannot be multiplied (5x3 and 4x8)");
  EXPECT_EQ(error_of([&] { lin(zeros({2, 5, 3})); }), "mat1 and mat2 shapes cannot be multiplied (10x3 and 4x8)");
  EXPECT_EQ(error_of([&] { lin(zeros({3})); }), "mat1 and mat2 shapes cannot be multiplied (1x3 and 4x8)");
  EXPECT_EQ(error_of([&] { lin(zeros({})); }), "both arguments to matmul need to be at least 1D, but they are 0D and 2D");
  EXPECT_EQ(error_of([&] { lin(zeros({2, 4}, DType::f64)); }), "mat1 and mat2 must have the same dtype");
  nn::Linear no_bias(4, 8, false);
  EXPECT_EQ(error_of([&] { no_bias(zeros({2, 4}, DType::f64)); }), "expected scalar type Double but found Float");
}

TEST(Sequential, ChainsChildrenNamedByIndex) {
  manual_seed(3);
  auto l0 = std::make_shared<nn::Linear>(4, 8, true, DType::f64);
  auto l2 = std::make_shared<nn::Linear>(8, 2, true, DType::f64);
  nn::Sequential seq{l0, std::make_shared<nn::Tanh>()};
  seq.push_back(l2);
  ASSERT_EQ(seq.size(), 3u);
  EXPECT_EQ(seq[0], l0);
  EXPECT_EQ(seq[1]->type_name(), "Tanh");
  EXPECT_THAT(names_of(seq), ElementsAre("0.weight", "0.bias", "2.weight", "2.bias"));

  Tensor x = randn({3, 4}, DType::f64);
  expect_near_all(seq(x).to_vector<double>(), (*l2)(tanh((*l0)(x))).to_vector<double>());

  EXPECT_THAT(error_of([&] { seq[3]; }), HasSubstr("index 3 is out of range for a Sequential of size 3"));
  EXPECT_THAT(error_of([&] { seq.at<nn::Linear>(1); }), HasSubstr("child 1 is a Tanh"));
  nn::Sequential empty;
  EXPECT_TRUE(empty(x).is_same(x));
}

TEST(Losses, CallTheEngineLosses) {
  Tensor pred = tensor({1.0, 2.0, 4.0}, DType::f64), target = tensor({0.0, 2.0, 1.0}, DType::f64);
  nn::MSELoss mse;
  EXPECT_DOUBLE_EQ(mse(pred, target).item(), (1.0 + 0.0 + 9.0) / 3.0);

  // One row, logits (0, log 3): softmax = (1/4, 3/4); class 1 gives -log(3/4).
  Tensor logits = from_vector<double>({0.0, std::log(3.0)}, {1, 2});
  Tensor cls = from_vector<int64_t>({1}, {1});
  nn::CrossEntropyLoss ce;
  EXPECT_NEAR(ce(logits, cls).item(), -std::log(0.75), 1e-15);
}

}  // namespace
}  // namespace tinyddp
