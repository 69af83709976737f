// nn::Module buffers (register_buffer, named_buffers, state files, to) and requires_grad_, with PyTorch 1.13's
// names, order and messages (torch/nn/modules/module.py: register_buffer, _named_members, _save_to_state_dict).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "models/nn/nn.h"
#include "tests/models/test_util.h"

namespace tinyddp {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing_util::error_of;

template <typename Named>
std::vector<std::string> names_of(const Named& named) {
  std::vector<std::string> out;
  for (const auto& [name, _] : named) out.push_back(name);
  return out;
}

// A BatchNorm-like layer: a weight and two statistics buffers.
struct Norm : nn::Module {
  Tensor weight = register_parameter("weight", ones({3}));
  Tensor running_mean = register_buffer("running_mean", zeros({3}));
  Tensor running_var = register_buffer("running_var", ones({3}));
};

// The root's own buffer `steps` is registered after the children but listed first, as its own parameter is.
struct Net : nn::Module {
  std::shared_ptr<nn::Linear> lin = register_module("lin", std::make_shared<nn::Linear>(2, 3));
  std::shared_ptr<Norm> norm = register_module("norm", std::make_shared<Norm>());
  std::shared_ptr<Norm> again = register_module("again", norm);   // the same module under a second name
  Tensor scale = register_parameter("scale", ones({1}));
  Tensor steps = register_buffer("steps", zeros({1}));
};

TEST(Buffers, NamedBuffersAreRootFirstDottedInRegistrationOrderEachOnce) {
  Net net;
  EXPECT_THAT(names_of(net.named_buffers()), ElementsAre("steps", "norm.running_mean", "norm.running_var"));
  const auto buffers = net.buffers();
  ASSERT_EQ(buffers.size(), 3u);
  EXPECT_TRUE(buffers[0].is_same(net.steps));
  EXPECT_TRUE(buffers[1].is_same(net.norm->running_mean));
  // Buffers are not parameters, and registering one leaves requires_grad as it was (false here).
  EXPECT_THAT(names_of(net.named_parameters()), ElementsAre("scale", "lin.weight", "lin.bias", "norm.weight"));
  EXPECT_FALSE(net.steps.requires_grad());
  EXPECT_THAT(names_of(net.norm->named_own_buffers()), ElementsAre("running_mean", "running_var"));
}

TEST(Buffers, BadNamesGetPyTorchsMessages) {
  Norm m;
  EXPECT_THAT(error_of([&] { m.register_buffer("weight", zeros({1})); }),
              AllOf(HasSubstr("attribute 'weight' already exists"), HasSubstr("parameter of that name")));
  EXPECT_THAT(error_of([&] { m.register_buffer("running_mean", zeros({1})); }),
              AllOf(HasSubstr("attribute 'running_mean' already exists"), HasSubstr("copy them into it in place")));
  EXPECT_THAT(error_of([&] { m.register_parameter("running_var", zeros({1})); }),
              HasSubstr("attribute 'running_var' already exists"));
  EXPECT_THAT(error_of([&] { m.register_module("running_var", std::make_shared<nn::ReLU>()); }),
              HasSubstr("attribute 'running_var' already exists"));
  EXPECT_THAT(error_of([&] { m.register_buffer("a.b", zeros({1})); }), HasSubstr("buffer name can't contain \".\""));
  EXPECT_THAT(error_of([&] { m.register_buffer("", zeros({1})); }), HasSubstr("buffer name can't be empty string \"\""));
  EXPECT_THAT(error_of([&] { m.register_buffer("undefined", Tensor()); }), HasSubstr("undefined tensor"));
  EXPECT_EQ(m.buffers().size(), 2u);   // nothing was registered by the failed calls
}

// PyTorch's state_dict visits each module's own parameters, then its own buffers, then its children.
TEST(Buffers, StateEntriesFollowStateDictOrder) {
  Net net;
  EXPECT_THAT(names_of(nn::state_entries(net)),
              ElementsAre("scale", "steps", "lin.weight", "lin.bias", "norm.weight", "norm.running_mean",
                          "norm.running_var"));
  // Without buffers the entries are named_parameters(), so existing parameter files load as before.
  nn::Linear lin(2, 3);
  EXPECT_EQ(names_of(nn::state_entries(lin)), names_of(lin.named_parameters()));
}

std::string temp_file(const std::string& tag) {
  return (std::filesystem::temp_directory_path() / ("tinyddp_buffers_" + tag + ".params")).string();
}

TEST(Buffers, StateFilesSaveAndRestoreBuffersInPlace) {
  const std::string path = temp_file("roundtrip");
  Net saved;
  {
    NoGradGuard no_grad;
    saved.steps.fill_(7);
    saved.norm->running_mean.copy_(from_vector<float>({0.5f, -1.25f, 3.0f}, {3}));
  }
  nn::save_parameters(saved, path);
  Net loaded;
  const Tensor handle = loaded.norm->running_mean;
  nn::load_parameters(loaded, path);
  EXPECT_TRUE(loaded.norm->running_mean.is_same(handle));   // in place: the same tensor
  EXPECT_EQ(loaded.norm->running_mean.to_vector<float>(), (std::vector<float>{0.5f, -1.25f, 3.0f}));
  EXPECT_EQ(loaded.steps.to_vector<float>(), (std::vector<float>{7.0f}));
  EXPECT_EQ(loaded.lin->weight().to_vector<float>(), saved.lin->weight().to_vector<float>());

  // The file lists the buffers where state_dict would; a file without them is refused, naming them.
  std::ifstream in(path);
  std::vector<std::string> headers;
  for (std::string line; std::getline(in, line);)
    if (line.find(" f32 ") != std::string::npos) headers.push_back(line.substr(0, line.find(' ')));
  EXPECT_THAT(headers, ElementsAre("scale", "steps", "lin.weight", "lin.bias", "norm.weight", "norm.running_mean",
                                   "norm.running_var"));
  nn::Linear lin(2, 3);
  nn::save_parameters(lin, path);
  struct Flat : nn::Module {
    Tensor weight = register_parameter("weight", zeros({3, 2}));
    Tensor b = register_buffer("b", zeros({2}));
  };
  Flat flat;
  EXPECT_THAT(error_of([&] { nn::load_parameters(flat, path); }),
              AllOf(HasSubstr("unexpected parameter 'bias'"), HasSubstr("parameters and buffers are [weight, b]")));
  struct NoBias : nn::Module {
    Tensor weight = register_parameter("weight", zeros({3, 2}));
    Tensor bias = register_parameter("bias", zeros({3}));
    Tensor b = register_buffer("b", zeros({2}));
  };
  NoBias nb;
  EXPECT_THAT(error_of([&] { nn::load_parameters(nb, path); }),
              AllOf(HasSubstr("missing buffers [b]"), HasSubstr("before buffers were registered")));
  struct WrongShape : nn::Module {
    Tensor weight = register_parameter("weight", zeros({3, 2}));
    Tensor bias = register_buffer("bias", zeros({4}));
  };
  WrongShape ws;
  EXPECT_THAT(error_of([&] { nn::load_parameters(ws, path); }), HasSubstr("size mismatch for buffer 'bias'"));
  std::remove(path.c_str());
}

TEST(Buffers, ToKeepsBufferHandles) {
  Net net;
  const Tensor handle = net.steps;
  net.to(Device::cpu());
  EXPECT_TRUE(net.buffers()[0].is_same(handle));
  EXPECT_EQ(net.steps.device(), Device::cpu());
}

TEST(RequiresGrad, FreezesAndUnfreezesEveryParameterRecursively) {
  Net net;
  nn::Module& same = net.norm->requires_grad_(false);
  EXPECT_EQ(&same, net.norm.get());
  for (const auto& [name, p] : net.named_parameters())
    EXPECT_EQ(p.requires_grad(), name != "norm.weight") << name;
  net.requires_grad_(false);
  for (const auto& [name, p] : net.named_parameters()) EXPECT_FALSE(p.requires_grad()) << name;
  // A frozen module's parameters get no gradient; the rest of the graph still does.
  net.lin->requires_grad_();
  const Tensor y = sum((*net.lin)(ones({1, 2})) * net.norm->weight);
  y.backward();
  EXPECT_TRUE(net.lin->weight().grad().defined());
  EXPECT_FALSE(net.norm->weight.grad().defined());
  // Buffers are untouched by requires_grad_.
  net.requires_grad_(true);
  EXPECT_FALSE(net.steps.requires_grad());
  for (const auto& [name, p] : net.named_parameters()) EXPECT_TRUE(p.requires_grad()) << name;
}

}  // namespace
}  // namespace tinyddp
