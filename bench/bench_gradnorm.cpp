// bench_gradnorm: what GradNorm costs per training step, relative to a plain step with fixed weights.
//
// The model: a shared MLP of about 1.05M parameters (models::SharedBottomMLP), f32, batch 64:
//   trunk  Linear(512,512)-ReLU x 4                     1,050,624 parameters; W = the 4th Linear's weight
//   heads  Linear(512,1) (MSE) and Linear(512,3) (cross-entropy)   2,052
// One step: forward, task losses, weighting.observe(L, W, step), weighting.total_loss(L).backward(), SGD step.
// Each benchmark iteration is a block of kBlock = 100 steps, so "every 100 steps" includes exactly one update;
// times are reported per step.
//
// Variants:
//   fixed                    the plain step (w = 1, observe does nothing)
//   gradnorm / every 1, 100  tinyddp's GradNorm (models/weighting): autograd::grad of each L_i w.r.t. W only,
//                            no create_graph, closed-form dL_grad/dw_i
//   gradnorm-gram / every 1  the same with grad_norm = gram: autograd::grad of each L_i w.r.t. W's layer output
//                            only, ||g_i||^2 = <D_i D_i^T, H H^T> (Note [GradNorm's Gram-matrix norm])
//   gradnorm-squared         the squared variant (create_graph), every 1 and 100
//   gradnorm-squared-gram    the squared variant with grad_norm = gram: G_W^2 = sum_ij w_i w_j <g_i, g_j>
//                            instead of a create_graph gradient, every 1
//   uncertainty              Kendall et al.'s log-variances (no extra backward)
//   pcgrad                   PCGrad (models/gradient_surgery): autograd::grad of each L_i w.r.t. every trunk
//                            parameter, the projections in f64, one backward with the correction term
//   mgda                     MGDA-UB: autograd::grad of each L_i w.r.t. the trunk's output Z (the heads only),
//                            Frank-Wolfe on the 2 x 2 Gram matrix, one backward of sum alpha_i L_i
//   textbook / every 1       what public PyTorch implementations do (docs/gradnorm.md): per task,
//                            grad(w_i L_i, W, create_graph=True); L_grad = sum |G_i - target|; then a backward of
//                            L_grad to w through the double-backward graph. Written here with engine ops.
//   part:grad(L_0, W)        one per-task gradient on W alone (per call), and
//   part:gemm 512x64x512     one product of dL/dW's size (per call): how many GEMMs a per-task gradient costs
//
// Check, then time: main() first checks that (1) GradNorm's network gradients are exactly those of a plain
// backward of sum w_i L_i (the balance loss leaks nothing into the network), (2) its G_i equal w_i ||dL_i/dW||
// computed independently (to 1e-4, with either grad_norm), (3) with update_every = 100 the weights move once
// per 100 steps, (4) the textbook variant's dL_grad/dw agrees with the closed form sign(G_i - target_i)
// ||dL_i/dW||, (5) PCGrad's trunk gradient after its one backward is the surgery's g^PC and MGDA's weights sum
// to 1; prints "All results match. Starting benchmarks." and only then times. After the runs it prints the
// table of ratios to `fixed`. The machine is shared, so by default every variant runs 5 repetitions and the
// repetitions of all variants are interleaved at random (--benchmark_repetitions=5
// --benchmark_enable_random_interleaving=true; flags given on the command line override these). The table
// gives the median (min-max) over repetitions of each variant's time per step, and of its ratio to `fixed`
// taken repetition by repetition (the k-th of the variant over the k-th of `fixed`).
//
//   ./build/bench/bench_gradnorm                         # checks, all variants, the ratio table
//   ./build/bench/bench_gradnorm --benchmark_filter=fixed|gradnorm/every:1
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "engine/tinyddp.h"
#include "models/gradient_surgery/pcgrad.h"
#include "models/gradient_surgery/representation_tap.h"
#include "models/multitask/multitask.h"
#include "models/optim/sgd.h"
#include "models/weighting/linear_tap.h"
#include "models/weighting/loss_weighting.h"

