// Several DDP instances over one process group, each with its own reducer: a GAN (G = DDP(generator),
// D = DDP(discriminator)) stepping alternately, D frozen with requires_grad_(false) during the G step and
// fake.detach() in the D step, gives on 2 thread ranks what one process computes on the concatenated batch
// (f64, 1e-12). Also freezing part of a model after wrapping it with find_unused_parameters = true.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <vector>

#include "dist/ddp.h"
#include "dist/thread_process_group.h"
#include "models/nn/nn.h"

namespace tinyddp::dist {
namespace {

constexpr int kRanks = 2, kPerRank = 4, kSteps = 3;
constexpr double kLr = 0.1;

std::shared_ptr<ProcessGroup> borrow(ProcessGroup& pg) { return {&pg, [](ProcessGroup*) {}}; }

// z (B, 2) -> tanh(z W^T + b) (B, 3)
struct Generator : nn::Module {
  std::shared_ptr<nn::Linear> fc = register_module("fc", std::make_shared<nn::Linear>(2, 3, true, DType::f64));
  Tensor forward(const Tensor& z) override { return tanh((*fc)(z)); }
};

// x (B, 3) -> tanh(x W1^T + b1) W2^T + b2 (B, 1)
struct Discriminator : nn::Module {
  std::shared_ptr<nn::Linear> fc1 = register_module("fc1", std::make_shared<nn::Linear>(3, 4, true, DType::f64));
  std::shared_ptr<nn::Linear> fc2 = register_module("fc2", std::make_shared<nn::Linear>(4, 1, true, DType::f64));
  Tensor forward(const Tensor& x) override { return (*fc2)(tanh((*fc1)(x))); }
};

struct Gan {
  Generator g;
  Discriminator d;
  explicit Gan(uint64_t seed) {
    manual_seed(seed);   // the members are built already: the seed decides the values copied in below
    NoGradGuard no_grad;
    for (const Tensor& p : g.parameters()) Tensor(p).copy_(randn(p.shape(), DType::f64));
    for (const Tensor& p : d.parameters()) Tensor(p).copy_(randn(p.shape(), DType::f64));
  }
};

void sgd(const nn::Module& m) {
  NoGradGuard no_grad;
  for (Tensor p : m.parameters())
    if (p.grad().defined()) p.add_(p.grad(), -kLr);
}

double max_abs_diff(const nn::Module& a, const nn::Module& b) {
  const auto pa = a.parameters(), pb = b.parameters();
  double m = 0;
  for (size_t i = 0; i < pa.size(); ++i) {
    const auto x = pa[i].to_vector<double>(), y = pb[i].to_vector<double>();
    for (size_t k = 0; k < x.size(); ++k) m = std::max(m, std::abs(x[k] - y[k]));
  }
  return m;
}

// One GAN iteration. `g_fwd` / `d_fwd` run the generator / discriminator (through DDP or directly).
template <typename GFwd, typename DFwd>
void gan_step(Gan& gan, const Tensor& z, const Tensor& real, GFwd g_fwd, DFwd d_fwd) {
  const int64_t n = z.shape()[0];
  const Tensor ones_t = ones({n, 1}, DType::f64), zeros_t = zeros({n, 1}, DType::f64);
  const Tensor fake = g_fwd(z);
  // D step: two D forwards (real, detached fake), one backward of both losses.
  gan.d.zero_grad(true);
  (mse_loss(d_fwd(real), ones_t) + mse_loss(d_fwd(fake.detach()), zeros_t)).backward();
  sgd(gan.d);
  // G step: D frozen, so only G's parameters get gradients.
  gan.d.requires_grad_(false);
  gan.g.zero_grad(true);
  mse_loss(d_fwd(fake), ones_t).backward();
  sgd(gan.g);
  gan.d.requires_grad_(true);
}

void expect_gan_matches_single_process(DDPOptions g_options, DDPOptions d_options) {
  manual_seed(3);
  std::vector<Tensor> z, real;   // per step, (ranks * per-rank rows, features)
  for (int s = 0; s < kSteps; ++s) {
    z.push_back(randn({kRanks * kPerRank, 2}, DType::f64));
    real.push_back(randn({kRanks * kPerRank, 3}, DType::f64));
  }
  Gan ref(1);
  for (int s = 0; s < kSteps; ++s)
    gan_step(ref, z[s], real[s], [&](const Tensor& x) { return ref.g.forward(x); },
             [&](const Tensor& x) { return ref.d.forward(x); });
  std::vector<std::unique_ptr<Gan>> replicas;
  for (int r = 0; r < kRanks; ++r) replicas.push_back(std::make_unique<Gan>(r == 0 ? 1 : 100 + r));
  auto errors = ThreadWorld::run(kRanks, [&](ProcessGroup& pg) {
    Gan& gan = *replicas[pg.rank()];
    DistributedDataParallel g_ddp(gan.g.named_parameters(), borrow(pg), g_options);
    DistributedDataParallel d_ddp(gan.d.named_parameters(), borrow(pg), d_options);
    auto through = [](DistributedDataParallel& ddp, nn::Module& m) {
      return [&ddp, &m](const Tensor& x) { return ddp.forward([&] { return std::vector<Tensor>{m.forward(x)}; })[0]; };
    };
    for (int s = 0; s < kSteps; ++s) {
      const Tensor zr = z[s].narrow(0, pg.rank() * kPerRank, kPerRank);
      const Tensor rr = real[s].narrow(0, pg.rank() * kPerRank, kPerRank);
      gan_step(gan, zr, rr, through(g_ddp, gan.g), through(d_ddp, gan.d));
    }
  });
  for (int r = 0; r < kRanks; ++r) {
    if (errors[r]) {
      try {
        std::rethrow_exception(errors[r]);
      } catch (const std::exception& e) {
        FAIL() << "rank " << r << ": " << e.what();
      }
    }
    EXPECT_LT(max_abs_diff(replicas[r]->g, ref.g), 1e-12) << "generator, rank " << r;
    EXPECT_LT(max_abs_diff(replicas[r]->d, ref.d), 1e-12) << "discriminator, rank " << r;
  }
  // The check can fail: training moved the parameters away from their initial values.
  EXPECT_GT(max_abs_diff(ref.g, Gan(1).g), 1e-3);
  EXPECT_GT(max_abs_diff(ref.d, Gan(1).d), 1e-3);
}

TEST(DdpGan, TwoDdpModelsOnOneGroupMatchOneProcess) {
  expect_gan_matches_single_process({.print_warnings = false}, {.print_warnings = false});
}
TEST(DdpGan, FindUnusedParametersOnBoth) {
  const DDPOptions o{.find_unused_parameters = true, .print_warnings = false};
  expect_gan_matches_single_process(o, o);
}
TEST(DdpGan, SmallBucketsAndBucketViews) {
  const DDPOptions o{.bucket_cap_mb = 1e-5, .gradient_as_bucket_view = true, .print_warnings = false};
  expect_gan_matches_single_process(o, o);
}

// A trunk feeding two heads; head_b is frozen from iteration 2 on (after DDP was built) while its output
// stays in the loss, so gradients still flow through it into the trunk. find_unused_parameters = true
// finds head_b's parameters unused and the replicas still match one process.
struct TwoHeads : nn::Module {
  std::shared_ptr<nn::Linear> trunk = register_module("trunk", std::make_shared<nn::Linear>(3, 4, true, DType::f64));
  std::shared_ptr<nn::Linear> head_a = register_module("head_a", std::make_shared<nn::Linear>(4, 1, true, DType::f64));
  std::shared_ptr<nn::Linear> head_b = register_module("head_b", std::make_shared<nn::Linear>(4, 2, true, DType::f64));
  explicit TwoHeads(uint64_t seed) {
    manual_seed(seed);
    NoGradGuard no_grad;
    for (const Tensor& p : parameters()) Tensor(p).copy_(randn(p.shape(), DType::f64));
  }
  Tensor loss(const Tensor& x, const Tensor& ya, const Tensor& yb) {
    const Tensor h = tanh((*trunk)(x));
    return mse_loss((*head_a)(h), ya) + mse_loss((*head_b)(h), yb);
  }
};

TEST(DdpFreeze, FreezingAHeadAfterWrappingWithFindUnusedMatchesOneProcess) {
  constexpr int kIters = 4;
  manual_seed(5);
  std::vector<Tensor> x, ya, yb;   // per iteration, (ranks * per-rank rows, features)
  for (int it = 0; it < kIters; ++it) {
    x.push_back(randn({kRanks * kPerRank, 3}, DType::f64));
    ya.push_back(randn({kRanks * kPerRank, 1}, DType::f64));
    yb.push_back(randn({kRanks * kPerRank, 2}, DType::f64));
  }
  auto train = [&](TwoHeads& m, int it, int64_t start, int64_t rows, auto&& run_loss) {
    if (it == 1) m.head_b->requires_grad_(false);
    m.zero_grad(true);
    run_loss(x[it].narrow(0, start, rows), ya[it].narrow(0, start, rows), yb[it].narrow(0, start, rows)).backward();
    sgd(m);
  };
  TwoHeads ref(1);
  const std::vector<double> head_b_at_freeze = [&] {
    std::vector<double> out;
    for (int it = 0; it < kIters; ++it) {
      train(ref, it, 0, kRanks * kPerRank, [&](auto... a) { return ref.loss(a...); });
      if (it == 0) out = ref.head_b->weight().to_vector<double>();
    }
    return out;
  }();
  std::vector<std::unique_ptr<TwoHeads>> replicas;
  for (int r = 0; r < kRanks; ++r) replicas.push_back(std::make_unique<TwoHeads>(r == 0 ? 1 : 50 + r));
  std::vector<std::vector<double>> replica_head_b_at_freeze(kRanks);
  auto errors = ThreadWorld::run(kRanks, [&](ProcessGroup& pg) {
    TwoHeads& m = *replicas[pg.rank()];
    DistributedDataParallel ddp(m.named_parameters(), borrow(pg), {.find_unused_parameters = true});
    for (int it = 0; it < kIters; ++it) {
      train(m, it, pg.rank() * kPerRank, kPerRank, [&](auto... a) {
        return ddp.forward([&] { return std::vector<Tensor>{m.loss(a...)}; })[0];
      });
      if (it == 0) replica_head_b_at_freeze[pg.rank()] = m.head_b->weight().to_vector<double>();
    }
  });
  for (int r = 0; r < kRanks; ++r) {
    ASSERT_FALSE(errors[r]) << "rank " << r << " failed";
    EXPECT_LT(max_abs_diff(*replicas[r], ref), 1e-12) << "rank " << r;
    EXPECT_FALSE(replicas[r]->head_b->weight().grad().defined()) << "a frozen parameter got a gradient";
    // Frozen: not one bit moved after iteration 0. (Its value then is the mean of two half-batch gradients'
    // update, equal to the one process's full-batch update only to rounding: Eigen's SIMD width decides.)
    const std::vector<double> now = replicas[r]->head_b->weight().to_vector<double>();
    EXPECT_EQ(now, replica_head_b_at_freeze[r]) << "rank " << r;
    ASSERT_EQ(now.size(), head_b_at_freeze.size());
    for (size_t i = 0; i < now.size(); ++i) EXPECT_NEAR(now[i], head_b_at_freeze[i], 1e-12) << "rank " << r;
  }
  EXPECT_GT(max_abs_diff(ref, TwoHeads(1)), 1e-3);
}

}  // namespace
}  // namespace tinyddp::dist
