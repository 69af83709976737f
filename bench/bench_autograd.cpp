// bench_autograd: what autograd costs per node, and one MLP training step, tinyddp vs LibTorch 1.13.
// The graphs are described in bench_autograd.h; the LibTorch side is bench_autograd_torch.cpp.
//
// Check, then time: main() first verifies every graph (chain gradient against its closed form; MLP loss
// finite and decreasing, gradients against central differences in f64 and, with LibTorch, against LibTorch
// on the same weights), prints "All results match. Starting benchmarks." and only then runs the timings.
// Both sides run on one thread (bench/README.md: run with OMP_NUM_THREADS=1, or bench/run_autograd.sh).
//
//   ./build-bench/bench/bench_autograd                                   # checks + all benchmarks
//   ./build-bench/bench/bench_autograd --benchmark_filter=chain          # just the per-node overhead
#include "bench/bench_autograd.h"
#include "bench/fma_roofline.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

#include "engine/tinyddp.h"

namespace tinyddp::bench {
namespace {

bool g_all_ok = true;

void expect(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "MISMATCH: %s\n", what);
    g_all_ok = false;
  }
}

// max |a - b| / max(max |b|, tiny): a normwise relative error, robust to entries that are near zero.
double rel_diff(const std::vector<float>& a, const std::vector<double>& b) {
  double diff = 0, scale = 1e-30;
  for (size_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, std::abs(static_cast<double>(a[i]) - b[i]));
    scale = std::max(scale, std::abs(b[i]));
  }
  return a.size() == b.size() ? diff / scale : INFINITY;
}

// max_i |a_i - b_i| / |b_i|: the chain's gradients differ by orders of magnitude between elements.
double max_elementwise_rel_diff(const std::vector<float>& a, const std::vector<double>& b) {
  double diff = a.size() == b.size() ? 0 : INFINITY;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i)
    diff = std::max(diff, std::abs(static_cast<double>(a[i]) - b[i]) / std::abs(b[i]));
  return diff;
}

#ifdef TINYDDP_HAVE_LIBTORCH
std::vector<double> widen(const std::vector<float>& v) { return {v.begin(), v.end()}; }
#endif

// ================================ (a) the chain ================================

// tanh_outputs: when not null, each tanh step's outputs are appended to it (for the check only).
Tensor chain_forward(const Tensor& x, std::vector<float>* tanh_outputs = nullptr) {
  Tensor y = x;
  for (int i = 0; i < kChainOps; ++i) {
    switch (i % 3) {
      case 0: y = y * static_cast<double>(kChainMul); break;
      case 1: y = y + static_cast<double>(kChainAdd); break;
      default:
        y = tanh(y);
        if (tanh_outputs) for (float t : y.to_vector<float>()) tanh_outputs->push_back(t);
        break;
    }
  }
  return y;
}

// The closed form of d sum(y)/dx, elementwise: the product of the ops' slopes, c for each mul, 1 for each
// add and 1 - t^2 for each tanh with output t. Evaluated in double on an engine's own tanh outputs
// (step-major, kChainNumel per step), so it checks that engine's backward independently of its tanh.
std::vector<double> chain_grad_closed_form(const std::vector<float>& tanh_outputs) {
  std::vector<double> grad(kChainNumel, 1.0);
  for (int i = 0; i < kChainOps; i += 3) {
    for (double& g : grad) g *= kChainMul;
  }
  for (size_t k = 0; k < tanh_outputs.size(); ++k) {
    const double t = tanh_outputs[k];
    grad[k % kChainNumel] *= 1.0 - t * t;
  }
  return grad;
}

// The chain's final values replayed in float with std::tanh (for the loose forward check).
std::vector<double> chain_forward_replay() {
  std::vector<double> out;
  for (float x : kChainInput) {
    for (int i = 0; i < kChainOps; ++i) {
      switch (i % 3) {
        case 0: x *= kChainMul; break;
        case 1: x += kChainAdd; break;
        default: x = std::tanh(x); break;
      }
    }
    out.push_back(x);
  }
  return out;
}

