// The two graphs of bench_autograd, described in plain C++ so that the tinyddp side (bench_autograd.cpp) and
// the LibTorch peer (bench_autograd_torch.cpp, built only when LibTorch is found) build exactly the same
// graph from the same numbers. This header includes neither engine: the LibTorch translation unit sees
// only LibTorch, the tinyddp one only tinyddp.
//
// (a) Chain: y = x (4 floats, requires grad); for i in [0, kChainOps): y = y * kChainMul, y + kChainAdd or
//     tanh(y), by i % 3; then y.backward(ones). One autograd node per op; the time per iteration divided by
//     kChainOps is the overhead per node (forward op + graph recording + backward rule + engine scheduling),
//     since 4-element kernels cost next to nothing.
// (b) MLP step, B = batch, D = in features, H = hidden, C = classes:
//       h = relu(addmm(b1, x, t(W1)))      x (B, D), W1 (H, D), b1 (H)
//       logits = addmm(b2, h, t(W2))       W2 (C, H), b2 (C)
//       loss = cross_entropy(logits, y)    y (B) int64, mean over the batch
//       loss.backward(); under no_grad: p -= lr * p.grad, p.grad = None  (plain SGD, set_to_none)
// (c) The MLP step's two large matrix products alone, on the same operands (transposed views, no copies):
//       gemm_fwd:   x @ W1^T   (B, D) x (D, H)     the first layer's forward
//       gemm_wgrad: G^T @ x    (H, B) x (B, D)     W1's gradient, G = d loss / d(x W1^T + b1), (B, H)
//     They are most of the step (perf: Eigen's GEMM is ~70% of it), so they say how much of the step's ratio
//     is the GEMM library's: Eigen on tinyddp's side, OpenBLAS under LibTorch.
#pragma once

#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace tinyddp::bench {

// ---- (a) chain ----
constexpr int kChainOps = 10000;
constexpr int kChainNumel = 4;
// The constants keep the chain's gradient well inside float range, so the closed-form check means
// something: x -> tanh(1.0001 x + 1e-5) contracts slowly towards a fixed point near 0.02 (slope there
// ~0.9999), and after 3,334 tanh steps the gradients at kChainInput are 1e-6 ... 1e-3. (With 1.01 and 1e-3
// the slope at the fixed point is ~0.97 and the gradient underflows to 0.) The map contracts, so rounding
// differences between tanh implementations are amplified: a bias of one ulp per tanh moves the fixed point
// by ~1/(1 - slope) ulps and the gradient by up to ~1e-3 relative. So the gradient is checked against the
// closed form evaluated on the engine's own forward values (exact up to float rounding in the backward),
// and the forward only loosely against a float replay with std::tanh.
constexpr float kChainMul = 1.0001f;
constexpr float kChainAdd = 1e-5f;
inline const std::vector<float> kChainInput = {0.5f, -0.3f, 1.2f, -2.0f};

// Both sides time the chain's phases with this clock and report the same counters: ns per node for the whole
// iteration, and split into forward (ops + graph recording) and backward (engine + backward rules + freeing
// the graph, which happens when the output goes out of scope).
using Clock = std::chrono::steady_clock;
inline double elapsed_ns(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::nano>(b - a).count();
}
inline void set_chain_counters(benchmark::State& state, double forward_ns, double backward_ns) {
  const double nodes = static_cast<double>(state.iterations()) * kChainOps;
  state.counters["ns_per_node"] = (forward_ns + backward_ns) / nodes;
  state.counters["fwd_ns_per_node"] = forward_ns / nodes;
  state.counters["bwd_ns_per_node"] = backward_ns / nodes;
}

// ---- (b) MLP ----
struct MlpData {
  static constexpr int64_t kBatch = 64, kIn = 784, kHidden = 256, kClasses = 10;
  std::vector<float> x;    // (B, D), row-major
  std::vector<int64_t> y;  // (B), class indices in [0, C)
  std::vector<float> w1;   // (H, D)
  std::vector<float> b1;   // (H)
  std::vector<float> w2;   // (C, H)
  std::vector<float> b2;   // (C)
};
// 0.01: small enough that the loss decreases at every step on the fixed batch (checked before timing).
constexpr float kLearningRate = 0.01f;

struct MlpGrads {
  double loss = 0;
  std::vector<float> w1, b1, w2, b2;   // shapes as in MlpData
};

// ---- (c) GEMM ----
enum class GemmCase { fwd, wgrad };
struct GemmOperands {
  std::vector<float> x, w1, g;   // x (B, D), W1 (H, D), G (B, H), row-major; x and W1 as in MlpData
};
// Either product is B*D*H multiply-adds.
constexpr double kGemmFlops = 2.0 * MlpData::kBatch * MlpData::kIn * MlpData::kHidden;
// Both sides report the product's time (the benchmark's own) and its rate.
inline void set_gemm_counters(benchmark::State& state) {
  state.counters["GFLOPs"] = benchmark::Counter(kGemmFlops * 1e-9 * static_cast<double>(state.iterations()),
                                                benchmark::Counter::kIsRate);
}

#ifdef TINYDDP_HAVE_LIBTORCH
// ---- the LibTorch peer (bench_autograd_torch.cpp) ----
std::string torch_version();
void torch_set_single_thread();                          // at::set_num_threads(1)
// d sum(chain(x)) / dx at kChainInput; appends each tanh step's outputs to *tanh_outputs (step-major).
std::vector<float> torch_chain_grad(std::vector<float>* tanh_outputs);
MlpGrads torch_mlp_grads(const MlpData& data);           // one forward + backward, no update
std::vector<double> torch_mlp_losses(const MlpData& data, int steps);   // loss before each SGD step
void torch_chain_benchmark(benchmark::State& state);
void torch_mlp_benchmark(benchmark::State& state, const MlpData& data);
std::vector<float> torch_gemm(const GemmOperands& ops, GemmCase c);   // the product, row-major
void torch_gemm_benchmark(benchmark::State& state, const GemmOperands& ops, GemmCase c);
#endif

}  // namespace tinyddp::bench
