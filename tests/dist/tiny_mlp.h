// The small MLP of the DDP equivalence tests, written with engine ops so that it runs on any device and
// dtype: x (B, 4) -> tanh(x W1^T + b1) (B, 6) -> (B, 3). tests/dist (CPU, f64) and tests/cuda (cuda:0, f32)
// both train it.
#pragma once

#include <utility>
#include <vector>

#include "dist/ddp.h"
#include "engine/tinyddp.h"

namespace tinyddp::test {

struct TinyMlp {
  Tensor w1, b1, w2, b2;
  TinyMlp(uint64_t seed, DType dtype, Device device = Device::cpu()) {
    manual_seed(seed);
    // Drawn on the CPU (the RNG is the CPU's), then moved: every device starts from the same values.
    for (auto [p, shape] : {std::pair{&w1, Shape{6, 4}}, {&b1, Shape{6}}, {&w2, Shape{3, 6}}, {&b2, Shape{3}}}) {
      Tensor values = randn(shape, dtype);
      if (!device.is_cpu()) values = values.to(device);
      *p = values.requires_grad_();
    }
  }
  dist::NamedParameters named() const { return {{"w1", w1}, {"b1", b1}, {"w2", w2}, {"b2", b2}}; }
  std::vector<Tensor> params() const { return {w1, b1, w2, b2}; }
  Tensor forward(const Tensor& x) const { return addmm(b2, tanh(addmm(b1, x, t(w1))), t(w2)); }
  void sgd(double lr) {
    NoGradGuard no_grad;
    for (Tensor* p : {&w1, &b1, &w2, &b2}) p->add_(p->grad(), -lr);
  }
  void zero_grad() {
    for (Tensor* p : {&w1, &b1, &w2, &b2}) p->set_grad(Tensor());
  }
};

}  // namespace tinyddp::test