void BM_chain_tinyddp(benchmark::State& state) {
  Tensor x = from_vector(kChainInput, {kChainNumel}).requires_grad_();
  const Tensor seed = ones({kChainNumel});
  double forward_ns = 0, backward_ns = 0;
  for (auto _ : state) {
    const auto t0 = Clock::now();
    Clock::time_point t1;
    {
      Tensor y = chain_forward(x);
      t1 = Clock::now();
      y.backward(seed);
    }   // the graph is freed here, inside the backward phase
    const auto t2 = Clock::now();
    x.set_grad(Tensor());
    forward_ns += elapsed_ns(t0, t1);
    backward_ns += elapsed_ns(t1, t2);
  }
  set_chain_counters(state, forward_ns, backward_ns);
}

// ================================ (b) the MLP step ================================

MlpData make_mlp_data() {
  MlpData d;
  std::mt19937 rng(1234);
  std::normal_distribution<float> normal;
  // Weights ~ U(-1/sqrt(fan_in), 1/sqrt(fan_in)), as nn.Linear's default init bounds.
  auto uniform = [&](size_t n, int64_t fan_in) {
    const float bound = 1.0f / std::sqrt(static_cast<float>(fan_in));
    std::uniform_real_distribution<float> u(-bound, bound);
    std::vector<float> v(n);
    for (float& e : v) e = u(rng);
    return v;
  };
  d.x.resize(MlpData::kBatch * MlpData::kIn);
  for (float& e : d.x) e = normal(rng);
  std::uniform_int_distribution<int64_t> cls(0, MlpData::kClasses - 1);
  d.y.resize(MlpData::kBatch);
  for (int64_t& e : d.y) e = cls(rng);
  d.w1 = uniform(MlpData::kHidden * MlpData::kIn, MlpData::kIn);
  d.b1 = uniform(MlpData::kHidden, MlpData::kIn);
  d.w2 = uniform(MlpData::kClasses * MlpData::kHidden, MlpData::kHidden);
  d.b2 = uniform(MlpData::kClasses, MlpData::kHidden);
  return d;
}

template <typename T>
std::vector<T> cast(const std::vector<float>& v) {
  return {v.begin(), v.end()};
}

// The MLP's parameters and batch as tinyddp tensors of element type T (float for timing, double for the
// finite-difference reference).
template <typename T>
struct Mlp {
  Tensor x, y, w1, b1, w2, b2;

  explicit Mlp(const MlpData& d)
      : x(from_vector(cast<T>(d.x), {MlpData::kBatch, MlpData::kIn})),
        y(from_vector(d.y, {MlpData::kBatch})),
        w1(from_vector(cast<T>(d.w1), {MlpData::kHidden, MlpData::kIn}).requires_grad_()),
        b1(from_vector(cast<T>(d.b1), {MlpData::kHidden}).requires_grad_()),
        w2(from_vector(cast<T>(d.w2), {MlpData::kClasses, MlpData::kHidden}).requires_grad_()),
        b2(from_vector(cast<T>(d.b2), {MlpData::kClasses}).requires_grad_()) {}

  std::vector<Tensor*> params() { return {&w1, &b1, &w2, &b2}; }

  Tensor loss() const {
    const Tensor h = relu(addmm(b1, x, t(w1)));   // (B, H)
    const Tensor logits = addmm(b2, h, t(w2));    // (B, C)
    return cross_entropy(logits, y);               // ()
  }

  // One training step; returns the loss before the update.
  double step() {
    const Tensor l = loss();
    l.backward();
    NoGradGuard no_grad;
    for (Tensor* p : params()) {
      p->add_(p->grad(), -static_cast<double>(kLearningRate));
      p->set_grad(Tensor());   // zero_grad(set_to_none=True)
    }
    return l.item();
  }
};

void BM_mlp_step_tinyddp(benchmark::State& state, const MlpData& data) {
  Mlp<float> mlp(data);
  for (auto _ : state) benchmark::DoNotOptimize(mlp.step());
}

// ================================ (c) GEMM ================================

// G ~ N(0, 1), seeded; x and W1 are the MLP's.
GemmOperands make_gemm_operands(const MlpData& data) {
  GemmOperands ops{data.x, data.w1, std::vector<float>(MlpData::kBatch * MlpData::kHidden)};
  std::mt19937 rng(4321);
  std::normal_distribution<float> normal;
  for (float& e : ops.g) e = normal(rng);
  return ops;
}

