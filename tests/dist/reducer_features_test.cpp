// DDP features beyond the plain path: comm hooks, no_sync accumulation, gradient_as_bucket_view, unused
// parameters keeping an undefined grad, and tinyddp's report of gradients that are never averaged.
#include <gtest/gtest.h>

#include <cmath>

#include "dist/comm_hooks.h"
#include "dist/ddp.h"
#include "dist/thread_process_group.h"
#include "engine/tinyddp.h"

namespace tinyddp::dist {
namespace {

std::shared_ptr<ProcessGroup> borrow(ProcessGroup& pg) { return {&pg, [](ProcessGroup*) {}}; }

// One linear layer y = x W^T + b on rank-specific data; returns each rank's grads after one DDP backward.
std::vector<std::vector<float>> ddp_grads(int ranks, const std::function<void(DistributedDataParallel&)>& setup,
                                          DDPOptions options = {.print_warnings = false}) {
  std::vector<std::vector<float>> grads(ranks);
  auto errors = ThreadWorld::run(ranks, [&](ProcessGroup& pg) {
    manual_seed(11);
    Tensor w = randn({3, 4}).requires_grad_(), b = randn({3}).requires_grad_();
    DistributedDataParallel ddp({{"w", w}, {"b", b}}, borrow(pg), options);
    setup(ddp);
    manual_seed(100 + pg.rank());
    const Tensor x = randn({5, 4}) * 3.0, y = randn({5, 3});
    auto out = ddp.forward([&] { return std::vector<Tensor>{addmm(b, x, t(w))}; });
    mse_loss(out[0], y).backward();
    grads[pg.rank()] = w.grad().to_vector<float>();
    for (float v : b.grad().to_vector<float>()) grads[pg.rank()].push_back(v);
  });
  for (auto& e : errors) EXPECT_FALSE(e);
  return grads;
}

TEST(CommHooks, AllreduceHookEqualsTheDefaultReduction) {
  const auto plain = ddp_grads(3, [](DistributedDataParallel&) {});
  const auto hooked = ddp_grads(3, [](DistributedDataParallel& d) { d.register_comm_hook(allreduce_hook()); });
  for (int r = 0; r < 3; ++r)
    for (size_t i = 0; i < plain[r].size(); ++i) EXPECT_NEAR(hooked[r][i], plain[r][i], 1e-6);
}

TEST(CommHooks, Fp16CompressionRoundsLikeFp16) {
  const auto plain = ddp_grads(2, [](DistributedDataParallel&) {});
  const auto fp16 = ddp_grads(2, [](DistributedDataParallel& d) { d.register_comm_hook(fp16_compress_hook()); });
  double max_rel = 0;
  for (int r = 0; r < 2; ++r)
    for (size_t i = 0; i < plain[r].size(); ++i) {
      EXPECT_EQ(fp16[r][i], round_to_fp16(fp16[r][i])) << "result must be an fp16 value";
      max_rel = std::max(max_rel, std::abs(double(fp16[r][i]) - plain[r][i]) / std::max(1e-3, std::abs(double(plain[r][i]))));
    }
  EXPECT_LT(max_rel, 2e-3);   // fp16 keeps ~3 significant digits (2^-11 relative per rounding)
  EXPECT_GT(max_rel, 0.0) << "compression must actually lose precision";
}

// PyTorch's fp16_compress_hook casts first, then divides in fp16 (buffer.to(torch.float16).div_(world_size)).
// x = 2.9 * 2^-24 (fp16's subnormal step is 2^-24): the cast gives 3 steps, / 2 = 1.5 steps, a tie, to even: 2
// steps; two ranks sum to 4 steps. Dividing first would give 1.45 steps -> 1, summed to 2.
TEST(CommHooks, Fp16CompressionCastsBeforeDividing) {
  const float step = std::ldexp(1.0f, -24);
  std::vector<float> reduced(2);
  auto errors = ThreadWorld::run(2, [&](ProcessGroup& pg) {
    GradBucket bucket{0, full({1}, 2.9 * step), {0}, true};
    fp16_compress_hook()(pg, bucket)->wait();
    reduced[pg.rank()] = bucket.buffer.to_vector<float>()[0];
  });
  for (auto& e : errors) EXPECT_FALSE(e);
  for (float v : reduced) EXPECT_EQ(v, 4 * step) << "got " << v / step << " fp16 steps";
}

TEST(CommHooks, RoundToFp16) {
  EXPECT_EQ(round_to_fp16(1.0f), 1.0f);
  EXPECT_EQ(round_to_fp16(1.0f + 1.0f / 4096), 1.0f);                  // below half a step (2^-10): down
  EXPECT_EQ(round_to_fp16(1.0f + 3.0f / 2048), 1.0f + 2.0f / 1024);     // 1.5 steps: ties to even (2 steps)
  EXPECT_EQ(round_to_fp16(65504.0f), 65504.0f);                         // the largest fp16
  EXPECT_TRUE(std::isinf(round_to_fp16(70000.0f)));
  EXPECT_EQ(round_to_fp16(std::ldexp(1.0f, -24)), std::ldexp(1.0f, -24));   // smallest subnormal
  EXPECT_EQ(round_to_fp16(std::ldexp(1.0f, -26)), 0.0f);
}

TEST(CommHooks, RegisteringTwiceIsRefused) {
  auto errors = ThreadWorld::run(1, [](ProcessGroup& pg) {
    Tensor w = ones({2}).requires_grad_();
    DistributedDataParallel ddp({{"w", w}}, borrow(pg), {.print_warnings = false});
    ddp.register_comm_hook(allreduce_hook());
    ddp.register_comm_hook(allreduce_hook());
  });
  ASSERT_TRUE(errors[0]) << "the second registration was accepted";
  try {
    std::rethrow_exception(errors[0]);
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "register_comm_hook or register_builtin_comm_hook can only be called once.");
  } catch (...) {
    FAIL() << "not a tinyddp::Error";
  }
}

// no_sync: two micro-batches, the first inside no_sync, reduce once to the average of the summed gradients.
TEST(NoSync, AccumulatesLocallyThenReducesOnce) {
  std::vector<std::vector<double>> grads(2), expected(2);
  auto errors = ThreadWorld::run(2, [&](ProcessGroup& pg) {
    Tensor w = ones({3}, DType::f64).requires_grad_();
    DistributedDataParallel ddp({{"w", w}}, borrow(pg), {.print_warnings = false});
    const double r = pg.rank();
    int launched = 0;
    ddp.reducer().set_event_observer([&](const ReducerEvent& e) { launched += e.kind == ReducerEvent::Kind::bucket_launched; });
    {
      auto guard = ddp.no_sync();
      auto out = ddp.forward([&] { return std::vector<Tensor>{w * (r + 1.0)}; });
      out[0].sum().backward();   // local grad: (r + 1) per element
    }
    EXPECT_EQ(launched, 0) << "no reduction inside no_sync";
    auto out = ddp.forward([&] { return std::vector<Tensor>{w * (10.0 * (r + 1.0))}; });
    out[0].sum().backward();     // adds 10 (r + 1), then averages over ranks
    EXPECT_EQ(launched, 1);
    grads[pg.rank()] = w.grad().to_vector<double>();
  });
  ASSERT_FALSE(errors[0] || errors[1]);
  // ranks: 11 * 1 and 11 * 2 -> average 16.5
  for (int r = 0; r < 2; ++r) EXPECT_EQ(grads[r], std::vector<double>(3, 16.5));
}

TEST(GradientAsBucketView, GradsAreViewsIntoTheBuckets) {
  auto errors = ThreadWorld::run(2, [&](ProcessGroup& pg) {
    Tensor w = ones({4}).requires_grad_(), b = ones({2}).requires_grad_();
    DistributedDataParallel ddp({{"w", w}, {"b", b}}, borrow(pg), {.gradient_as_bucket_view = true, .print_warnings = false});
    for (int it = 0; it < 2; ++it) {
      auto out = ddp.forward([&] { return std::vector<Tensor>{(w * 2.0).sum() + b.sum()}; });
      out[0].backward();
    }
    // Both grads live in one bucket's flat buffer, back to back.
    EXPECT_EQ(w.grad().storage(), b.grad().storage());
    EXPECT_EQ(w.grad().to_vector<float>(), std::vector<float>(4, 4.0f));   // two iterations accumulated
  });
  ASSERT_FALSE(errors[0] || errors[1]);
}

TEST(FindUnused, GloballyUnusedParameterKeepsUndefinedGrad) {
  auto errors = ThreadWorld::run(2, [&](ProcessGroup& pg) {
    Tensor used = ones({2}).requires_grad_(), unused = ones({2}).requires_grad_();
    DistributedDataParallel ddp({{"used", used}, {"unused", unused}}, borrow(pg),
                                {.find_unused_parameters = true, .print_warnings = false});
    for (int it = 0; it < 2; ++it) {
      auto out = ddp.forward([&] { return std::vector<Tensor>{(used * 3.0).sum()}; });
      out[0].backward();
    }
    EXPECT_FALSE(unused.grad().defined());
    EXPECT_EQ(used.grad().to_vector<float>(), std::vector<float>(2, 6.0f));
    EXPECT_TRUE(ddp.warnings().empty()) << ddp.warnings()[0];
  });
  ASSERT_FALSE(errors[0] || errors[1]);
}

// Beyond PyTorch: a second backward after finalize is reported, or refused with UnsyncedGradPolicy::error.
TEST(UnsyncedGrads, SecondBackwardAfterFinalizeIsReported) {
  for (UnsyncedGradPolicy policy : {UnsyncedGradPolicy::warn, UnsyncedGradPolicy::error}) {
    std::vector<std::string> warnings(2), errors_text(2);
    auto errors = ThreadWorld::run(2, [&](ProcessGroup& pg) {
      Tensor w = ones({2}).requires_grad_();
      DistributedDataParallel ddp({{"trunk.w", w}}, borrow(pg), {.unsynced_grads = policy, .print_warnings = false});
      auto out = ddp.forward([&] { return std::vector<Tensor>{(w * 2.0).sum()}; });
      out[0].backward({}, {.retain_graph = true});
      try {
        out[0].backward();   // after finalize: never averaged
      } catch (const Error& e) {
        errors_text[pg.rank()] = e.what();
      }
      for (const auto& m : ddp.warnings()) warnings[pg.rank()] += m;
    });
    ASSERT_FALSE(errors[0] || errors[1]);
    for (int r = 0; r < 2; ++r) {
      const std::string& text = policy == UnsyncedGradPolicy::warn ? warnings[r] : errors_text[r];
      EXPECT_NE(text.find("trunk.w"), std::string::npos) << text;
      EXPECT_NE(text.find("not be averaged"), std::string::npos) << text;
      if (policy == UnsyncedGradPolicy::error) {
        EXPECT_TRUE(warnings[r].empty());
      }
    }
  }
}

}  // namespace
}  // namespace tinyddp::dist
