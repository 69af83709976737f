// Public DDP and Reducer API that the scenario tests do not reach: DDPOptions::broadcast_parameters,
// UnsyncedGradPolicy::ignore, Reducer::set_warning_handler, an invalid TORCH_DISTRIBUTED_DEBUG (PyTorch's
// error, tests/golden/dist_debug_level.json from gen_dist_debug_level.py) and check_before_step.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>

#include "dist/ddp.h"
#include "dist/thread_process_group.h"
#include "engine/tinyddp.h"

namespace tinyddp::dist {
namespace {

std::shared_ptr<ProcessGroup> borrow(ProcessGroup& pg) { return {&pg, [](ProcessGroup*) {}}; }

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

// Rank r starts from w = r + 1 (every element): the broadcast makes it rank 0's 1, without it each keeps its own.
TEST(DDPOptionsBroadcast, ParametersAreRankZerosOnlyWhenBroadcast) {
  for (bool broadcast : {true, false}) {
    std::vector<std::vector<float>> values(2);
    expect_no_errors(ThreadWorld::run(2, [&](ProcessGroup& pg) {
      const Tensor w = full({3}, pg.rank() + 1.0).requires_grad_();
      DistributedDataParallel ddp({{"w", w}}, borrow(pg), {.broadcast_parameters = broadcast, .print_warnings = false});
      values[pg.rank()] = w.to_vector<float>();
    }));
    EXPECT_EQ(values[0], std::vector<float>(3, 1.0f)) << "broadcast " << broadcast;
    EXPECT_EQ(values[1], std::vector<float>(3, broadcast ? 1.0f : 2.0f)) << "broadcast " << broadcast;
  }
}

// A second backward after finalize, and a step after gradients accumulated inside no_sync(): warn reports both,
// error throws, ignore says nothing (PyTorch's silence) while the gradients drift apart all the same.
struct UnsyncedRun {
  std::vector<std::string> warnings;
  std::optional<std::string> backward_error, step_error;
  std::vector<float> grad_after_second_backward;
};

std::vector<UnsyncedRun> unsynced_run(UnsyncedGradPolicy policy) {
  std::vector<UnsyncedRun> runs(2);
  expect_no_errors(ThreadWorld::run(2, [&](ProcessGroup& pg) {
    UnsyncedRun& run = runs[pg.rank()];
    const Tensor w = ones({2}).requires_grad_();
    DistributedDataParallel ddp({{"w", w}}, borrow(pg), {.unsynced_grads = policy, .print_warnings = false});
    const double r = pg.rank();
    // Iteration 1: dL/dw = 2 (r + 1), averaged to 3; the second backward adds 2 (r + 1) unaveraged.
    auto out = ddp.forward([&] { return std::vector<Tensor>{(w * (2.0 * (r + 1))).sum()}; });
    out[0].backward({}, {.retain_graph = true});
    try {
      out[0].backward();
    } catch (const Error& e) {
      run.backward_error = e.what();
    }
    run.grad_after_second_backward = w.grad().to_vector<float>();
    // Iteration 2: the last micro-batch inside no_sync(), then a step.
    {
      auto guard = ddp.no_sync();
      auto again = ddp.forward([&] { return std::vector<Tensor>{w.sum()}; });
      again[0].backward();
    }
    try {
      ddp.check_before_step();
    } catch (const Error& e) {
      run.step_error = e.what();
    }
    run.warnings = ddp.warnings();
  }));
  return runs;
}

TEST(UnsyncedGradPolicies, IgnoreIsSilentWarnReportsErrorThrows) {
  const auto ignore = unsynced_run(UnsyncedGradPolicy::ignore);
  const auto warn = unsynced_run(UnsyncedGradPolicy::warn);
  const auto error = unsynced_run(UnsyncedGradPolicy::error);
  for (int r = 0; r < 2; ++r) {
    SCOPED_TRACE("rank " + std::to_string(r));
    EXPECT_TRUE(ignore[r].warnings.empty()) << ::testing::PrintToString(ignore[r].warnings);
    EXPECT_FALSE(ignore[r].backward_error || ignore[r].step_error);
    // The drift ignore stays silent about: 3 + 2 (r + 1) differs between the ranks.
    EXPECT_EQ(ignore[r].grad_after_second_backward, std::vector<float>(2, 3.0f + 2.0f * (r + 1)));

    ASSERT_EQ(warn[r].warnings.size(), 2u) << ::testing::PrintToString(warn[r].warnings);
    EXPECT_NE(warn[r].warnings[0].find("unsynchronized gradients on rank " + std::to_string(r) + " for 1 parameter(s): .w"),
              std::string::npos) << warn[r].warnings[0];
    EXPECT_NE(warn[r].warnings[1].find("optimizer step on rank " + std::to_string(r) +
                                       " with gradients accumulated inside no_sync()"),
              std::string::npos) << warn[r].warnings[1];
    EXPECT_FALSE(warn[r].backward_error || warn[r].step_error);

    EXPECT_TRUE(error[r].warnings.empty()) << ::testing::PrintToString(error[r].warnings);
    ASSERT_TRUE(error[r].backward_error && error[r].step_error);
    EXPECT_NE(error[r].backward_error->find("a gradient reached parameter .w (index 0)"), std::string::npos)
        << *error[r].backward_error;
    EXPECT_EQ(*error[r].step_error, warn[r].warnings[1]) << "the step check throws the text it warns";
  }
}

// check_before_step is silent once a synchronized backward averaged what no_sync() accumulated.
TEST(CheckBeforeStep, SilentAfterTheSynchronizedBackward) {
  std::vector<std::vector<std::string>> warnings(2);
  expect_no_errors(ThreadWorld::run(2, [&](ProcessGroup& pg) {
    const Tensor w = ones({2}).requires_grad_();
    DistributedDataParallel ddp({{"w", w}}, borrow(pg), {.unsynced_grads = UnsyncedGradPolicy::error,
                                                         .print_warnings = false});
    {
      auto guard = ddp.no_sync();
      ddp.forward([&] { return std::vector<Tensor>{w.sum()}; })[0].backward();
    }
    EXPECT_TRUE(ddp.reducer().has_unreduced_local_grads());
    ddp.forward([&] { return std::vector<Tensor>{w.sum()}; })[0].backward();
    EXPECT_FALSE(ddp.reducer().has_unreduced_local_grads());
    ddp.check_before_step();   // would throw under UnsyncedGradPolicy::error
    warnings[pg.rank()] = ddp.warnings();
  }));
  for (const auto& w : warnings) EXPECT_TRUE(w.empty()) << ::testing::PrintToString(w);
}

// A parameter converted to another dtype after wrapping (module.double()) gets a new AccumulateGrad (Note [A new
// dtype drops the grad accumulator]): the reducer's hooks stay on the old one, so its gradients stay local, with no
// error at the next forward, as in 1.13. Rank r's dL/dw is r + 1: averaged 1.5 before, r + 1 after.
TEST(ParameterDtypeChange, AfterWrappingTheGradientsStayLocal) {
  std::vector<std::vector<double>> before(2), after(2);
  expect_no_errors(ThreadWorld::run(2, [&](ProcessGroup& pg) {
    const Tensor w = ones({2}).requires_grad_();
    DistributedDataParallel ddp({{"w", w}}, borrow(pg), {.unsynced_grads = UnsyncedGradPolicy::ignore,
                                                         .print_warnings = false});
    const double r = pg.rank();
    ddp.forward([&] { return std::vector<Tensor>{(w * (r + 1)).sum()}; })[0].backward();
    before[pg.rank()] = w.grad().to(DType::f64).to_vector<double>();
    {
      NoGradGuard no_grad;
      w.set_data(w.to(DType::f64));
    }
    for (int step = 0; step < 2; ++step) {
      w.set_grad(Tensor());
      ddp.forward([&] { return std::vector<Tensor>{(w * (r + 1)).sum()}; })[0].backward();
    }
    after[pg.rank()] = w.grad().to_vector<double>();
  }));
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(before[r], (std::vector<double>{1.5, 1.5})) << "rank " << r;
    EXPECT_EQ(after[r], (std::vector<double>(2, r + 1.0))) << "rank " << r;
  }
}

// With gradient_as_bucket_view each .grad is a view of its bucket in autograd's sense (1.13's ._base), so detach_()
// refuses it; without, .grad is a tensor of its own.
TEST(GradientAsBucketView, GradientsAreViewsOfTheBucket) {
  for (bool as_view : {true, false}) {
    expect_no_errors(ThreadWorld::run(2, [&](ProcessGroup& pg) {
      const Tensor w = ones({2}).requires_grad_();
      const Tensor b = ones({3}).requires_grad_();
      DistributedDataParallel ddp({{"w", w}, {"b", b}}, borrow(pg),
                                  {.gradient_as_bucket_view = as_view, .print_warnings = false});
      ddp.forward([&] { return std::vector<Tensor>{w.sum() + b.sum()}; })[0].backward();
      EXPECT_EQ(w.grad().is_view(), as_view);
      if (!as_view) return;
      EXPECT_EQ(w.grad().view_base().numel(), 5);
      EXPECT_TRUE(w.grad().view_base().is_same(b.grad().view_base()));
      Tensor g = w.grad();
      EXPECT_THROW(g.detach_(), Error);
    }));
  }
}

// A Reducer driven directly: its warnings go to the handler set on it, and a TORCH_WARN_ONCE warns once.
TEST(ReducerWarningHandler, ReceivesEveryWarningOnce) {
  std::vector<std::string> got;
  expect_no_errors(ThreadWorld::run(1, [&](ProcessGroup& pg) {
    const Tensor w = ones({2}).requires_grad_();
    Reducer reducer({w}, {".w"}, std::vector<std::vector<size_t>>{{0}}, borrow(pg), {.find_unused_parameters = true});
    reducer.set_warning_handler([&](const std::string& m, WarningOrigin) { got.push_back(m); });
    for (int it = 0; it < 2; ++it) {
      reducer.prepare_for_forward();
      reducer.rebuild_buckets();
      const Tensor loss = (w * 3.0).sum();
      reducer.prepare_for_backward({loss});   // nothing unused: the find_unused warning, on the first only
      loss.backward();
    }
    reducer.warn_external("from outside", WarningOrigin::tinyddp);
    EXPECT_EQ(w.grad().to_vector<float>(), std::vector<float>(2, 6.0f));
  }));
  ASSERT_EQ(got.size(), 2u) << ::testing::PrintToString(got);
  EXPECT_EQ(got[0].rfind("find_unused_parameters=True was specified in DDP constructor, but did not find any unused "
                         "parameters in the forward pass.", 0), 0u) << got[0];
  EXPECT_EQ(got[1], "from outside");
}

// TORCH_DISTRIBUTED_DEBUG is read when DDPOptions::debug_level is unset, as PyTorch reads it: the golden file
// has the level PyTorch gives each value it accepts and its error for the others.
class ScopedEnv {
 public:
  // value nullopt: unset for the scope.
  ScopedEnv(const char* name, const std::optional<std::string>& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) ::setenv(name, value->c_str(), 1);
    else ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_) ::setenv(name_, old_->c_str(), 1);
    else ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(DebugLevelFromEnv, ReadsTheVariableAsPyTorchDoes) {
  std::ifstream f("tests/golden/dist_debug_level.json");
  ASSERT_TRUE(f.good()) << "run the tests from the repository root";
  const auto golden = nlohmann::json::parse(f);
  size_t cases = 0;
  for (const auto& [value, text] : golden.at("errors").items()) {
    ++cases;
    SCOPED_TRACE("TORCH_DISTRIBUTED_DEBUG='" + value + "'");
    ScopedEnv env("TORCH_DISTRIBUTED_DEBUG", value);
    try {
      debug_level_from_env();
      ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()), text.get<std::string>());
    }
    // DDP's construction reads it (and raises) unless the option is set.
    const auto errors = ThreadWorld::run(1, [](ProcessGroup& pg) {
      DistributedDataParallel ddp({{"w", ones({1}).requires_grad_()}}, borrow(pg), {.print_warnings = false});
    });
    ASSERT_TRUE(errors[0]);
    try {
      std::rethrow_exception(errors[0]);
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()), text.get<std::string>());
    }
    expect_no_errors(ThreadWorld::run(1, [](ProcessGroup& pg) {
      DistributedDataParallel ddp({{"w", ones({1}).requires_grad_()}}, borrow(pg),
                                  {.debug_level = DebugLevel::info, .print_warnings = false});
    }));
  }
  EXPECT_GE(cases, 1u);
  size_t accepted = 0;
  for (const auto& [value, level] : golden.at("levels").items()) {
    ++accepted;
    ScopedEnv env("TORCH_DISTRIBUTED_DEBUG", value);
    EXPECT_EQ(debug_level_name(debug_level_from_env()), level.get<std::string>()) << "'" << value << "'";
  }
  EXPECT_GE(accepted, 6u);
  ScopedEnv unset("TORCH_DISTRIBUTED_DEBUG", std::nullopt);
  EXPECT_EQ(debug_level_from_env(), DebugLevel::off) << "unset";
}

}  // namespace
}  // namespace tinyddp::dist