// The products as the MLP's forward and backward compute them: mm on transposed views.
struct Gemm {
  Tensor x, w1, g;
  explicit Gemm(const GemmOperands& ops)
      : x(from_vector(ops.x, {MlpData::kBatch, MlpData::kIn})),
        w1(from_vector(ops.w1, {MlpData::kHidden, MlpData::kIn})),
        g(from_vector(ops.g, {MlpData::kBatch, MlpData::kHidden})) {}
  Tensor run(GemmCase c) const { return c == GemmCase::fwd ? mm(x, t(w1)) : mm(t(g), x); }
};

void BM_gemm_tinyddp(benchmark::State& state, const GemmOperands& ops, GemmCase c) {
  const Gemm gemm(ops);
  for (auto _ : state) benchmark::DoNotOptimize(gemm.run(c));
  set_gemm_counters(state);
}

// ================================ (d) the compute roofline ================================
// 2^20 steps per call: about 1 ms of FMAs, far below float's exact-integer limit of 2^24 (the check's
// closed form), and long enough that the call's set-up is noise.
constexpr int64_t kFmaSteps = int64_t{1} << 20;

void BM_fma_roofline(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(fma_chains(kFmaSteps));
  state.counters["GFLOPs"] = benchmark::Counter(
      1e-9 * static_cast<double>(fma_flops_per_step() * kFmaSteps) * static_cast<double>(state.iterations()),
      benchmark::Counter::kIsRate);
}

// ================================ checks ================================

void check_chain() {
  std::vector<float> tanh_outputs;
  Tensor x = from_vector(kChainInput, {kChainNumel}).requires_grad_();
  const Tensor y = chain_forward(x, &tanh_outputs);
  y.backward(ones({kChainNumel}));
  const std::vector<float> got = x.grad().to_vector<float>();
  const std::vector<double> expected = chain_grad_closed_form(tanh_outputs);
  bool meaningful = expected.size() == kChainNumel;   // every gradient far from 0 (see kChainMul)
  for (double g : expected) meaningful = meaningful && std::abs(g) > 1e-30;
  expect(meaningful, "chain closed form underflows: pick kChainMul/kChainAdd so that the check means something");
  // The backward multiplies 6,667 float factors; rounding moves the product by ~1e-5 relative at most.
  const double err = max_elementwise_rel_diff(got, expected);
  std::printf("chain: d sum(y)/dx = [%.6g %.6g %.6g %.6g], closed form [%.6g %.6g %.6g %.6g], rel err %.2e\n",
              got[0], got[1], got[2], got[3], expected[0], expected[1], expected[2], expected[3], err);
  expect(err < 1e-4, "tinyddp chain gradient vs closed form");
  // Forward: a few ulps of tanh bias shift the slowly contracting fixed point by ~1e-3 relative (see kChainMul).
  const double forward_err = max_elementwise_rel_diff(y.to_vector<float>(), chain_forward_replay());
  std::printf("chain: y vs float replay with std::tanh, rel err %.2e\n", forward_err);
  expect(forward_err < 1e-2, "tinyddp chain forward vs float replay");
#ifdef TINYDDP_HAVE_LIBTORCH
  std::vector<float> torch_tanh_outputs;
  const std::vector<float> torch_grad = torch_chain_grad(&torch_tanh_outputs);
  const double torch_err = max_elementwise_rel_diff(torch_grad, chain_grad_closed_form(torch_tanh_outputs));
  std::printf("chain: LibTorch d sum(y)/dx = [%.6g %.6g %.6g %.6g], rel err vs closed form %.2e, "
              "rel diff vs tinyddp %.2e\n", torch_grad[0], torch_grad[1], torch_grad[2], torch_grad[3], torch_err,
              max_elementwise_rel_diff(torch_grad, widen(got)));
  expect(torch_err < 1e-4, "LibTorch chain gradient vs closed form");
#endif
}

template <typename T>
std::vector<T> values(const Tensor& t) {
  return t.to_vector<T>();
}

