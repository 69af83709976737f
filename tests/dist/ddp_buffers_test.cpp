// DDP and module buffers against PyTorch 1.13 (tests/golden/ddp_buffers.json from gen_ddp_buffers.py; the
// facts are in dist/ddp.cpp's Note [Buffers in 1.13's DDP]): what the construction broadcast copies and which
// versions it bumps, at which forwards broadcast_buffers copies rank 0's buffers, and the version-counter
// error of two forwards before one backward.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
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
    std::ifstream in("tests/golden/ddp_buffers.json");
    if (!in.is_open()) throw Error("cannot open tests/golden/ddp_buffers.json; run the tests from the repository root.");
    return json::parse(in);
  }();
  return j;
}

void expect_no_errors(const std::vector<std::exception_ptr>& errors) {
  for (size_t r = 0; r < errors.size(); ++r) {
    if (!errors[r]) continue;
    try {
      std::rethrow_exception(errors[r]);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "rank " << r << ": " << e.what();
    }
  }
}

// The generator's model: out = lin(x) * scale, with a frozen parameter and an empty buffer; rank r fills
// frozen and scale with r + 1.
struct BufferModel : nn::Module {
  std::shared_ptr<nn::Linear> lin;
  Tensor frozen, scale, empty;
  explicit BufferModel(int rank) {
    lin = register_module("lin", std::make_shared<nn::Linear>(4, 8));
    frozen = register_parameter("frozen", full({2}, rank + 1.0));
    frozen.requires_grad_(false);
    scale = register_buffer("scale", full({8}, rank + 1.0));
    empty = register_buffer("empty", zeros({0}));
  }
  Tensor forward(const Tensor& x) override { return (*lin)(x) * scale; }
};

// name -> (version, first value or NaN) of every named parameter and buffer.
std::map<std::string, std::pair<uint64_t, double>> states(const BufferModel& m) {
  std::map<std::string, std::pair<uint64_t, double>> out;
  auto add = [&](const auto& named) {
    for (const auto& [n, t] : named)
      out[n] = {t.version(), t.numel() ? t.template to_vector<float>()[0] : std::nan("")};
  };
  add(m.named_parameters());
  add(m.named_buffers());
  return out;
}

struct StepRecord {
  double scale_first;
  uint64_t scale_version, weight_version;
};

struct RankRecord {
  std::map<std::string, std::pair<uint64_t, double>> before, after;
  std::vector<StepRecord> steps;
  std::string error;
};

std::vector<RankRecord> run(const std::string& kind, bool broadcast_buffers) {
  std::vector<RankRecord> records(2);
  std::vector<std::unique_ptr<BufferModel>> models;
  for (int r = 0; r < 2; ++r) models.push_back(std::make_unique<BufferModel>(r));
  expect_no_errors(ThreadWorld::run(2, [&](ProcessGroup& pg) {
    BufferModel& m = *models[pg.rank()];
    RankRecord& rec = records[pg.rank()];
    rec.before = states(m);
    DistributedDataParallel ddp(m.named_parameters(), borrow(pg),
                                {.broadcast_buffers = broadcast_buffers, .print_warnings = false}, m.named_buffers());
    rec.after = states(m);
    const Tensor x = full({3, 4}, 0.5 + pg.rank());
    auto fwd = [&] { return ddp.forward([&] { return std::vector<Tensor>{m.forward(x)}; })[0]; };
    if (kind == "two_forwards") {
      const Tensor y1 = fwd(), y2 = fwd();
      try {
        (sum(y1) + sum(y2)).backward();
      } catch (const Error& e) {
        rec.error = e.what();
      }
      return;
    }
    const auto& modes = golden().at("sync_rule_steps");
    for (size_t step = 0; step < modes.size(); ++step) {
      {
        NoGradGuard no_grad;
        m.scale.fill_(100.0 * static_cast<double>(step + 1) + pg.rank());
      }
      const std::string mode = modes[step];
      if (mode == "no_grad") {
        NoGradGuard no_grad;
        fwd();
      } else if (mode == "no_sync") {
        auto guard = ddp.no_sync();
        sum(fwd()).backward();
      } else {
        sum(fwd()).backward();
      }
      rec.steps.push_back(
          {m.scale.to_vector<float>()[0], m.scale.version(), m.lin->weight().version()});
    }
  }));
  return records;
}

