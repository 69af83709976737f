// Devices and the multi-tensor ops, as far as they run on every machine: the CPU path of the engine-level
// multi-tensor API, and the errors a build or a machine without CUDA gives. tests/cuda/ runs the same
// API on a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "engine/autograd/accumulate_grad.h"
#include "engine/ops/ops.h"
#include "tests/engine/test_util.h"

namespace tinyddp::test {
namespace {

// Tensors of awkward sizes (0, 1, odd, above a chunk) filled from a seeded generator.
std::vector<Tensor> odd_sized_tensors(DType dtype, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  std::vector<Tensor> out;
  for (int64_t n : {0, 1, 3, 17, 1000, 70001, 5}) {
    std::vector<double> v(static_cast<size_t>(n));
    for (double& x : v) x = normal(rng);
    out.push_back(from_vector(v, {n}, dtype));
  }
  return out;
}

double reference_norm(const std::vector<Tensor>& tensors) {
  long double sum = 0;
  for (const Tensor& t : tensors)
    for (double x : t.to_vector<double>()) sum += static_cast<long double>(x) * x;
  return static_cast<double>(std::sqrt(sum));
}

TEST(MultiTensorOps, NormMatchesAFloat64Reference) {
  for (DType dtype : {DType::f64, DType::f32}) {
    const auto tensors = odd_sized_tensors(dtype, 7);
    const double expected = reference_norm(tensors);
    const Tensor norm = multi_tensor_norm(tensors);
    EXPECT_EQ(norm.dim(), 0);
    EXPECT_EQ(norm.dtype(), dtype);
    // float32 accumulates in float32 over chunks: ~1e-7 relative per add, far below 1e-5 here.
    EXPECT_NEAR(norm.item(), expected, expected * (dtype == DType::f64 ? 1e-12 : 1e-5)) << dtype_name(dtype);
  }
}

// Note [Deterministic multi-tensor norm] (kernels/cpu/multi_tensor.cpp): the summation order depends only on the
// numels. So the same values at another address (every offset mod 32 bytes, where an alignment peel would
// reorder the sum) give the same bits, and so does the list with a tensor cut at a chunk boundary (64 Ki
// elements): the chunks, and their order, are the same.
TEST(MultiTensorOps, NormBitsDependOnlyOnValuesAndNumels) {
  const auto tensors = odd_sized_tensors(DType::f32, 11);
  const float bits = multi_tensor_norm(tensors).item<float>();
  for (int64_t shift = 1; shift < 8; ++shift) {
    std::vector<Tensor> moved;
    for (const Tensor& t : tensors) {
      Tensor buffer = zeros({t.numel() + 8});
      Tensor view = buffer.narrow(0, shift, t.numel());
      view.copy_(t);
      moved.push_back(view);
    }
    EXPECT_EQ(multi_tensor_norm(moved).item<float>(), bits) << "values moved by " << shift << " floats";
  }
  constexpr int64_t kChunk = int64_t{1} << 16;
  std::vector<Tensor> cut;
  for (const Tensor& t : tensors) {
    if (t.numel() <= kChunk) {
      cut.push_back(t);
      continue;
    }
    cut.push_back(t.narrow(0, 0, kChunk));
    cut.push_back(t.narrow(0, kChunk, t.numel() - kChunk));
  }
  ASSERT_EQ(cut.size(), tensors.size() + 1) << "the list must have a tensor above one chunk";
  EXPECT_EQ(multi_tensor_norm(cut).item<float>(), bits) << "the list cut at a chunk boundary";
}

TEST(MultiTensorOps, NormOfAnEmptyListIsZero) { EXPECT_EQ(multi_tensor_norm({}).item(), 0.0); }

TEST(MultiTensorOps, NormRefusesMixedDtypesAndNonContiguousTensors) {
  const std::string mixed = error_message([] { multi_tensor_norm({zeros({2}), zeros({2}, DType::f64)}); });
  EXPECT_NE(mixed.find("tensor 1 is float64 on cpu but tensor 0 is float32 on cpu"), std::string::npos) << mixed;
  const std::string strided = error_message([] { multi_tensor_norm({zeros({2, 3}).t()}); });
  EXPECT_NE(strided.find("is not contiguous"), std::string::npos) << strided;
}

// torch.nn.utils.clip_grad_norm_: coef = max_norm / (total_norm + 1e-6), applied only when below 1.
TEST(MultiTensorOps, ClipGradNormScalesOnlyAboveTheThreshold) {
  Tensor a = zeros({2}, DType::f64).requires_grad_(), b = zeros({1}, DType::f64).requires_grad_();
  a.set_grad(tensor({3.0, 0.0}, DType::f64));
  b.set_grad(tensor({4.0}, DType::f64));   // total norm 5
  const Tensor total = clip_grad_norm_({a, b}, 10.0);
  EXPECT_DOUBLE_EQ(total.item(), 5.0);
  EXPECT_EQ(a.grad().to_vector<double>(), (std::vector<double>{3.0, 0.0}));   // under the threshold: untouched

  const Tensor total2 = clip_grad_norm_({a, b}, 1.0);
  EXPECT_DOUBLE_EQ(total2.item(), 5.0);
  const double coef = 1.0 / (5.0 + 1e-6);
  EXPECT_NEAR(a.grad().to_vector<double>()[0], 3.0 * coef, 1e-15);
  EXPECT_NEAR(b.grad().to_vector<double>()[0], 4.0 * coef, 1e-15);
}

TEST(MultiTensorOps, ClipGradNormWithoutGradsReturnsZero) {
  Tensor a = zeros({2}).requires_grad_();
  EXPECT_EQ(clip_grad_norm_({a}, 1.0).item(), 0.0);
  EXPECT_NE(error_message([&] { clip_grad_norm_({a}, 0.0); }).find("max_norm must be positive"), std::string::npos);
}

TEST(MultiTensorOps, BucketPackDividesAndUnpackRestores) {
  const auto grads = odd_sized_tensors(DType::f64, 3);
  int64_t total = 0;
  for (const Tensor& g : grads) total += g.numel();
  Tensor flat = full({total + 4}, -7.0, DType::f64);   // spare room at the end stays untouched
  bucket_pack(grads, flat, 0.5);
  const auto f = flat.to_vector<double>();
  int64_t offset = 0;
  for (const Tensor& g : grads) {
    const auto v = g.to_vector<double>();
    for (size_t j = 0; j < v.size(); ++j) ASSERT_EQ(f[offset + j], v[j] * 0.5) << "offset " << offset << " + " << j;
    offset += g.numel();
  }
  for (int64_t j = total; j < total + 4; ++j) EXPECT_EQ(f[j], -7.0);

  std::vector<Tensor> back;
  for (const Tensor& g : grads) back.push_back(full(g.shape(), 9.0, DType::f64));
  bucket_unpack(flat, back);
  for (size_t i = 0; i < grads.size(); ++i) EXPECT_TRUE(all_close(back[i], grads[i] * 0.5, 0.0)) << "tensor " << i;
}

TEST(MultiTensorOps, BucketPackRefusesATooSmallBuffer) {
  Tensor flat = zeros({3});
  const std::string msg = error_message([&] { bucket_pack({zeros({2}), zeros({2})}, flat, 1.0); });
  EXPECT_NE(msg.find("at least 4 elements"), std::string::npos) << msg;
}

TEST(Devices, ToTheSameDeviceIsTheSameTensor) {
  const Tensor x = randn({2, 3});
  EXPECT_TRUE(x.to(Device::cpu()).is_same(x));
  EXPECT_EQ(x.device(), Device::cpu());
}

TEST(Devices, SetDataKeepsTheHandleAndItsAutogradIdentity) {
  Tensor p = zeros({2}).requires_grad_();
  const Tensor alias = p;
  p.set_data(tensor({1.0, 2.0, 3.0}));
  EXPECT_EQ(alias.to_vector<float>(), (std::vector<float>{1, 2, 3}));
  EXPECT_TRUE(alias.requires_grad());
  EXPECT_NE(error_message([] { (zeros({1}).requires_grad_() * 2.0).set_data(zeros({1})); }).find("only a leaf"),
            std::string::npos);
}

// Note [A new dtype drops the grad accumulator]: data of another dtype gives the leaf a fresh AccumulateGrad (hooks
// on the old one stop firing, as in 1.13); data of the same dtype keeps it.
TEST(Devices, SetDataOfAnotherDtypeMakesANewGradAccumulator) {
  Tensor p = ones({2}).requires_grad_();
  const auto first = autograd::grad_accumulator(p);
  int fired = 0;
  first->add_post_hook([&](const autograd::TensorList&, const autograd::TensorList&) {
    ++fired;
  });
  (p * 2.0).sum().backward();
  EXPECT_EQ(fired, 1);
  p.set_data(tensor({3.0, 4.0}));
  EXPECT_EQ(autograd::grad_accumulator(p), first) << "same dtype: the same accumulator";
  p.set_data(tensor({3.0, 4.0}, DType::f64));
  EXPECT_NE(autograd::grad_accumulator(p), first) << "another dtype: a new accumulator";
  p.set_grad(Tensor());
  (p * 2.0).sum().backward();
  EXPECT_EQ(fired, 1) << "the old accumulator's hook no longer fires";
  EXPECT_EQ(p.grad().dtype(), DType::f64);
  EXPECT_EQ(p.grad().to_vector<double>(), (std::vector<double>{2, 2}));
}

// On a machine (or build) without a GPU, asking for one is an actionable error, not a crash.
TEST(Devices, ACudaTensorWithoutAGpuIsAnActionableError) {
  if (cuda_device_count() > 0) GTEST_SKIP() << "this machine has a CUDA device; tests/cuda covers it";
  const std::string msg = error_message([] { zeros({2}, DType::f32, Device::cuda(0)); });
  EXPECT_NE(msg.find("device cuda:0 is not available"), std::string::npos) << msg;
  EXPECT_NE(msg.find("keep tensors on the CPU"), std::string::npos) << msg;
  const std::string moved = error_message([] { randn({2}).to(Device::cuda(0)); });
  EXPECT_NE(moved.find("device cuda:0 is not available"), std::string::npos) << moved;
}

}  // namespace
}  // namespace tinyddp::test