namespace tinyddp::bench {
namespace {


constexpr int64_t kBatch = 64;
constexpr int64_t kWidth = 512;
constexpr int kBlock = 100;   // steps per benchmark iteration

bool g_all_ok = true;
void expect(bool ok, const std::string& what) {
  if (!ok) {
    std::fprintf(stderr, "MISMATCH: %s\n", what.c_str());
    g_all_ok = false;
  }
}

struct Setup {
  std::shared_ptr<models::SharedBottomMLP> net;
  models::MultiTaskBatch batch;
  std::unique_ptr<optim::SGD> sgd;
  std::shared_ptr<models::RepresentationTap> tap;   // only for MGDA-UB
  std::unique_ptr<models::LinearTap> layer_tap;       // only for GradNorm's Gram-matrix norm
  explicit Setup(uint64_t seed = 1) {
    manual_seed(seed);
    net = std::make_shared<models::SharedBottomMLP>(kWidth, std::vector<int64_t>{kWidth, kWidth, kWidth, kWidth}, 3);
    batch.x = randn({kBatch, kWidth});
    batch.targets = {randn({kBatch, 1}) * 3.0, randint(0, 3, {kBatch})};
    sgd = std::make_unique<optim::SGD>(net->parameters(), optim::SGDOptions{.lr = 1e-3});
  }
  std::vector<Tensor> losses() { return net->task_losses(batch); }
  int64_t numel() const {
    int64_t n = 0;
    for (const Tensor& p : net->parameters()) n += p.numel();
    return n;
  }
};

// What `tinyddp train` passes to observe_shared, from the latest forward.
models::SharedTensors shared_of(const Setup& s) {
  return {.weight = s.net->last_shared_weight(), .parameters = s.net->trunk()->parameters(),
          .representation = s.tap ? s.tap->last() : Tensor(),
          .layer_input = s.layer_tap ? s.layer_tap->input() : Tensor(),
          .layer_output = s.layer_tap ? s.layer_tap->output() : Tensor()};
}

// One step with a LossWeighting, as `tinyddp train` drives it (observe_shared).
models::WeightingStep step(Setup& s, models::LossWeighting& w, int64_t t) {
  if (w.needs_representation() && !s.tap) s.tap = models::tap_representation(*s.net);
  if (w.needs_layer_io() && !s.layer_tap) {
    s.layer_tap = std::make_unique<models::LinearTap>(s.net->last_shared_layer());
  }
  const auto L = s.losses();
  models::WeightingStep ws = w.observe_shared(L, shared_of(s), t);
  s.sgd->zero_grad();
  w.total_loss(L).backward();
  s.sgd->step();
  return ws;
}

// The textbook PyTorch GradNorm step (hosseinshn/GradNorm, lucidrains/gradnorm-pytorch style), with engine
// ops: w is a leaf tensor; per task grad(w_i L_i, W, create_graph) and its norm; L1 balance loss against
// detached targets; grad of L_grad w.r.t. w through the double-backward graph; the network's own backward; then
// SGD on w and renormalization. Returns dL_grad/dw (for the check).
struct Textbook {
  Tensor w = ones({2}).requires_grad_();
  std::vector<double> l0;
  double alpha = 1.5, lr = 0.025;
  std::vector<double> step(Setup& s) {
    const auto L = s.losses();
    const Tensor W = s.net->last_shared_weight();
    std::vector<Tensor> G;
    std::vector<double> ratios;
    for (int i = 0; i < 2; ++i) {
      const Tensor wl = w.narrow(0, i, 1).sum() * L[i];
      const Tensor g = autograd::grad({wl}, {W}, {}, {.retain_graph = true, .create_graph = true})[0];
      G.push_back((g * g).sum().sqrt());
      ratios.push_back(L[i].item());
    }
    if (l0.empty()) l0 = ratios;
    double mean_g = 0, mean_r = 0;
    for (int i = 0; i < 2; ++i) {
      ratios[i] /= l0[i];
      mean_g += G[i].item() / 2;
      mean_r += ratios[i] / 2;
    }
    Tensor lgrad;
    for (int i = 0; i < 2; ++i) {
      const double target = mean_g * std::pow(ratios[i] / mean_r, alpha);
      const Tensor term = abs(G[i] - target);
      lgrad = lgrad.defined() ? lgrad + term : term;
    }
    const std::vector<double> dw = autograd::grad({lgrad}, {w}, {}, {.retain_graph = true})[0].to_vector<double>();
    Tensor total;
    {
      NoGradGuard no_grad;
      total = w.detach().clone();
    }
    s.sgd->zero_grad();
    (L[0] * total.narrow(0, 0, 1).sum() + L[1] * total.narrow(0, 1, 1).sum()).backward();
    s.sgd->step();
    {
      NoGradGuard no_grad;
      std::vector<double> nw = w.to_vector<double>();
      double sum = 0;
      for (int i = 0; i < 2; ++i) sum += nw[i] = std::max(nw[i] - lr * dw[i], 1e-6);
      for (double& v : nw) v *= 2 / sum;
      w.copy_(from_vector(nw, {2}, DType::f32));
    }
    return dw;
  }
};

models::WeightingOptions options_every(int k, models::GradNormMethod grad_norm = models::GradNormMethod::direct) {
  models::WeightingOptions o;
  o.alpha = 1.5;
  o.lr = 0.025;
  o.update_every = k;
  o.grad_norm = grad_norm;
  return o;
}

// ---- checks ----

std::vector<std::vector<float>> grads_of(const Setup& s) {
  std::vector<std::vector<float>> g;
  for (const Tensor& p : s.net->parameters()) g.push_back(p.grad().to_vector<float>());
  return g;
}

void check_no_leak_and_grad_norms() {
  for (const std::string kind : {"gradnorm", "gradnorm-gram", "gradnorm-squared", "gradnorm-squared-gram"}) {
    Setup s;
    const bool gram = kind.ends_with("-gram");
    const bool squared = kind.starts_with("gradnorm-squared");
    const auto method = gram ? models::GradNormMethod::gram : models::GradNormMethod::direct;
    auto w = models::make_weighting(squared ? "gradnorm-squared" : "gradnorm", 2, options_every(1, method));
    if (gram) s.layer_tap = std::make_unique<models::LinearTap>(s.net->last_shared_layer());
    for (int t = 0; t < 3; ++t) {
      const auto L = s.losses();
      // Independent G_i = w_i ||dL_i/dW||, before the update.
      const std::vector<double> w_before = w->weights();
      std::vector<double> expected_g;
      for (int i = 0; i < 2; ++i) {
        const Tensor g = autograd::grad({L[i]}, {s.net->last_shared_weight()}, {}, {.retain_graph = true})[0];
        expected_g.push_back(w_before[i] * std::sqrt((g * g).sum().item()));
      }
      const models::WeightingStep ws = w->observe_shared(L, shared_of(s), t);
      s.sgd->zero_grad();
      w->total_loss(L).backward();
      const auto got = grads_of(s);
      // Reference: a plain backward of sum w_i L_i with the weights total_loss() applied (w(t), the ones this
      // step started from: Algorithm 1 steps the network with L(t) while w moves to w(t+1)), on a fresh graph.
      const std::vector<double> wv = w->loss_weights();
      s.sgd->zero_grad();
      const auto L2 = s.losses();
      (L2[0] * wv[0] + L2[1] * wv[1]).backward();
      const auto want = grads_of(s);
      double diff = 0;
      for (size_t p = 0; p < got.size(); ++p)
        for (size_t k = 0; k < got[p].size(); ++k) diff = std::max(diff, double(std::abs(got[p][k] - want[p][k])));
      expect(diff == 0.0, kind + ": network gradients differ from a plain backward of sum w_i L_i by " +
                              std::to_string(diff) + " (the balance loss must not reach the network)");
      if (!squared) {   // whose G_i are ||dL_i/dW||, without w_i
        expect(ws.grad_norms.size() == 2, kind + ": no G_i recorded at an update step");
        for (size_t i = 0; i < std::min<size_t>(2, ws.grad_norms.size()); ++i)
          expect(std::abs(ws.grad_norms[i] - expected_g[i]) <= 1e-4 * expected_g[i],
                 kind + ": G_" + std::to_string(i) + " = " + std::to_string(ws.grad_norms[i]) + ", expected " +
                     std::to_string(expected_g[i]));
      }
      s.sgd->step();
    }
  }
}

void check_update_every_100() {
  Setup s;
  auto w = models::make_weighting("gradnorm", 2, options_every(100));
  int updates = 0;
  for (int t = 0; t < 2 * kBlock; ++t) {
    const std::vector<double> before = w->weights();
    const auto ws = step(s, *w, t);
    updates += ws.updated;
    if (!ws.updated) expect(w->weights() == before, "update_every 100: weights moved at step " + std::to_string(t));
  }
  expect(updates == 2, "update_every 100: expected 2 updates in 200 steps, got " + std::to_string(updates));
}

void check_textbook_matches_closed_form() {
  Setup s;
  Textbook tb;
  const auto L = s.losses();
  std::vector<double> norms;
  for (int i = 0; i < 2; ++i) {
    const Tensor g = autograd::grad({L[i]}, {s.net->last_shared_weight()}, {}, {.retain_graph = true})[0];
    norms.push_back(std::sqrt((g * g).sum().item()));
  }
  // At step 0 every r_i = 1, so the target is mean G and dL_grad/dw_i = sign(G_i - mean G) ||dL_i/dW||.
  const std::vector<double> dw = tb.step(s);
  const double sign0 = norms[0] > norms[1] ? 1 : -1;
  expect(std::abs(dw[0] - sign0 * norms[0]) <= 1e-4 * norms[0] && std::abs(dw[1] + sign0 * norms[1]) <= 1e-4 * norms[1],
         "textbook: dL_grad/dw = (" + std::to_string(dw[0]) + ", " + std::to_string(dw[1]) +
             ") differs from the closed form (" + std::to_string(sign0 * norms[0]) + ", " +
             std::to_string(-sign0 * norms[1]) + ")");
}

void check_surgery() {
  Setup s;
  auto w = models::make_weighting("pcgrad", 2);
  step(s, *w, 0);
  const std::vector<double>& want = dynamic_cast<models::PCGradWeighting&>(*w).combined_gradient();
  double diff = 0, scale = 0;
  size_t k = 0;
  for (const Tensor& p : s.net->trunk()->parameters())
    for (float g : p.grad().contiguous().to_vector<float>()) {
      diff = std::max(diff, std::abs(g - want[k]));
      scale = std::max(scale, std::abs(want[k++]));
    }
  expect(k == want.size() && diff <= 1e-5 * scale, "pcgrad: the trunk's .grad differs from g^PC by " +
                                                        std::to_string(diff) + " (max |g^PC| " + std::to_string(scale) + ")");
  auto m = models::make_weighting("mgda", 2);
  step(s, *m, 0);
  const std::vector<double> a = m->weights();
  expect(a[0] >= 0 && a[1] >= 0 && std::abs(a[0] + a[1] - 1) < 1e-12, "mgda: the weights are not a convex combination");
}

// ---- benchmarks ----

void BM_weighting(benchmark::State& state, std::string kind, int every, models::GradNormMethod grad_norm) {
  Setup s;
  auto w = models::make_weighting(kind, 2, options_every(every, grad_norm));
  int64_t t = 0;
  for (auto _ : state)
    for (int k = 0; k < kBlock; ++k) step(s, *w, t++);
  state.counters["steps"] = kBlock;
}

void BM_textbook(benchmark::State& state) {
  Setup s;
  Textbook tb;
  for (auto _ : state)
    for (int k = 0; k < kBlock; ++k) tb.step(s);
  state.counters["steps"] = kBlock;
}

// What one per-task gradient on W costs, in GEMMs of W's size: autograd::grad(L_0, W) on a retained graph, and
// one (512 x 64) @ (64 x 512) product, the FLOPs dL/dW needs (2 * 512 * 64 * 512 = 33.6 MFLOP). Both per call.
void BM_task_grad_on_W(benchmark::State& state) {
  Setup s;
  const auto L = s.losses();
  const Tensor W = s.net->last_shared_weight();
  for (auto _ : state)
    for (int k = 0; k < kBlock; ++k) benchmark::DoNotOptimize(autograd::grad({L[0]}, {W}, {}, {.retain_graph = true}));
}

void BM_gemm_of_W_size(benchmark::State& state) {
  manual_seed(3);
  const Tensor a = randn({kWidth, kBatch}), b = randn({kBatch, kWidth});
  for (auto _ : state)
    for (int k = 0; k < kBlock; ++k) benchmark::DoNotOptimize(mm(a, b));
}

// Keeps every repetition of each benchmark (real and CPU time per step) for the ratio table.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) {
      if (r.run_type != Run::RT_Iteration || r.error_occurred) continue;
      const std::string name = r.run_name.function_name;
      if (!reps_.count(name)) order_.push_back(name);
      reps_[name].push_back({r.GetAdjustedRealTime() / kBlock, r.GetAdjustedCPUTime() / kBlock});
    }
    ConsoleReporter::ReportRuns(runs);
  }
  void print_ratios() const {
    auto base = reps_.find("fixed");
    if (base == reps_.end()) return;
    std::printf("\nPer step or call (%d per iteration), median (min-max) over repetitions; ratio to `fixed` taken "
                "repetition by repetition:\n", kBlock);
    std::printf("%-31s %4s %25s %25s %25s\n", "variant", "reps", "real ms", "real x fixed", "cpu x fixed");
    for (const std::string& name : order_) {
      const std::vector<Times>& mine = reps_.at(name);
      const size_t paired = std::min(mine.size(), base->second.size());
      std::vector<double> real, real_ratio, cpu_ratio;
      for (size_t k = 0; k < mine.size(); ++k) real.push_back(mine[k].real_ms);
      for (size_t k = 0; k < paired; ++k) {
        real_ratio.push_back(mine[k].real_ms / base->second[k].real_ms);
        cpu_ratio.push_back(mine[k].cpu_ms / base->second[k].cpu_ms);
      }
      std::printf("%-31s %4zu %25s %25s %25s\n", name.c_str(), mine.size(), summary(real).c_str(),
                  summary(real_ratio).c_str(), summary(cpu_ratio).c_str());
    }
  }

 private:
  struct Times {
    double real_ms, cpu_ms;
  };
  static std::string summary(std::vector<double> v) {   // "median (min-max)"
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    const double median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.3f (%.3f-%.3f)", median, v.front(), v.back());
    return buf;
  }
  std::map<std::string, std::vector<Times>> reps_;
  std::vector<std::string> order_;   // first-seen order
};

}  // namespace
}  // namespace tinyddp::bench

