// The engine on a GPU: every op of the op table (tests/engine/op_table.h) on cuda:0 against the CPU,
// forward, first and second order; gradcheck on the device itself; device semantics (copies, views,
// mixed-device errors, the caching allocator); a training step; the multi-tensor ops. Every test skips
// when no CUDA device is found, so the suite compiles and passes everywhere.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "engine/ops/ops.h"
#include "models/nn/nn.h"
#include "models/optim/sgd.h"
#include "tests/engine/op_table.h"
#include "tests/engine/test_util.h"
#ifdef TINYDDP_WITH_CUDA
#include "kernels/cuda/runtime.h"
#endif

namespace tinyddp::test {
namespace {

const Device kGpu = Device::cuda(0);

#define SKIP_WITHOUT_GPU()                                                           \
  do {                                                                               \
    if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device on this machine"; \
  } while (0)

// Leaves on `device` holding the values of `inputs` in `dtype`.
std::vector<Tensor> leaves_on(const std::vector<Tensor>& inputs, DType dtype, Device device) {
  std::vector<Tensor> out;
  for (const Tensor& x : inputs) out.push_back(x.detach().to(dtype).to(device).requires_grad_());
  return out;
}

// Seeded standard-normal values shaped like `t`, on the CPU in t's dtype.
Tensor probe_like(const Tensor& t, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  std::vector<double> v(static_cast<size_t>(t.numel()));
  for (double& x : v) x = normal(rng);
  return from_vector(v, t.shape(), t.dtype());
}

// |a - b| <= atol + rtol |b| everywhere, with a and b on any devices.
::testing::AssertionResult close_across_devices(const Tensor& a, const Tensor& b, double atol, double rtol) {
  return all_close(a.to(Device::cpu()), b.to(Device::cpu()), atol, rtol);
}

class CudaOpTable : public ::testing::TestWithParam<size_t> {
 protected:
  void SetUp() override { SKIP_WITHOUT_GPU(); }
  const OpCase& op_case() const { return op_table()[GetParam()]; }
};

// Forward and the vector-Jacobian product agree with the CPU: to rounding in float64, to float32's
// precision in float32 (cuBLAS runs full fp32, no TF32).
TEST_P(CudaOpTable, ForwardAndBackwardMatchTheCpu) {
  const OpCase& c = op_case();
  for (DType dtype : {DType::f64, DType::f32}) {
    const double tol = dtype == DType::f64 ? 1e-12 : 2e-5;
    const auto cpu = leaves_on(make_inputs(c), dtype, Device::cpu());
    const auto gpu = leaves_on(make_inputs(c), dtype, kGpu);
    const Tensor y_cpu = c.fn(cpu), y_gpu = c.fn(gpu);
    ASSERT_EQ(y_gpu.device(), kGpu) << c.name;
    EXPECT_TRUE(close_across_devices(y_gpu, y_cpu, tol, tol)) << c.name << " forward, " << dtype_name(dtype);
    const Tensor v = probe_like(y_cpu, case_seed(c.name));
    const auto g_cpu = autograd::grad({y_cpu}, cpu, {v}, {.allow_unused = true});
    const auto g_gpu = autograd::grad({y_gpu}, gpu, {v.to(kGpu)}, {.allow_unused = true});
    for (size_t i = 0; i < cpu.size(); ++i) {
      ASSERT_EQ(g_cpu[i].defined(), g_gpu[i].defined()) << c.name << " input " << i;
      if (!g_cpu[i].defined()) continue;
      EXPECT_EQ(g_gpu[i].device(), kGpu);
      EXPECT_TRUE(close_across_devices(g_gpu[i], g_cpu[i], tol, tol))
          << c.name << " gradient of input " << i << ", " << dtype_name(dtype);
    }
  }
}

// Second order (create_graph) on the device equals the CPU's, which tests/engine gradgradchecks.
TEST_P(CudaOpTable, SecondOrderMatchesTheCpu) {
  const OpCase& c = op_case();
  auto second = [&](Device device) {
    const auto x = leaves_on(make_inputs(c), DType::f64, device);
    const Tensor y = c.fn(x);
    const auto g = autograd::grad({y}, x, {probe_like(y, case_seed(c.name)).to(device)},
                                  {.create_graph = true, .allow_unused = true});
    Tensor s = scalar_tensor(0.0, DType::f64, device);
    for (const Tensor& gi : g)
      if (gi.defined() && gi.requires_grad()) s = s + (gi * gi).sum();
    if (!s.requires_grad()) return std::vector<Tensor>{};   // linear op: no second derivative
    return autograd::grad({s}, x, {}, {.allow_unused = true});
  };
  const auto h_cpu = second(Device::cpu()), h_gpu = second(kGpu);
  ASSERT_EQ(h_cpu.size(), h_gpu.size()) << c.name;
  for (size_t i = 0; i < h_cpu.size(); ++i) {
    ASSERT_EQ(h_cpu[i].defined(), h_gpu[i].defined()) << c.name << " input " << i;
    if (h_cpu[i].defined()) EXPECT_TRUE(close_across_devices(h_gpu[i], h_cpu[i], 1e-11, 1e-11)) << c.name << " input " << i;
  }
}

// Gradcheck on the device: central differences of f evaluated on the GPU against the GPU's own
// analytic gradient (of the sum of the outputs weighted by a probe vector), float64.
TEST_P(CudaOpTable, GradcheckOnTheDevice) {
  const OpCase& c = op_case();
  const auto base = make_inputs(c);
  const auto x = leaves_on(base, DType::f64, kGpu);
  const Tensor y = c.fn(x);
  const Tensor v = probe_like(y, case_seed(c.name) + 1);
  const auto analytic = autograd::grad({y}, x, {v.to(kGpu)}, {.allow_unused = true});
  const double eps = 1e-6;
  auto weighted = [&](const std::vector<Tensor>& in) {
    NoGradGuard no_grad;
    return (c.fn(in).to(Device::cpu()) * v).sum().item();
  };
  for (size_t i = 0; i < base.size(); ++i) {
    const auto a = analytic[i].defined() ? analytic[i].to_vector<double>() : std::vector<double>(base[i].numel(), 0.0);
    for (int64_t j = 0; j < base[i].numel(); ++j) {
      auto shifted = [&](double delta) {
        std::vector<Tensor> in;
        for (size_t k = 0; k < base.size(); ++k) {
          auto vals = base[k].to_vector<double>();
          if (k == i) vals[j] += delta;
          in.push_back(from_vector(vals, base[k].shape(), DType::f64).to(kGpu));
        }
        return weighted(in);
      };
      const double numeric = (shifted(eps) - shifted(-eps)) / (2 * eps);
      EXPECT_NEAR(a[j], numeric, 1e-6 + 1e-6 * std::abs(numeric)) << c.name << " input " << i << " element " << j;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Ops, CudaOpTable, ::testing::Range<size_t>(0, op_table().size()),
                         [](const ::testing::TestParamInfo<size_t>& info) { return op_table()[info.param].name; });

TEST(CudaTensor, CopiesRoundTripAndViewsReadThroughStrides) {
  SKIP_WITHOUT_GPU();
  const Tensor x = randn({3, 5}, DType::f64);
  const Tensor d = x.to(kGpu);
  EXPECT_EQ(d.device(), kGpu);
  EXPECT_EQ(d.to(Device::cpu()).to_vector<double>(), x.to_vector<double>());
  // A transposed view on the device, made contiguous there, equals the CPU's.
  EXPECT_EQ(d.t().contiguous().to_vector<double>(), x.t().contiguous().to_vector<double>());
  EXPECT_EQ(d.narrow(1, 1, 3).to_vector<double>(), x.narrow(1, 1, 3).to_vector<double>());
  // dtype conversion on the device, and int64 tensors.
  EXPECT_EQ(d.to(DType::f32).to_vector<float>(), x.to(DType::f32).to_vector<float>());
  const Tensor idx = from_vector(std::vector<int64_t>{4, 0, 2}, {3}).to(kGpu);
  EXPECT_EQ(idx.to_vector<int64_t>(), (std::vector<int64_t>{4, 0, 2}));
  EXPECT_EQ(full({2, 2}, 1.5, DType::f32, kGpu).to_vector<float>(), (std::vector<float>(4, 1.5f)));
}

TEST(CudaTensor, ComparisonsAndBoolTensorsMatchTheCpu) {
  SKIP_WITHOUT_GPU();
  const Tensor a = randn({4, 3}, DType::f32), b = randn({1, 3}, DType::f32);
  const Tensor da = a.to(kGpu), db = b.to(kGpu);
  for (auto op : {&eq, &ne, &lt, &le, &gt, &ge}) {
    const Tensor d = op(da.t(), db.t());   // strided, broadcast
    EXPECT_EQ(d.dtype(), DType::b8);
    EXPECT_EQ(d.to_vector<int64_t>(), op(a.t(), b.t()).to_vector<int64_t>());
  }
  const Tensor mask = gt(da, scalar_tensor(0, DType::f32, kGpu));
  EXPECT_EQ(sum(mask).item<int64_t>(), sum(gt(a, scalar_tensor(0, DType::f32))).item<int64_t>());
  EXPECT_EQ(logical_not(mask).to_vector<int64_t>(), logical_not(gt(a, scalar_tensor(0, DType::f32))).to_vector<int64_t>());
  EXPECT_EQ(mask.to(DType::f32).to(Device::cpu()).to_vector<float>(),
            gt(a, scalar_tensor(0, DType::f32)).to(DType::f32).to_vector<float>());
}

TEST(CudaTensor, InPlaceOpsWorkOnDeviceTensorsAndViews) {
  SKIP_WITHOUT_GPU();
  Tensor a = zeros({2, 3}, DType::f64, kGpu);
  Tensor col = a.narrow(1, 1, 1);
  col.fill_(2.0);                                          // strided write
  a.add_(ones({2, 3}, DType::f64, kGpu), 0.5);             // the axpy path
  Tensor b = a.t();
  b.mul_(2.0);
  EXPECT_EQ(a.to_vector<double>(), (std::vector<double>{1, 5, 1, 1, 5, 1}));
  Tensor c = zeros({3}, DType::f32, kGpu);
  c.copy_(tensor({1.0, 2.0, 3.0}, DType::f64));            // across devices and dtypes, as PyTorch's copy_
  EXPECT_EQ(c.to_vector<float>(), (std::vector<float>{1, 2, 3}));
}

TEST(CudaTensor, MixingDevicesIsPyTorchsError) {
  SKIP_WITHOUT_GPU();
  const std::string msg = error_message([] { ones({2}, DType::f32, kGpu) + ones({2}); });
  EXPECT_NE(msg.find("Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"),
            std::string::npos)
      << msg;
  const std::string bad = error_message([] { zeros({1}, DType::f32, Device::cuda(cuda_device_count())); });
  EXPECT_NE(bad.find("is not available"), std::string::npos) << bad;
}

// A training step on the GPU equals the same step on the CPU, and after a warm-up step the caching
// allocator serves every tensor from its cache (no cudaMalloc per op).
TEST(CudaTraining, MlpStepMatchesTheCpuAndReusesCachedMemory) {
  SKIP_WITHOUT_GPU();
  auto make = [] {
    manual_seed(5);
    return nn::Sequential(nn::Linear(8, 16, true, DType::f64), nn::Tanh(), nn::Linear(16, 3, true, DType::f64));
  };
  nn::Sequential cpu_model = make(), gpu_model = make();
  gpu_model.to(kGpu);
  optim::SGD cpu_opt(cpu_model.parameters(), {.lr = 0.1}), gpu_opt(gpu_model.parameters(), {.lr = 0.1});
  manual_seed(9);
  const Tensor x = randn({32, 8}, DType::f64);
  const Tensor target = randint(0, 3, {32});
  auto step = [&](nn::Sequential& m, optim::SGD& opt, Device device) {
    opt.zero_grad();
    const Tensor loss = cross_entropy(m(x.to(device)), target.to(device));
    loss.backward();
    opt.step();
    return loss.item();
  };
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(step(gpu_model, gpu_opt, kGpu), step(cpu_model, cpu_opt, Device::cpu()), 1e-12);
  const auto pc = cpu_model.parameters(), pg = gpu_model.parameters();
  for (size_t i = 0; i < pc.size(); ++i) {
    EXPECT_EQ(pg[i].device(), kGpu);
    EXPECT_TRUE(close_across_devices(pg[i], pc[i], 1e-12, 1e-12)) << "parameter " << i;
  }
#ifdef TINYDDP_WITH_CUDA
  const int64_t mallocs = kernels::cuda::allocator_stats(0).cuda_malloc_calls;
  const int64_t served = kernels::cuda::allocator_stats(0).allocations;
  for (int i = 0; i < 3; ++i) step(gpu_model, gpu_opt, kGpu);
  EXPECT_EQ(kernels::cuda::allocator_stats(0).cuda_malloc_calls, mallocs) << "a warm step called cudaMalloc";
  EXPECT_GT(kernels::cuda::allocator_stats(0).allocations, served + 30) << "the steps allocated through the cache";
#endif
}

TEST(CudaMultiTensor, NormClipAndPackMatchTheCpu) {
  SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(17);
  std::normal_distribution<double> normal;
  std::vector<Tensor> cpu, gpu;
  for (int64_t n : {1, 3, 1000, 65537, 0, 4099, 12}) {
    std::vector<double> v(static_cast<size_t>(n));
    for (double& x : v) x = normal(rng);
    cpu.push_back(from_vector(v, {n}, DType::f32));
    gpu.push_back(cpu.back().to(kGpu));
  }
  const Tensor n_gpu = multi_tensor_norm(gpu);
  EXPECT_EQ(n_gpu.device(), kGpu);
  EXPECT_NEAR(n_gpu.item(), multi_tensor_norm(cpu).item(), 1e-5 * multi_tensor_norm(cpu).item());
  EXPECT_EQ(multi_tensor_norm(gpu).item<float>(), n_gpu.item<float>()) << "two runs differ: not deterministic";

  int64_t total = 0;
  for (const Tensor& t : cpu) total += t.numel();
  Tensor flat = full({total}, -1.0, DType::f32, kGpu);
  bucket_pack(gpu, flat, 0.25);
  Tensor flat_cpu = full({total}, -1.0);
  bucket_pack(cpu, flat_cpu, 0.25);
  EXPECT_EQ(flat.to_vector<float>(), flat_cpu.to_vector<float>());

  std::vector<Tensor> params;
  for (const Tensor& g : gpu) {
    Tensor p = zeros(g.shape(), DType::f32, kGpu).requires_grad_();
    p.set_grad(g.clone());
    params.push_back(p);
  }
  const double norm = n_gpu.item();
  const Tensor total_norm = clip_grad_norm_(params, norm / 2);
  EXPECT_NEAR(total_norm.item(), norm, 1e-5 * norm);
  EXPECT_NEAR(multi_tensor_norm(std::vector<Tensor>{params[3].grad(), params[2].grad(), params[0].grad(),
                                                    params[1].grad(), params[5].grad(), params[6].grad()})
                  .item(),
              norm / 2, 1e-4 * norm);
}

}  // namespace
}  // namespace tinyddp::test
