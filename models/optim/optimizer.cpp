#include "models/optim/optimizer.h"

#include "models/nn/module.h"

namespace tinyddp::optim {

Optimizer::Optimizer(std::vector<Tensor> params) : params_(std::move(params)) {
  TINYDDP_CHECK(!params_.empty(), "optimizer got an empty parameter list");
  for (size_t i = 0; i < params_.size(); ++i) {
    const Tensor& p = params_[i];
    TINYDDP_CHECK(p.defined(), "optimizer can only optimize Tensors, but parameter ", i, " is an undefined tensor.");
    TINYDDP_CHECK(p.is_leaf(), "can't optimize a non-leaf Tensor (parameter ", i, ", grad_fn=", p.grad_fn()->name(),
                  "). Optimize the leaf it was computed from, or detach() it and call requires_grad_().");
    TINYDDP_CHECK(p.requires_grad(), "optimizer: parameter ", i, " does not require grad, so it would never get a "
                  ".grad to step with. Call requires_grad_() on it or register it with Module::register_parameter.");
  }
}

void Optimizer::zero_grad(bool set_to_none) { nn::zero_grad_of(params_, set_to_none); }

}  // namespace tinyddp::optim
