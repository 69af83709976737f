// The LibTorch peer of bench_autograd: the graphs of bench_autograd.h written with ATen ops, which record
// autograd history exactly as torch:: calls do (the Autograd dispatch key). Per-operator headers instead of
// torch/torch.h or ATen/ATen.h keep this file's build short. Built only when CMake finds LibTorch.
#include <ATen/Parallel.h>
#include <ATen/TensorOperators.h>
#include <ATen/core/Tensor.h>
#include <ATen/core/grad_mode.h>
#include <ATen/ops/addmm.h>
#include <ATen/ops/cross_entropy_loss.h>
#include <ATen/ops/from_blob.h>
#include <ATen/ops/mm.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/relu.h>
#include <ATen/ops/tanh.h>
#include <ATen/ops/tensor.h>
#include <torch/version.h>

#include "bench/bench_autograd.h"

namespace tinyddp::bench {
namespace {

std::vector<float> to_vector(const at::Tensor& t) {
  const at::Tensor c = t.contiguous();
  return {c.data_ptr<float>(), c.data_ptr<float>() + c.numel()};
}

// As chain_forward in bench_autograd.cpp.
at::Tensor chain_forward(const at::Tensor& x, std::vector<float>* tanh_outputs = nullptr) {
  at::Tensor y = x;
  for (int i = 0; i < kChainOps; ++i) {
    switch (i % 3) {
      case 0: y = y * static_cast<double>(kChainMul); break;
      case 1: y = y + static_cast<double>(kChainAdd); break;
      default:
        y = at::tanh(y);
        if (tanh_outputs) for (float t : to_vector(y.detach())) tanh_outputs->push_back(t);
        break;
    }
  }
  return y;
}

at::Tensor chain_input() {
  return at::tensor(at::ArrayRef<float>(kChainInput)).requires_grad_();
}

template <typename T>
at::Tensor from_vector(const std::vector<T>& v, at::IntArrayRef shape) {
  // from_blob does not own or copy: clone so the tensor outlives `v`.
  return at::from_blob(const_cast<T*>(v.data()), shape, at::CppTypeToScalarType<T>::value).clone();
}

struct TorchMlp {
  at::Tensor x, y, w1, b1, w2, b2;

  explicit TorchMlp(const MlpData& d)
      : x(from_vector(d.x, {MlpData::kBatch, MlpData::kIn})),
        y(from_vector(d.y, {MlpData::kBatch})),
        w1(from_vector(d.w1, {MlpData::kHidden, MlpData::kIn}).requires_grad_()),
        b1(from_vector(d.b1, {MlpData::kHidden}).requires_grad_()),
        w2(from_vector(d.w2, {MlpData::kClasses, MlpData::kHidden}).requires_grad_()),
        b2(from_vector(d.b2, {MlpData::kClasses}).requires_grad_()) {}

  at::Tensor loss() const {
    const at::Tensor h = at::relu(at::addmm(b1, x, w1.t()));   // (B, H)
    const at::Tensor logits = at::addmm(b2, h, w2.t());        // (B, C)
    return at::cross_entropy_loss(logits, y);                  // ()
  }

  double step() {
    const at::Tensor l = loss();
    l.backward();
    at::NoGradGuard no_grad;
    for (at::Tensor* p : {&w1, &b1, &w2, &b2}) {
      p->add_(p->grad(), -static_cast<double>(kLearningRate));
      p->mutable_grad().reset();   // zero_grad(set_to_none=True)
    }
    return l.item<double>();
  }
};

}  // namespace

std::string torch_version() { return TORCH_VERSION; }

void torch_set_single_thread() { at::set_num_threads(1); }

std::vector<float> torch_chain_grad(std::vector<float>* tanh_outputs) {
  const at::Tensor x = chain_input();
  chain_forward(x, tanh_outputs).backward(at::ones({kChainNumel}));
  return to_vector(x.grad());
}

MlpGrads torch_mlp_grads(const MlpData& data) {
  TorchMlp m(data);
  const at::Tensor l = m.loss();
  l.backward();
  return {l.item<double>(), to_vector(m.w1.grad()), to_vector(m.b1.grad()), to_vector(m.w2.grad()),
          to_vector(m.b2.grad())};
}

std::vector<double> torch_mlp_losses(const MlpData& data, int steps) {
  TorchMlp m(data);
  std::vector<double> losses;
  for (int i = 0; i < steps; ++i) losses.push_back(m.step());
  return losses;
}

void torch_chain_benchmark(benchmark::State& state) {
  at::Tensor x = chain_input();
  const at::Tensor seed = at::ones({kChainNumel});
  double forward_ns = 0, backward_ns = 0;
  for (auto _ : state) {
    const auto t0 = Clock::now();
    Clock::time_point t1;
    {
      at::Tensor y = chain_forward(x);
      t1 = Clock::now();
      y.backward(seed);
    }   // the graph is freed here, inside the backward phase
    const auto t2 = Clock::now();
    x.mutable_grad().reset();
    forward_ns += elapsed_ns(t0, t1);
    backward_ns += elapsed_ns(t1, t2);
  }
  set_chain_counters(state, forward_ns, backward_ns);
}

void torch_mlp_benchmark(benchmark::State& state, const MlpData& data) {
  TorchMlp mlp(data);
  for (auto _ : state) benchmark::DoNotOptimize(mlp.step());
}

namespace {
at::Tensor torch_gemm_tensor(const at::Tensor& x, const at::Tensor& w1, const at::Tensor& g, GemmCase c) {
  return c == GemmCase::fwd ? at::mm(x, w1.t()) : at::mm(g.t(), x);
}
struct TorchGemm {
  at::Tensor x, w1, g;
  explicit TorchGemm(const GemmOperands& ops)
      : x(from_vector(ops.x, {MlpData::kBatch, MlpData::kIn})),
        w1(from_vector(ops.w1, {MlpData::kHidden, MlpData::kIn})),
        g(from_vector(ops.g, {MlpData::kBatch, MlpData::kHidden})) {}
};
}  // namespace

std::vector<float> torch_gemm(const GemmOperands& ops, GemmCase c) {
  at::NoGradGuard no_grad;
  const TorchGemm t(ops);
  return to_vector(torch_gemm_tensor(t.x, t.w1, t.g, c));
}

void torch_gemm_benchmark(benchmark::State& state, const GemmOperands& ops, GemmCase c) {
  at::NoGradGuard no_grad;
  const TorchGemm t(ops);
  for (auto _ : state) benchmark::DoNotOptimize(torch_gemm_tensor(t.x, t.w1, t.g, c));
  set_gemm_counters(state);
}

}  // namespace tinyddp::bench
