#include "models/optim/adam.h"

#include <algorithm>
#include <cmath>

namespace tinyddp::optim {

namespace {

// The elementwise part of one Adam step on contiguous buffers of n elements. Each line is one PyTorch
// kernel of _single_tensor_adam, with its rounding order (CPU kernels compute in the tensor's dtype):
//   grad.add(param, alpha=wd)          fma(p, wd, g)                       (Adam's L2 term)
//   param.mul_(1 - lr * wd)            p * (1 - lr * wd)                   (AdamW's decoupled decay, instead)
//   exp_avg.mul_(b1).add_(g, 1-b1)     fma(g, 1-b1, m * b1)
//   exp_avg_sq.mul_(b2).addcmul_(g, g, value=1-b2)    fma((1-b2) * g, g, v * b2)
//   denom = (v.sqrt() / bc2_sqrt).add_(eps)
//   param.addcdiv_(exp_avg, denom, value=-step_size)   p + (-step_size) * m / denom
// add_ with alpha and addcmul_ are one fused multiply-add in PyTorch's CPU kernels (its AVX2 build), so they are
// std::fma here: with them, float32 and float64 Adam/AdamW steps equal 1.13's bit for bit.
template <typename T>
void adam_kernel(T* p, const T* grad, T* m, T* v, T* v_max, int64_t n, const AdamOptions& o, bool decoupled,
                 double step_size, double bias_correction2_sqrt) {
  const T wd = static_cast<T>(o.weight_decay), b1 = static_cast<T>(o.betas.first), b2 = static_cast<T>(o.betas.second);
  const T one_minus_b1 = static_cast<T>(1.0 - o.betas.first), one_minus_b2 = static_cast<T>(1.0 - o.betas.second);
  const T eps = static_cast<T>(o.eps), neg_step = static_cast<T>(-step_size), bc2 = static_cast<T>(bias_correction2_sqrt);
  const T decay = static_cast<T>(1.0 - o.lr * o.weight_decay);   // 1.13 computes 1 - lr * wd in Python floats
  for (int64_t i = 0; i < n; ++i) {
    T g = o.maximize ? -grad[i] : grad[i];
    if (decoupled) {
      p[i] = p[i] * decay;
    } else if (o.weight_decay != 0.0) {
      g = std::fma(p[i], wd, g);
    }
    m[i] = std::fma(g, one_minus_b1, m[i] * b1);
    v[i] = std::fma(one_minus_b2 * g, g, v[i] * b2);
    T second = v[i];
    if (v_max != nullptr) second = v_max[i] = std::max(v_max[i], v[i]);
    const T denom = std::sqrt(second) / bc2 + eps;
    p[i] = p[i] + neg_step * m[i] / denom;
  }
}

void check_state(const Tensor& p, const Tensor& state, const char* name, const char* kind) {
  TINYDDP_CHECK(state.defined() && state.dtype() == p.dtype() && state.shape() == p.shape() && state.is_contiguous() &&
                    state.device() == p.device(),
                kind, ": the state '", name, "' of a parameter of dtype ", dtype_name(p.dtype()), " and shape ",
                shape_str(p.shape()), " is ",
                state.defined() ? std::string(dtype_name(state.dtype())) + " of shape " + shape_str(state.shape()) +
                                      (state.is_contiguous() ? "" : ", not contiguous")
                                : std::string("missing"),
                "; it must match the parameter (load a state_dict saved from the same parameters).");
}

void check_param(const Tensor& p, const Tensor& grad, const char* kind) {
  TINYDDP_CHECK(p.device().is_cpu(), kind, ": a parameter is on ", p.device().str(), "; tinyddp's fused ", kind,
                " update runs on the CPU only (it has no CUDA kernel yet). Use SGD on the GPU, or keep the model "
                "on the CPU.");
  TINYDDP_CHECK(p.is_contiguous(), kind, ": a parameter is not contiguous; optimizers update parameters in place "
                "and need them contiguous (register .contiguous() tensors as parameters).");
  TINYDDP_CHECK(grad.dtype() == p.dtype() && grad.shape() == p.shape(), kind, ": a parameter's grad has dtype ",
                dtype_name(grad.dtype()), " and shape ", shape_str(grad.shape()), " but the parameter has ",
                dtype_name(p.dtype()), " and ", shape_str(p.shape()), ".");
}

}  // namespace

void adam_update(const Tensor& p, const Tensor& grad, const Tensor& exp_avg, const Tensor& exp_avg_sq,
                 const Tensor& max_exp_avg_sq, double step, const AdamOptions& o, bool decoupled_weight_decay) {
  const char* kind = decoupled_weight_decay ? "AdamW" : "Adam";
  check_param(p, grad, kind);
  check_state(p, exp_avg, "exp_avg", kind);
  check_state(p, exp_avg_sq, "exp_avg_sq", kind);
  if (o.amsgrad) check_state(p, max_exp_avg_sq, "max_exp_avg_sq", kind);
  NoGradGuard no_grad;
  const double bias_correction1 = 1.0 - std::pow(o.betas.first, step);
  const double bias_correction2 = 1.0 - std::pow(o.betas.second, step);
  const double step_size = o.lr / bias_correction1;
  const double bias_correction2_sqrt = std::sqrt(bias_correction2);
  const Tensor g = grad.contiguous();
  dispatch_floating(p.dtype(), kind, [&]<typename T>() {
    adam_kernel<T>(p.data_ptr<T>(), g.data_ptr<T>(), exp_avg.data_ptr<T>(), exp_avg_sq.data_ptr<T>(),
                   o.amsgrad ? max_exp_avg_sq.data_ptr<T>() : nullptr, p.numel(), o, decoupled_weight_decay,
                   step_size, bias_correction2_sqrt);
  });
  p.bump_version();
  exp_avg.bump_version();
  exp_avg_sq.bump_version();
  if (o.amsgrad) max_exp_avg_sq.bump_version();
}

Adam::Adam(std::vector<Tensor> params, AdamOptions options, bool decoupled_weight_decay)
    : Optimizer(std::move(params)),
      options_(options),
      decoupled_weight_decay_(decoupled_weight_decay),
      steps_(params_.size(), 0),
      exp_avg_(params_.size()),
      exp_avg_sq_(params_.size()),
      max_exp_avg_sq_(params_.size()) {
  // PyTorch's texts (torch/optim/adam.py and adamw.py).
  TINYDDP_CHECK(0.0 <= options.lr, "Invalid learning rate: ", options.lr);
  TINYDDP_CHECK(0.0 <= options.eps, "Invalid epsilon value: ", options.eps);
  TINYDDP_CHECK(0.0 <= options.betas.first && options.betas.first < 1.0, "Invalid beta parameter at index 0: ",
                options.betas.first);
  TINYDDP_CHECK(0.0 <= options.betas.second && options.betas.second < 1.0, "Invalid beta parameter at index 1: ",
                options.betas.second);
  TINYDDP_CHECK(0.0 <= options.weight_decay, "Invalid weight_decay value: ", options.weight_decay);
}

void Adam::step() {
  for (size_t i = 0; i < params_.size(); ++i) {
    const Tensor& p = params_[i];
    const Tensor& grad = p.grad();
    if (!grad.defined()) continue;
    check_param(p, grad, decoupled_weight_decay_ ? "AdamW" : "Adam");   // before any state changes
    if (!exp_avg_[i].defined()) {
      exp_avg_[i] = zeros(p.shape(), p.dtype(), p.device());
      exp_avg_sq_[i] = zeros(p.shape(), p.dtype(), p.device());
      if (options_.amsgrad) max_exp_avg_sq_[i] = zeros(p.shape(), p.dtype(), p.device());
    }
    const int64_t t = ++steps_[i];
    adam_update(p, grad, exp_avg_[i], exp_avg_sq_[i], max_exp_avg_sq_[i], static_cast<double>(t), options_,
                decoupled_weight_decay_);
  }
}

AdamW::AdamW(std::vector<Tensor> params, AdamWOptions options)
    : Adam(std::move(params),
           AdamOptions{options.lr, options.betas, options.eps, options.weight_decay, options.amsgrad, options.maximize},
           /*decoupled_weight_decay=*/true) {}

}  // namespace tinyddp::optim
