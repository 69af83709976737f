#include "models/optim/sgd.h"

#include <cmath>

namespace tinyddp::optim {

SGD::SGD(std::vector<Tensor> params, SGDOptions options)
    : Optimizer(std::move(params)), options_(options), momentum_buffers_(params_.size()) {
  // PyTorch's texts (torch/optim/sgd.py), plus what to try where it has none.
  TINYDDP_CHECK(!std::isnan(options.lr), "SGD: the learning rate is required; pass it as SGDOptions{.lr = 0.01}.");
  TINYDDP_CHECK(options.lr >= 0.0, "Invalid learning rate: ", options.lr);
  TINYDDP_CHECK(options.momentum >= 0.0, "Invalid momentum value: ", options.momentum);
  TINYDDP_CHECK(options.weight_decay >= 0.0, "Invalid weight_decay value: ", options.weight_decay);
  TINYDDP_CHECK(!options.nesterov || (options.momentum > 0.0 && options.dampening == 0.0),
                "Nesterov momentum requires a momentum and zero dampening");
}

void sgd_update(const Tensor& p, const Tensor& grad, Tensor& momentum_buffer, const SGDOptions& o) {
  NoGradGuard no_grad;
  // d_p aliases .grad until an out-of-place op replaces it; nothing below writes into d_p in place.
  Tensor d_p = o.maximize ? neg(grad) : grad;
  // d_p.add(p, alpha=wd) and d_p.add(buf, alpha=momentum) are one fused multiply-add each in PyTorch's CPU
  // kernels; add_ with an alpha is too (the axpy kernel), a separate mul then add would round twice.
  if (o.weight_decay != 0.0) d_p = d_p.clone().add_(p, o.weight_decay);
  if (o.momentum != 0.0) {
    Tensor& buf = momentum_buffer;
    if (!buf.defined()) {
      buf = d_p.clone();
    } else {
      buf.mul_(o.momentum);
      buf.add_(d_p, 1.0 - o.dampening);
    }
    d_p = o.nesterov ? d_p.clone().add_(buf, o.momentum) : buf;
  }
  Tensor param = p;   // a handle: the update is in place, on the parameter's storage
  param.add_(d_p, -o.lr);
}

void SGD::step() {
  for (size_t i = 0; i < params_.size(); ++i) {
    const Tensor& grad = params_[i].grad();
    if (!grad.defined()) continue;
    sgd_update(params_[i], grad, momentum_buffers_[i], options_);
  }
}

}  // namespace tinyddp::optim
