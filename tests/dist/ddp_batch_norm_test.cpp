// The engine's batch_norm under the C++ DDP on 2 thread ranks against PyTorch 1.13's BatchNorm1d under gloo
// (tests/golden/nn_layers.json's "ddp" part, from gen_nn_layers.py): the GAN idiom D(real), D(fake), one backward
// raises 1.13's "modified by an inplace operation" with its versions when broadcast_buffers copies the running
// stats between the forwards (dist/ddp.cpp's Note [Buffers in 1.13's DDP]), and the buffers' values and versions,
// the int64 num_batches_tracked's among them, after each step of a plain loop.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "dist/ddp.h"
#include "dist/thread_process_group.h"
#include "models/nn/nn.h"

namespace tinyddp::dist {
namespace {

using nlohmann::json;

std::shared_ptr<ProcessGroup> borrow(ProcessGroup& pg) { return {&pg, [](ProcessGroup*) {}}; }

const json& golden() {
  static const json j = [] {
    std::ifstream in("tests/golden/nn_layers.json");
    if (!in.is_open()) throw Error("cannot open tests/golden/nn_layers.json; run the tests from the repository root.");
    return json::parse(in);
  }();
  return j.at("ddp");
}

Tensor from_json(const json& t) {
  Shape shape = t.at("shape").get<Shape>();
  return from_vector(t.at("values").get<std::vector<float>>(), shape);
}

// BatchNorm1d(3) as 1.13's module: weight and bias from the golden data, buffers left at version 1 by in-place
// initialization, num_batches_tracked counted in the forward (training, momentum 0.1).
struct BatchNorm : nn::Module {
  Tensor weight, bias, running_mean, running_var, num_batches_tracked;
  BatchNorm() {
    weight = register_parameter("weight", from_json(golden().at("model").at("weight")));
    bias = register_parameter("bias", from_json(golden().at("model").at("bias")));
    running_mean = register_buffer("running_mean", zeros({3}));
    running_var = register_buffer("running_var", zeros({3}));
    num_batches_tracked = register_buffer("num_batches_tracked", zeros({}, DType::i64));
    running_mean.zero_();
    running_var.fill_(1.0);
    num_batches_tracked.zero_();
  }
  Tensor forward(const Tensor& x) override {
    num_batches_tracked.fill_(static_cast<double>(num_batches_tracked.item<int64_t>() + 1));
    return batch_norm(x, weight, bias, running_mean, running_var, /*training=*/true, 0.1, 1e-5);
  }
};

// The generator's Disc: the BatchNorm as child "bn", so the names are PyTorch's ("bn.running_mean").
struct BatchNormModel : nn::Module {
  std::shared_ptr<BatchNorm> bn = register_module("bn", std::make_shared<BatchNorm>());
  Tensor forward(const Tensor& x) override { return bn->forward(x); }
};

struct Step {
  std::vector<std::pair<std::string, Tensor>> buffers;   // clones
  std::vector<uint64_t> versions;
  Tensor weight_grad, bias_grad;
};

struct RankRecord {
  Step after_construction;
  std::vector<Step> steps;
  std::string error;
};

Step snapshot(const BatchNormModel& m) {
  Step s;
  for (const auto& [name, b] : m.named_buffers()) {
    s.buffers.emplace_back(name, b.clone());
    s.versions.push_back(b.version());
  }
  if (m.bn->weight.grad().defined()) s.weight_grad = m.bn->weight.grad().clone();
  if (m.bn->bias.grad().defined()) s.bias_grad = m.bn->bias.grad().clone();
  return s;
}

std::vector<RankRecord> run(const std::string& kind, bool broadcast_buffers) {
  std::vector<RankRecord> records(2);
  std::vector<std::unique_ptr<BatchNormModel>> models;
  for (int r = 0; r < 2; ++r) models.push_back(std::make_unique<BatchNormModel>());
  const auto errors = ThreadWorld::run(2, [&](ProcessGroup& pg) {
    BatchNormModel& m = *models[pg.rank()];
    RankRecord& rec = records[pg.rank()];
    DistributedDataParallel ddp(m.named_parameters(), borrow(pg),
                                {.broadcast_buffers = broadcast_buffers, .print_warnings = false}, m.named_buffers());
    rec.after_construction = snapshot(m);
    const json& data = golden().at("data")[pg.rank()];
    const Tensor real = from_json(data.at("real")), fake = from_json(data.at("fake"));
    const Tensor coeff = from_json(data.at("coeff"));
    auto fwd = [&](const Tensor& x) { return ddp.forward([&] { return std::vector<Tensor>{m.forward(x)}; })[0]; };
    if (kind == "gan") {
      const Tensor d_real = fwd(real), d_fake = fwd(fake);
      try {
        (sum(d_real * coeff) + sum(d_fake * coeff)).backward();
      } catch (const Error& e) {
        rec.error = e.what();
      }
      rec.steps.push_back(snapshot(m));
      return;
    }
    for (const Tensor& x : {real, fake}) {
      m.zero_grad();
      sum(fwd(x) * coeff).backward();
      rec.steps.push_back(snapshot(m));
    }
  });
  for (size_t r = 0; r < errors.size(); ++r) {
    if (!errors[r]) continue;
    try {
      std::rethrow_exception(errors[r]);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "rank " << r << ": " << e.what();
    }
  }
  return records;
}

void expect_close(const Tensor& got, const json& want, const std::string& what) {
  if (want.is_null()) {
    EXPECT_FALSE(got.defined()) << what;
    return;
  }
  ASSERT_TRUE(got.defined()) << what;
  const std::vector<double> g = got.to(DType::f64).to_vector<double>();
  const std::vector<double> w = want.at("values").get<std::vector<double>>();
  ASSERT_EQ(g.size(), w.size()) << what;
  double worst = 0;
  for (size_t i = 0; i < g.size(); ++i) worst = std::max(worst, std::abs(g[i] - w[i]) - 1e-5 * std::abs(w[i]));
  EXPECT_LE(worst, 1e-5) << what << ": max |diff| beyond rtol 1e-5 = " << worst;
}

void expect_state(const Step& got, const json& want, const std::string& what) {
  ASSERT_EQ(got.buffers.size(), want.size()) << what;
  for (size_t i = 0; i < got.buffers.size(); ++i) {
    const auto& [name, value] = got.buffers[i];
    const json& w = want.at(name);
    EXPECT_EQ(got.versions[i], w.at("version").get<uint64_t>()) << what << " " << name << " version";
    if (value.dtype() == DType::i64)
      EXPECT_EQ(value.item<int64_t>(), w.at("value").get<int64_t>()) << what << " " << name;
    else
      expect_close(value, w.at("value"), what + " " + name);
  }
}

class DdpBatchNorm : public ::testing::TestWithParam<std::string> {};

TEST_P(DdpBatchNorm, MatchesPyTorchGloo) {
  const json& g = golden().at("runs").at(GetParam());
  const auto records = run(g.at("kind"), g.at("broadcast_buffers"));
  for (int r = 0; r < 2; ++r) {
    const json& want = g.at("ranks")[r];
    const std::string rank = GetParam() + ", rank " + std::to_string(r);
    EXPECT_EQ(records[r].error, want.at("error").is_null() ? "" : want.at("error").get<std::string>()) << rank;
    expect_state(records[r].after_construction, want.at("after_construction"), rank + " after construction");
    ASSERT_EQ(records[r].steps.size(), want.at("steps").size()) << rank;
    for (size_t s = 0; s < records[r].steps.size(); ++s) {
      const json& w = want.at("steps")[s];
      const std::string step = rank + ", step " + std::to_string(s);
      expect_state(records[r].steps[s], w.at("buffers"), step);
      expect_close(records[r].steps[s].weight_grad, w.at("weight_grad"), step + " weight.grad");
      expect_close(records[r].steps[s].bias_grad, w.at("bias_grad"), step + " bias.grad");
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Runs, DdpBatchNorm,
                         ::testing::Values("gan/broadcast_buffers=true", "gan/broadcast_buffers=false",
                                           "train/broadcast_buffers=true", "train/broadcast_buffers=false"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;
                           for (char& c : name)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name;
                         });

}  // namespace
}  // namespace tinyddp::dist
