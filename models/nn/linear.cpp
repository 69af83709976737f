#include "models/nn/linear.h"

#include <cmath>

namespace tinyddp::nn {

Linear::Linear(int64_t in_features, int64_t out_features, bool bias, DType dtype)
    : in_features_(in_features), out_features_(out_features) {
  TINYDDP_CHECK(in_features >= 0 && out_features >= 0, "Linear: in_features and out_features must be >= 0, got ",
                "in_features=", in_features, ", out_features=", out_features, ".");
  TINYDDP_CHECK(is_floating(dtype), "Linear: parameters must be floating point (DType::f32 or DType::f64), got ",
                dtype_name(dtype), ".");
  // PyTorch's reset_parameters, computed as its Python computes it, so that a seed gives its values bitwise:
  // kaiming_uniform_(a=sqrt(5)) takes gain = sqrt(2 / (1 + a^2)), std = gain / sqrt(fan_in) and
  // bound = sqrt(3) * std, which is 1/sqrt(fan_in) up to rounding (a^2 is 5.000000000000001); the bias takes
  // 1/sqrt(fan_in) itself. With no inputs PyTorch's bias bound is 0, and so is the weight's here.
  const double a = std::sqrt(5.0), fan_in = static_cast<double>(in_features);
  const double weight_bound = in_features > 0 ? std::sqrt(3.0) * (std::sqrt(2.0 / (1.0 + a * a)) / std::sqrt(fan_in))
                                              : 0.0;
  const double bias_bound = in_features > 0 ? 1.0 / std::sqrt(fan_in) : 0.0;
  weight_ = register_parameter("weight", empty({out_features, in_features}, dtype));
  if (bias) bias_ = register_parameter("bias", empty({out_features}, dtype));
  // Filled in place, weight first, as 1.13's init.kaiming_uniform_ and init.uniform_ do: each starts at
  // version 1, which its "modified by an inplace operation" messages count from.
  NoGradGuard no_grad;
  uniform_(weight_, -weight_bound, weight_bound);
  if (bias) uniform_(bias_, -bias_bound, bias_bound);
}

Linear::Linear(Tensor weight, Tensor bias) {
  TINYDDP_CHECK(weight.defined() && weight.dim() == 2 && is_floating(weight.dtype()),
                "Linear: the weight to adopt must be a floating point (out_features, in_features) tensor, got ",
                weight.defined() ? shape_str(weight.shape()) + " " + dtype_name(weight.dtype()) : "an undefined one",
                ".");
  TINYDDP_CHECK(!bias.defined() || (bias.dim() == 1 && bias.size(0) == weight.size(0) &&
                                    bias.dtype() == weight.dtype()),
                "Linear: the bias to adopt must be a (", weight.size(0), ") tensor of ", dtype_name(weight.dtype()),
                ", got ", bias.defined() ? shape_str(bias.shape()) + " " + dtype_name(bias.dtype()) : "", ".");
  out_features_ = weight.size(0);
  in_features_ = weight.size(1);
  weight_ = register_parameter("weight", std::move(weight));
  if (bias.defined()) bias_ = register_parameter("bias", std::move(bias));
}

std::string Linear::extra_repr() const {
  return detail::concat("in_features=", in_features_, ", out_features=", out_features_,
                        ", bias=", bias_.defined() ? "True" : "False");
}

// PyTorch 1.13's texts for a wrong input (F.linear's: addmm for a 2-D input, or a contiguous 3-D one, with a
// bias; matmul otherwise), which is what users search for: the input's rows (its leading dims flattened) by its
// last dim against the transposed weight's in_features x out_features.
namespace {
const char* scalar_name(DType t) {
  switch (t) {
    case DType::f32: return "Float";
    case DType::f64: return "Double";
    case DType::i64: return "Long";
    case DType::b8: return "Bool";
  }
  return "?";
}
}  // namespace

Tensor Linear::forward(const Tensor& x) {
  TINYDDP_CHECK(x.defined(), type_name(), "(", extra_repr(), ").forward: the input is an undefined tensor.");
  TINYDDP_CHECK(x.dim() >= 1, "both arguments to matmul need to be at least 1D, but they are ", x.dim(),
                "D and 2D");
  int64_t rows = 1;
  for (int64_t d = 0; d + 1 < x.dim(); ++d) rows *= x.size(d);
  TINYDDP_CHECK(x.size(-1) == in_features_, "mat1 and mat2 shapes cannot be multiplied (", rows, "x", x.size(-1),
                " and ", in_features_, "x", out_features_, ")");
  const bool addmm_path = bias_.defined() && (x.dim() == 2 || (x.dim() == 3 && x.is_contiguous()));
  TINYDDP_CHECK(x.dtype() == weight_.dtype() || !addmm_path, "mat1 and mat2 must have the same dtype");
  TINYDDP_CHECK(x.dtype() == weight_.dtype(), "expected scalar type ", scalar_name(x.dtype()), " but found ",
                scalar_name(weight_.dtype()));
  return linear(x, weight_, bias_);   // PyTorch's graph: addmm for a 2-D input with a bias (engine/ops/ops.h)
}

}  // namespace tinyddp::nn