void check_mlp(const MlpData& data) {
  // Loss finite and decreasing over a few SGD steps on the fixed batch.
  constexpr int kSteps = 5;
  std::vector<double> losses;
  {
    Mlp<float> mlp(data);
    for (int i = 0; i < kSteps; ++i) losses.push_back(mlp.step());
  }
  std::printf("mlp: loss over %d SGD steps:", kSteps);
  bool decreasing = true;
  for (int i = 0; i < kSteps; ++i) {
    std::printf(" %.6f", losses[i]);
    decreasing = decreasing && std::isfinite(losses[i]) && (i == 0 || losses[i] < losses[i - 1]);
  }
  std::printf("\n");
  expect(decreasing, "MLP loss is finite and decreases at every step");

  // Gradients: f32 analytic (what is timed) vs f64 analytic vs f64 central differences.
  Mlp<float> m32(data);
  m32.loss().backward();
  Mlp<double> m64(data);
  m64.loss().backward();
  const char* names[] = {"W1", "b1", "W2", "b2"};
  auto p32 = m32.params(), p64 = m64.params();
  std::vector<std::vector<float>> g32;
  for (size_t i = 0; i < p32.size(); ++i) {
    g32.push_back(values<float>(p32[i]->grad()));
    const double err = rel_diff(g32.back(), values<double>(p64[i]->grad()));
    std::printf("mlp: grad %s f32 vs f64 rel err %.2e\n", names[i], err);
    expect(err < 1e-4, "MLP f32 gradient vs f64");
  }
  // Central differences on a few entries (flat indices into W1, b1, W2, b2). eps = 1e-6 in f64: truncation
  // ~eps^2 and rounding ~1e-16/eps ~ 1e-10, below the tolerance; a ReLU kink within eps is unlikely.
  const std::pair<int, int64_t> probes[] = {{0, 3 * 784 + 100}, {0, 200 * 784 + 500}, {1, 7}, {2, 4 * 256 + 17}, {3, 3}};
  for (auto [param, index] : probes) {
    Tensor& p = *p64[param];
    double* w = p.data_ptr<double>() + index;
    const double analytic = values<double>(p.grad())[index];
    const double saved = *w, eps = 1e-6;
    double up, down;
    {
      NoGradGuard no_grad;
      *w = saved + eps;
      up = m64.loss().item();
      *w = saved - eps;
      down = m64.loss().item();
      *w = saved;
    }
    const double fd = (up - down) / (2 * eps);
    std::printf("mlp: d loss/d %s[%ld]: analytic %.9g, central difference %.9g\n", names[param],
                static_cast<long>(index), analytic, fd);
    expect(std::abs(fd - analytic) <= 1e-9 + 1e-5 * std::abs(analytic) && analytic != 0,
           "MLP gradient vs central difference");
  }
#ifdef TINYDDP_HAVE_LIBTORCH
  const MlpGrads tg = torch_mlp_grads(data);
  const std::vector<float>* theirs[] = {&tg.w1, &tg.b1, &tg.w2, &tg.b2};
  std::printf("mlp: loss tinyddp %.7f, LibTorch %.7f\n", losses[0], tg.loss);
  expect(std::abs(tg.loss - losses[0]) < 1e-5, "MLP loss vs LibTorch");
  for (size_t i = 0; i < g32.size(); ++i) {
    const double err = rel_diff(g32[i], widen(*theirs[i]));
    std::printf("mlp: grad %s tinyddp vs LibTorch rel err %.2e\n", names[i], err);
    expect(err < 1e-4, "MLP gradient vs LibTorch");
  }
  const std::vector<double> torch_losses = torch_mlp_losses(data, kSteps);
  double loss_err = 0;
  for (int i = 0; i < kSteps; ++i) loss_err = std::max(loss_err, std::abs(torch_losses[i] - losses[i]));
  std::printf("mlp: %d SGD steps, max |loss tinyddp - loss LibTorch| = %.2e\n", kSteps, loss_err);
  expect(loss_err < 1e-5, "MLP losses over SGD steps vs LibTorch");
#endif
}

// Each product against a double-precision reference, and (with LibTorch) against LibTorch's.
void check_gemm(const GemmOperands& ops) {
  const Gemm gemm(ops);
  for (GemmCase c : {GemmCase::fwd, GemmCase::wgrad}) {
    const char* name = c == GemmCase::fwd ? "gemm_fwd" : "gemm_wgrad";
    const Tensor ours = gemm.run(c);
    const Tensor reference = c == GemmCase::fwd ? mm(gemm.x.to(DType::f64), t(gemm.w1.to(DType::f64)))
                                                : mm(t(gemm.g.to(DType::f64)), gemm.x.to(DType::f64));
    const std::vector<float> got = ours.to_vector<float>();
    const std::vector<double> expected = reference.to_vector<double>();
    double max_abs = 0, max_err = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      max_abs = std::max(max_abs, std::abs(expected[i]));
      max_err = std::max(max_err, std::abs(got[i] - expected[i]));
    }
    std::printf("%s: max |tinyddp - f64| / max |f64| = %.2e\n", name, max_err / max_abs);
    expect(max_err / max_abs < 1e-5, "tinyddp GEMM vs f64 reference");
#ifdef TINYDDP_HAVE_LIBTORCH
    const std::vector<float> theirs = torch_gemm(ops, c);
    double torch_err = 0;
    for (size_t i = 0; i < got.size(); ++i) torch_err = std::max(torch_err, std::abs(theirs[i] - expected[i]));
    std::printf("%s: max |LibTorch - f64| / max |f64| = %.2e\n", name, torch_err / max_abs);
    expect(torch_err / max_abs < 1e-5, "LibTorch GEMM vs f64 reference");
#endif
  }
}

}  // namespace
}  // namespace tinyddp::bench

