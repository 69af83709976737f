// A parameter used on some ranks only, under find_unused_parameters (tests/golden/ddp_rank_unused.json, made by
// gen_ddp_rank_unused.py on PyTorch 1.13.1 DDP, gloo, 2 processes): the same model and data on 2 thread ranks
// give every rank the same .grad values (1e-6) and the same undefined ones. The rank that skips b marks it
// unused at its first hook, the local-used map's allreduce says some rank used it, so finalize copies the
// averaged bucket into its .grad ("locally unused, globally used"); u, unused everywhere, keeps .grad undefined.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "dist/ddp.h"
#include "dist/thread_process_group.h"
#include "engine/tinyddp.h"

namespace tinyddp::dist {
namespace {

const nlohmann::json& golden() {
  static const nlohmann::json g = [] {
    std::ifstream f("tests/golden/ddp_rank_unused.json");
    EXPECT_TRUE(f.good()) << "run the tests from the repository root";
    return nlohmann::json::parse(f);
  }();
  return g;
}

Tensor from_json(const nlohmann::json& t) {
  return from_vector(t["values"].get<std::vector<double>>(), t["shape"].get<Shape>(), DType::f64);
}

// Per iteration, per parameter name: .grad's values, or nullopt where it is undefined.
using Grads = std::vector<std::map<std::string, std::optional<std::vector<double>>>>;

TEST(RankUnusedGolden, LocallyUnusedParameterGetsTheAverageAndGloballyUnusedStaysUndefined) {
  const auto& g = golden();
  const auto& iterations = g["iterations"];
  std::vector<Grads> got(2);
  std::vector<std::vector<std::string>> warnings(2);
  const auto errors = ThreadWorld::run(2, [&](ProcessGroup& pg) {
    const int rank = pg.rank();
    NamedParameters named;
    std::map<std::string, Tensor> p;
    for (const std::string name : g["param_order"]) {
      p[name] = from_json(g["params"][name]).requires_grad_();
      named.emplace_back(name, p[name]);
    }
    DistributedDataParallel ddp(named, std::shared_ptr<ProcessGroup>(&pg, [](ProcessGroup*) {}),
                                {.find_unused_parameters = true, .print_warnings = false});
    for (const auto& it : iterations) {
      if (it["clear_grads"].get<bool>())
        for (auto& [name, param] : p) param.set_grad(Tensor());
      const Tensor x = from_json(it["data"][rank]["x"]), y = from_json(it["data"][rank]["y"]);
      bool use_b = false;
      for (int r : it["b_used_on_ranks"]) use_b |= r == rank;
      auto out = ddp.forward([&] {
        const Tensor h = matmul(x, t(p["w"]));
        return std::vector<Tensor>{use_b ? h + p["b"] : h};
      });
      mean(pow(out[0] - y, 2.0)).backward();
      auto& row = got[rank].emplace_back();
      for (const auto& [name, param] : p)
        row[name] = param.grad().defined() ? std::optional(param.grad().to_vector<double>()) : std::nullopt;
    }
    warnings[rank] = ddp.warnings();
  });
  for (int r = 0; r < 2; ++r) ASSERT_FALSE(errors[r]) << "rank " << r << " failed";

  size_t compared = 0, undefined = 0;
  for (size_t it = 0; it < iterations.size(); ++it) {
    for (int r = 0; r < 2; ++r) {
      for (const auto& [name, want] : iterations[it]["grads"][r].items()) {
        SCOPED_TRACE("iteration " + std::to_string(it + 1) + ", rank " + std::to_string(r) + ", " + name + ".grad");
        const auto& mine = got[r].at(it).at(name);
        if (want.is_null()) {
          EXPECT_FALSE(mine.has_value()) << "PyTorch leaves it undefined";
          ++undefined;
          continue;
        }
        ASSERT_TRUE(mine.has_value()) << "PyTorch defines it";
        const auto values = want["values"].get<std::vector<double>>();
        ASSERT_EQ(mine->size(), values.size());
        double max_diff = 0;
        for (size_t k = 0; k < values.size(); ++k) max_diff = std::max(max_diff, std::abs((*mine)[k] - values[k]));
        EXPECT_LT(max_diff, 1e-6) << "max |tinyddp - PyTorch|";
        ++compared;
      }
    }
  }
  // The premise: b was locally unused on some rank and still got a gradient there, and u stayed undefined.
  EXPECT_EQ(compared, 2u * 2u * iterations.size());
  EXPECT_EQ(undefined, 2u * iterations.size());
  // PyTorch warns only when nothing is unused; here u always is.
  for (int r = 0; r < 2; ++r) EXPECT_TRUE(warnings[r].empty()) << ::testing::PrintToString(warnings[r]);
}

}  // namespace
}  // namespace tinyddp::dist