int main(int argc, char** argv) {
  using namespace tinyddp::bench;
  // Interleaved repetitions by default; the command line's own flags come after these, so they win.
  std::vector<char*> args{argv[0], const_cast<char*>("--benchmark_repetitions=5"),
                          const_cast<char*>("--benchmark_enable_random_interleaving=true")};
  args.insert(args.end(), argv + 1, argv + argc);
  int args_count = static_cast<int>(args.size());
  benchmark::Initialize(&args_count, args.data());
  if (benchmark::ReportUnrecognizedArguments(args_count, args.data())) return 1;
  benchmark::AddCustomContext("model", "SharedBottomMLP(512, {512 x 4}, 3), " + std::to_string(Setup().numel()) +
                                           " parameters, f32, batch " + std::to_string(kBatch));

  check_no_leak_and_grad_norms();
  check_update_every_100();
  check_textbook_matches_closed_form();
  check_surgery();
  if (!g_all_ok) {
    std::fprintf(stderr, "Results do not match; not timing.\n");
    return 1;
  }
  std::printf("All results match. Starting benchmarks.\n");
  std::fflush(stdout);

  constexpr auto kDirect = tinyddp::models::GradNormMethod::direct, kGram = tinyddp::models::GradNormMethod::gram;
  auto reg = [](const std::string& name, auto fn, auto... args) {
    benchmark::RegisterBenchmark(name.c_str(), fn, args...)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);
  };
  reg("fixed", BM_weighting, std::string("fixed"), 1, kDirect);
  reg("gradnorm/every:1", BM_weighting, std::string("gradnorm"), 1, kDirect);
  reg("gradnorm/every:100", BM_weighting, std::string("gradnorm"), 100, kDirect);
  reg("gradnorm-gram/every:1", BM_weighting, std::string("gradnorm"), 1, kGram);
  reg("gradnorm-squared/every:1", BM_weighting, std::string("gradnorm-squared"), 1, kDirect);
  reg("gradnorm-squared/every:100", BM_weighting, std::string("gradnorm-squared"), 100, kDirect);
  reg("gradnorm-squared-gram/every:1", BM_weighting, std::string("gradnorm-squared"), 1, kGram);
  reg("uncertainty", BM_weighting, std::string("uncertainty"), 1, kDirect);
  reg("pcgrad", BM_weighting, std::string("pcgrad"), 1, kDirect);
  reg("mgda", BM_weighting, std::string("mgda"), 1, kDirect);
  reg("textbook-create-graph/every:1", BM_textbook);
  reg("part:grad(L_0, W)", BM_task_grad_on_W);
  reg("part:gemm 512x64x512", BM_gemm_of_W_size);
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  reporter.print_ratios();
  benchmark::Shutdown();
  return 0;
}
