// backward(create_graph=True) under DDP, as PyTorch 1.13.1 does it (dist/reducer.h, Note [create_graph under
// DDP]). Golden: tests/golden/ddp_create_graph_single.json (gen_ddp_create_graph.py, gloo, 2 processes): a model
// with one parameter, so its bucket holds one view and the copy into it succeeds. The gradient is averaged across
// ranks and keeps a graph, through this rank's gradient / world size: the second-order gradient differs per rank.
// The multi-parameter case (the error) is `tinyddp repro create-graph`, checked in tests/apps.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "dist/ddp.h"
#include "dist/thread_process_group.h"
#include "engine/tinyddp.h"

namespace tinyddp::dist {
namespace {

std::shared_ptr<ProcessGroup> borrow(ProcessGroup& pg) { return {&pg, [](ProcessGroup*) {}}; }

const nlohmann::json& golden() {
  static const nlohmann::json g = [] {
    std::ifstream f("tests/golden/ddp_create_graph_single.json");
    if (!f.good()) throw std::runtime_error("tests/golden/ddp_create_graph_single.json not found: run from the repo root");
    return nlohmann::json::parse(f);
  }();
  return g;
}

Tensor from_golden(const nlohmann::json& values, Shape shape) {
  return from_vector(values.get<std::vector<double>>(), shape, DType::f64);
}

void expect_near_all(const std::vector<double>& mine, const nlohmann::json& theirs, const std::string& what) {
  const auto want = theirs.get<std::vector<double>>();
  ASSERT_EQ(mine.size(), want.size()) << what;
  double max_diff = 0;
  for (size_t i = 0; i < want.size(); ++i) max_diff = std::max(max_diff, std::abs(mine[i] - want[i]));
  EXPECT_LT(max_diff, 1e-12) << what << ": max |tinyddp - PyTorch| = " << max_diff;
}

struct RankOutcome {
  std::vector<double> grad, second_order;
  bool grad_requires_grad = false;
  std::string grad_fn;
  std::vector<std::string> warnings;
  std::string error;
};

TEST(CreateGraphSingleParameter, AveragedValueLocalHigherOrderNoWarning) {
  const auto& ranks = golden()["ranks"];
  std::vector<RankOutcome> out(2);
  const auto errors = ThreadWorld::run(2, [&](ProcessGroup& pg) {
    const auto& g = ranks[pg.rank()];
    RankOutcome& mine = out[pg.rank()];
    // Rank 0's weight on every rank (the golden records it after DDP's broadcast), each rank's own x.
    const Tensor w = from_golden(g["weight"], {1, 4}).requires_grad_();
    const Tensor x = from_golden(g["x"], {6, 4});
    DistributedDataParallel ddp({{"weight", w}}, borrow(pg), {.print_warnings = false});
    try {
      auto y = ddp.forward([&] { return std::vector<Tensor>{matmul(x, t(w))}; });
      pow(y[0], 2.0).mean().backward({}, {.create_graph = true});
      const Tensor grad = w.grad();
      mine.grad = grad.to_vector<double>();
      mine.grad_requires_grad = grad.requires_grad();
      mine.grad_fn = grad.grad_fn() ? grad.grad_fn()->name() : "";
      mine.second_order = autograd::grad({pow(grad, 2.0).sum()}, {w})[0].to_vector<double>();
    } catch (const Error& e) {
      mine.error = e.what();
    }
    mine.warnings = ddp.warnings();
  });
  for (size_t r = 0; r < 2; ++r) {
    SCOPED_TRACE("rank " + std::to_string(r));
    ASSERT_FALSE(errors[r]) << "the rank threw outside the step";
    ASSERT_EQ(out[r].error, "") << "PyTorch raises nothing for a bucket of one parameter";
    expect_near_all(out[r].grad, ranks[r]["grad"], "grad (the average over ranks)");
    EXPECT_EQ(out[r].grad_requires_grad, ranks[r]["grad_requires_grad"].get<bool>());
    EXPECT_EQ(out[r].grad_fn, ranks[r]["grad_fn"].get<std::string>());
    expect_near_all(out[r].second_order, ranks[r]["second_order"], "d sum(grad^2) / dw (this rank's)");
    // PyTorch's note is a C++ log line (reducer.cpp), not a warning: tinyddp gives no warning either.
    EXPECT_FALSE(ranks[r]["logs"].empty());
    EXPECT_TRUE(out[r].warnings.empty()) << ::testing::PrintToString(out[r].warnings);
  }
  EXPECT_TRUE(golden()["grads_in_sync"].get<bool>());
  EXPECT_EQ(out[0].grad, out[1].grad) << "the averaged gradients are bitwise equal on both ranks";
  EXPECT_NE(out[0].second_order, out[1].second_order) << "the higher-order gradient is not synchronized";
}

// Two parameters share the one first-iteration bucket: the second copy into it raises PyTorch's in-place error,
// on every rank, inside the backward and before any collective.
TEST(CreateGraphMultiParameter, SecondCopyIntoTheBucketRaisesOnEveryRank) {
  std::vector<std::string> messages(2);
  const auto errors = ThreadWorld::run(2, [&](ProcessGroup& pg) {
    const Tensor w = full({1, 4}, 0.5, DType::f64).requires_grad_();
    const Tensor b = full({1}, 0.25, DType::f64).requires_grad_();
    DistributedDataParallel ddp({{"weight", w}, {"bias", b}}, borrow(pg), {.print_warnings = false});
    const Tensor x = full({3, 4}, pg.rank() + 1.0, DType::f64);
    auto y = ddp.forward([&] { return std::vector<Tensor>{matmul(x, t(w)) + b}; });
    try {
      pow(y[0], 2.0).mean().backward({}, {.create_graph = true});
    } catch (const Error& e) {
      messages[pg.rank()] = e.what();
    }
  });
  for (size_t r = 0; r < 2; ++r) {
    EXPECT_FALSE(errors[r]) << "rank " << r;
    EXPECT_EQ(messages[r], "a leaf Variable that requires grad is being used in an in-place operation.") << "rank " << r;
  }
}

}  // namespace
}  // namespace tinyddp::dist
