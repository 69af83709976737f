#include "models/nn/linear.h"

#include <cmath>

namespace tinyddp::nn {

namespace {

// Uniform in [-bound, bound): u in [0, 1) mapped by u * 2 bound - bound.
Tensor uniform(const Shape& shape, double bound, DType dtype) {
  NoGradGuard no_grad;
  return rand(shape, dtype) * (2.0 * bound) - bound;
}

}  // namespace

Linear::Linear(int64_t in_features, int64_t out_features, bool bias, DType dtype)
    : in_features_(in_features), out_features_(out_features) {
  TINYDDP_CHECK(in_features >= 0 && out_features >= 0, "Linear: in_features and out_features must be >= 0, got ",
                "in_features=", in_features, ", out_features=", out_features, ".");
  TINYDDP_CHECK(is_floating(dtype), "Linear: parameters must be floating point (DType::f32 or DType::f64), got ",
                dtype_name(dtype), ".");
  // With no inputs the bound would be infinite; PyTorch's bias rule uses 0 then, and so do we for both.
  const double bound = in_features > 0 ? 1.0 / std::sqrt(static_cast<double>(in_features)) : 0.0;
  weight_ = register_parameter("weight", uniform({out_features, in_features}, bound, dtype));
  if (bias) bias_ = register_parameter("bias", uniform({out_features}, bound, dtype));
  // 1.13's reset_parameters fills both in place (init.kaiming_uniform_, init.uniform_): each starts at version
  // 1, which its "modified by an inplace operation" messages count from.
  weight_.bump_version();
  if (bias) bias_.bump_version();
}

std::string Linear::extra_repr() const {
  return detail::concat("in_features=", in_features_, ", out_features=", out_features_,
                        ", bias=", bias_.defined() ? "True" : "False");
}

Tensor Linear::forward(const Tensor& x) {
  TINYDDP_CHECK(x.defined(), type_name(), "(", extra_repr(), ").forward: the input is an undefined tensor.");
  TINYDDP_CHECK(x.dim() >= 1 && x.size(-1) == in_features_, type_name(), "(", extra_repr(),
                "): expected an input whose last dimension is in_features=", in_features_, ", but got input of shape ",
                shape_str(x.shape()), " (weight has shape ", shape_str(weight_.shape()), "). Reshape the input to (..., ",
                in_features_, ")",
                x.dim() >= 1 ? detail::concat(", or build the layer as Linear(", x.size(-1), ", ", out_features_, ")")
                             : std::string(),
                ".");
  TINYDDP_CHECK(x.dtype() == weight_.dtype(), type_name(), "(", extra_repr(), "): the input is ",
                dtype_name(x.dtype()), " but the weight is ", dtype_name(weight_.dtype()), ". Convert the input with ",
                "x.to(DType::", weight_.dtype() == DType::f64 ? "f64" : "f32", "), or build the layer with that dtype.");
  if (!bias_.defined()) return matmul(x, t(weight_));
  if (x.dim() == 2) return addmm(bias_, x, t(weight_));
  return matmul(x, t(weight_)) + bias_;
}

}  // namespace tinyddp::nn