const std::vector<std::string> kRuns = {"sync_rules/broadcast_buffers=true", "sync_rules/broadcast_buffers=false",
                                        "two_forwards/broadcast_buffers=true", "two_forwards/broadcast_buffers=false"};

// Versions are compared as increments (tinyddp's Linear initializes without PyTorch's in-place init calls).
TEST(DdpBuffers, ConstructionBroadcastsParametersAndBuffersAndBumpsEachVersionOnce) {
  for (const std::string& id : kRuns) {
    const json& g = golden().at("runs").at(id);
    const auto records = run(g.at("kind"), g.at("broadcast_buffers"));
    for (int r = 0; r < 2; ++r) {
      const json& before = g.at("before_construction")[r];
      const json& after = g.at("after_construction")[r];
      ASSERT_EQ(records[r].after.size(), after.size()) << id;
      for (const auto& [name, state] : records[r].after) {
        SCOPED_TRACE(id + ", rank " + std::to_string(r) + ", " + name);
        const json& a = after.at(name);
        EXPECT_EQ(state.first - records[r].before.at(name).first,
                  a.at("version").get<uint64_t>() - before.at(name).at("version").get<uint64_t>());
        // The values PyTorch copied from rank 0 (frozen, scale); the Linear's own values are tinyddp's.
        if (name == "frozen" || name == "scale") EXPECT_EQ(state.second, a.at("first").get<double>());
      }
    }
  }
}

TEST(DdpBuffers, ForwardsCopyRankZerosBuffersExactlyWhenPyTorchDoes) {
  for (const bool broadcast_buffers : {true, false}) {
    const std::string id = std::string("sync_rules/broadcast_buffers=") + (broadcast_buffers ? "true" : "false");
    const json& g = golden().at("runs").at(id);
    const auto records = run("sync_rules", broadcast_buffers);
    const json& steps = g.at("steps");
    for (int r = 0; r < 2; ++r) {
      const uint64_t scale0 = records[r].after.at("scale").first, weight0 = records[r].after.at("lin.weight").first;
      const uint64_t g_scale0 = g.at("after_construction")[r].at("scale").at("version");
      const uint64_t g_weight0 = g.at("after_construction")[r].at("lin.weight").at("version");
      ASSERT_EQ(records[r].steps.size(), steps.size());
      for (size_t s = 0; s < steps.size(); ++s) {
        SCOPED_TRACE(id + ", rank " + std::to_string(r) + ", step " + std::to_string(s) + " (" +
                     steps[s].at("mode").get<std::string>() + ")");
        const json& want = steps[s].at("ranks")[r];
        EXPECT_EQ(records[r].steps[s].scale_first, want.at("scale_first").get<double>());
        EXPECT_EQ(records[r].steps[s].scale_version - scale0, want.at("scale_version").get<uint64_t>() - g_scale0);
        EXPECT_EQ(records[r].steps[s].weight_version - weight0,
                  want.at("weight_version").get<uint64_t>() - g_weight0);
      }
    }
  }
}

TEST(DdpBuffers, TwoForwardsThenOneBackwardRaisesPyTorchsVersionError) {
  for (const bool broadcast_buffers : {true, false}) {
    const std::string id = std::string("two_forwards/broadcast_buffers=") + (broadcast_buffers ? "true" : "false");
    const json& g = golden().at("runs").at(id);
    const auto records = run("two_forwards", broadcast_buffers);
    for (int r = 0; r < 2; ++r) {
      // The buffer starts at version 0 in both frameworks, so the versions are absolute here: N and M match.
      const json& want = g.at("error")[r];
      EXPECT_EQ(records[r].error, want.is_null() ? "" : want.get<std::string>()) << id << ", rank " << r;
    }
  }
}

TEST(DdpBuffers, GoldenIsPyTorch113s) {
  EXPECT_TRUE(golden().at("torch_version").get<std::string>().starts_with("1.13")) << golden().at("torch_version");
}

}  // namespace
}  // namespace tinyddp::dist