int main(int argc, char** argv) {
  using namespace tinyddp::bench;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;

  const char* omp = std::getenv("OMP_NUM_THREADS");
#ifdef TINYDDP_HAVE_LIBTORCH
  torch_set_single_thread();
  benchmark::AddCustomContext("libtorch", torch_version());
  if (omp == nullptr || std::string(omp) != "1")
    std::fprintf(stderr, "warning: OMP_NUM_THREADS is not 1: OpenBLAS (LibTorch's BLAS) may use several threads "
                         "while tinyddp uses one. Run with OMP_NUM_THREADS=1 (bench/run_autograd.sh does).\n");
#else
  benchmark::AddCustomContext("libtorch", "not built (LibTorch not found at configure time)");
#endif
  benchmark::AddCustomContext("OMP_NUM_THREADS", omp ? omp : "unset");

  const MlpData data = make_mlp_data();
  check_chain();
  check_mlp(data);
  const GemmOperands gemm_operands = make_gemm_operands(data);
  check_gemm(gemm_operands);
  // Every lane of every chain counts 1, 2, ..., kFmaSteps exactly.
  expect(fma_chains(kFmaSteps) == static_cast<double>(kFmaSteps) * static_cast<double>(fma_flops_per_step() / 2),
         "FMA roofline loop: every lane must end at its step count");
  benchmark::AddCustomContext("fma_roofline_vector", fma_vector_name());
  if (!g_all_ok) {
    std::fprintf(stderr, "Results do not match; not timing.\n");
    return 1;
  }
  std::printf("All results match. Starting benchmarks.\n");
  std::fflush(stdout);

  // Pairs in a fixed order, tinyddp first; bench/run_autograd.sh matches them by the name before '/'.
  benchmark::RegisterBenchmark("chain10k/tinyddp", BM_chain_tinyddp)->Unit(benchmark::kMillisecond)->UseRealTime();
#ifdef TINYDDP_HAVE_LIBTORCH
  benchmark::RegisterBenchmark("chain10k/libtorch", torch_chain_benchmark)->Unit(benchmark::kMillisecond)->UseRealTime();
#endif
  benchmark::RegisterBenchmark("mlp_step/tinyddp", BM_mlp_step_tinyddp, data)->Unit(benchmark::kMillisecond)->UseRealTime();
#ifdef TINYDDP_HAVE_LIBTORCH
  benchmark::RegisterBenchmark("mlp_step/libtorch", torch_mlp_benchmark, data)->Unit(benchmark::kMillisecond)->UseRealTime();
#endif
  for (GemmCase c : {GemmCase::fwd, GemmCase::wgrad}) {
    const std::string name = c == GemmCase::fwd ? "gemm_fwd" : "gemm_wgrad";
    benchmark::RegisterBenchmark((name + "/tinyddp").c_str(), BM_gemm_tinyddp, gemm_operands, c)
        ->Unit(benchmark::kMicrosecond)->UseRealTime();
#ifdef TINYDDP_HAVE_LIBTORCH
    benchmark::RegisterBenchmark((name + "/libtorch").c_str(), torch_gemm_benchmark, gemm_operands, c)
        ->Unit(benchmark::kMicrosecond)->UseRealTime();
#endif
  }
  // The roofline last: the compute ceiling the GEMMs above are measured against (bench/run_autograd.sh).
  benchmark::RegisterBenchmark("fma_roofline", BM_fma_roofline)->Unit(benchmark::kMicrosecond)->UseRealTime();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
