#include "dist/comm_hooks.h"

#include <cmath>
#include <cstring>
#include <utility>

#include "engine/autograd/grad_mode.h"
#include "engine/ops/ops.h"

namespace tinyddp::dist {

namespace {

// A Work that runs `then` once, when the inner work completes (PyTorch's future.then()).
class ThenWork : public Work {
 public:
  ThenWork(std::shared_ptr<Work> inner, std::function<void()> then) : inner_(std::move(inner)), then_(std::move(then)) {}
  void wait() override {
    inner_->wait();
    finish();
  }
  bool is_completed() override {
    if (!inner_->is_completed()) return false;
    finish();
    return true;
  }

 private:
  void finish() {
    if (then_) std::exchange(then_, nullptr)();
  }
  std::shared_ptr<Work> inner_;
  std::function<void()> then_;
};

// Each value rounded to fp16, then (divisor > 1) divided in fp16: the quotient of the rounded value, rounded
// again, as a CPU Half division computes in float and rounds.
void round_buffer_to_fp16(Tensor& t, int divisor = 1) {
  TINYDDP_CHECK(t.dtype() == DType::f32, "fp16_compress_hook: expects float32 gradients, got ", dtype_name(t.dtype()),
                "; for float64 models use allreduce_hook.");
  // The rounding runs on the host; a device bucket makes the round trip (emulation, not a speed path).
  Tensor host = t.device().is_cpu() ? t : t.to(Device::cpu());
  float* p = host.data_ptr<float>();
  const float d = static_cast<float>(divisor);
  for (int64_t i = 0; i < host.numel(); ++i)
    p[i] = divisor == 1 ? round_to_fp16(p[i]) : round_to_fp16(round_to_fp16(p[i]) / d);
  if (!t.device().is_cpu()) {
    NoGradGuard no_grad;
    t.copy_(host);
  }
}

}  // namespace

float round_to_fp16(float x) {
  if (std::isnan(x) || std::isinf(x)) return x;
  const float a = std::fabs(x);
  // fp16: 10 explicit mantissa bits; normal exponents -14..15; max 65504; subnormal step 2^-24.
  if (a >= 65520.0f) return std::copysign(INFINITY, x);   // rounds past the largest finite value
  int exp;
  std::frexp(a, &exp);                                     // a = m * 2^exp, m in [0.5, 1)
  const int e = std::max(exp - 1, -14);                    // unbiased exponent, clamped at subnormals
  const float step = std::ldexp(1.0f, e - 10);             // spacing of fp16 values near a
  const float q = std::nearbyint(a / step) * step;         // the FPU's default rounding: to nearest even
  return std::copysign(q, x);
}

CommHook allreduce_hook() {
  return [](ProcessGroup& pg, GradBucket& bucket) {
    NoGradGuard no_grad;
    bucket.buffer.mul_(1.0 / pg.size());
    return pg.allreduce({bucket.buffer});
  };
}

CommHook fp16_compress_hook() {
  return [](ProcessGroup& pg, GradBucket& bucket) -> std::shared_ptr<Work> {
    NoGradGuard no_grad;
    // PyTorch: buffer.to(torch.float16).div_(world_size): cast first, then divide in fp16.
    Tensor compressed = bucket.buffer.clone();
    round_buffer_to_fp16(compressed, pg.size());
    auto work = pg.allreduce({compressed});
    Tensor target = bucket.buffer;
    return std::make_shared<ThenWork>(work, [compressed, target]() mutable {
      round_buffer_to_fp16(compressed);
      NoGradGuard no_grad;
      target.copy_(compressed);
    });
  };
}

}  // namespace tinyddp::dist
