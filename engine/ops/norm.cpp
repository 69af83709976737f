// Vector norms: torch.linalg.vector_norm (LinalgVectorNormBackward0) and torch.norm (NormBackward1), one
// forward and one backward rule for both, as 1.13's at::linalg_vector_norm and at::norm share norm_backward.
//
//   ||x||_p = (sum_i |x_i|^p)^(1/p) over `dims` (every dim when empty);  p = inf: max |x_i|,  p = -inf:
//   min |x_i|,  p = 0: the number of nonzero x_i.
//
// The forward accumulates in float64 and rounds once into the result's dtype: a float32 result is the correctly
// rounded norm (1.13's CPU kernels accumulate float32 in float32 lanes, so theirs can differ in the last bit).
// The backward is 1.13's norm_backward (FunctionsManual.cpp) written with engine ops, so it is differentiable
// again; its masked_fill_(norm == 0, 0) is a where, which gives the 0 gradient at a zero norm.
#include <cmath>
#include <sstream>

#include "engine/ops/op_utils.h"

namespace tinyddp {

using namespace detail;

namespace {

// PyTorch's ScalarType names, as its messages print them ("Got Long").
const char* scalar_name(DType t) {
  switch (t) {
    case DType::f32: return "Float";
    case DType::f64: return "Double";
    case DType::i64: return "Long";
    case DType::b8: return "Bool";
  }
  return "?";
}

// The order as c10::Scalar prints it: "inf", "-1", "0.5".
std::string ord_str(double ord) {
  std::ostringstream os;
  os << ord;
  return os.str();
}

// The reduced dims, wrapped and checked: every dim when `dims` is empty (a 0-dim tensor has none).
std::vector<int64_t> reduced_dims(const Tensor& x, const std::vector<int64_t>& dims) {
  std::vector<int64_t> out;
  if (dims.empty()) {
    for (int64_t d = 0; d < x.dim(); ++d) out.push_back(d);
    return out;
  }
  std::vector<bool> seen(std::max<int64_t>(x.dim(), 1), false);
  for (int64_t d : dims) {
    const int64_t w = wrap_dim(d, x.dim());
    TINYDDP_CHECK(!seen[w], "dim ", w, " appears multiple times in the list of dims");
    seen[w] = true;
    if (x.dim() > 0) out.push_back(w);
  }
  return out;
}

Shape keepdim_shape(const Shape& shape, const std::vector<int64_t>& dims) {
  Shape out = shape;
  for (int64_t d : dims) out[d] = 1;
  return out;
}

Shape drop_dims(const Shape& shape, const std::vector<int64_t>& dims) {
  Shape out;
  for (size_t d = 0; d < shape.size(); ++d)
    if (std::find(dims.begin(), dims.end(), static_cast<int64_t>(d)) == dims.end()) out.push_back(shape[d]);
  return out;
}

// max over several dims, kept as size 1.
Tensor amax_keepdim(Tensor x, const std::vector<int64_t>& dims) {
  for (int64_t d : dims) x = max(x, d, true).values;
  return x;
}

// The norm's value, without history: float64 accumulation, one rounding into `dtype`.
Tensor norm_value(const Tensor& x, double ord, const std::vector<int64_t>& dims, bool keepdim, DType dtype) {
  NoGradGuard no_grad;
  const Tensor xd = to_dtype(x.detach(), DType::f64);
  const Shape kshape = keepdim_shape(x.shape(), dims);
  Tensor r;
  if (x.numel() == 0 && std::isinf(ord)) {
    r = zeros(kshape, DType::f64, x.device());   // torch.norm's old kernel gives 0 (linalg's refuses first)
  } else if (ord == 2.0) {
    r = sqrt(sum(xd * xd, dims, true));
  } else if (ord == 1.0) {
    r = sum(abs(xd), dims, true);
  } else if (ord == 0.0) {
    r = sum(to_dtype(ne(xd, zeros({}, DType::f64, x.device())), DType::f64), dims, true);
  } else if (ord == INFINITY) {
    r = amax_keepdim(abs(xd), dims);
  } else if (ord == -INFINITY) {
    r = neg(amax_keepdim(neg(abs(xd)), dims));
  } else {
    r = pow(sum(pow(abs(xd), ord), dims, true), 1.0 / ord);
  }
  r = reshape(r, keepdim ? kshape : drop_dims(x.shape(), dims));
  return to_dtype(r, dtype).contiguous();
}

// 1.13's norm_backward(grad, self, p, norm, dim, keepdim), with grad and norm already of keepdim's shape.
Tensor norm_backward(const Tensor& grad, Tensor self, double p, const Tensor& norm, const std::vector<int64_t>& dims) {
  if (self.dtype() != grad.dtype()) self = to_dtype(self, grad.dtype());   // a dtype= result: computed in it
  const Tensor zero = zeros({}, grad.dtype(), grad.device());
  const Tensor norm_is_zero = eq(norm, zero);
  if (p == 0.0) return Tensor();   // no gradient (PyTorch returns an undefined one)
  if (p == 1.0) return sign(self) * grad;
  if (p == 2.0) return grad * where(norm_is_zero, zero, self / norm);
  if (std::isinf(p)) {
    // the derivative of amax(|self|) that respects NaNs: shared evenly by the maxima (and the NaNs)
    const Tensor self_abs = abs(self);
    const Tensor mask = to_dtype(logical_or(eq(self_abs, norm), ne(self_abs, self_abs)), grad.dtype());
    return sign(self) * ((grad / sum(mask, dims, true)) * mask);
  }
  if (p < 1.0) {
    const Tensor self_scaled = sign(self) * where(eq(self, zero), zero, pow(abs(self), p - 1.0));
    return self_scaled * grad * pow(norm, 1.0 - p);
  }
  const Tensor self_scaled = p < 2.0 ? sign(self) * pow(abs(self), p - 1.0) : self * pow(abs(self), p - 2.0);
  const Tensor scale_v = where(norm_is_zero, zero, grad / pow(norm, p - 1.0));
  return self_scaled * scale_v;
}

Tensor norm_with_node(const Tensor& x, double ord, const std::vector<int64_t>& dims, bool keepdim, DType dtype,
                      const char* node_name) {
  Tensor out = norm_value(x, ord, dims, keepdim, dtype);
  auto node = autograd::make_node(
      node_name, {x}, [ord, dims, kshape = keepdim_shape(x.shape(), dims)](const TensorList& g, OpNode& n) {
        return TensorList{norm_backward(reshape(g[0], kshape), n.saved(0), ord, reshape(n.saved(1), kshape), dims)};
      });
  autograd::set_history(out, node);
  if (node) {
    node->save(x);
    node->save(out, true);
  }
  return out;
}

}  // namespace

Tensor linalg_vector_norm(const Tensor& x, double ord, const std::vector<int64_t>& dims, bool keepdim,
                          std::optional<DType> dtype) {
  check_defined(x, "linalg.vector_norm");
  TINYDDP_CHECK(is_floating(x.dtype()), "linalg.vector_norm: Expected a floating point or complex tensor as input. "
                "Got ", scalar_name(x.dtype()));
  if (x.numel() == 0 && (ord < 0.0 || ord == INFINITY)) {
    TINYDDP_CHECK(!dims.empty(), "linalg.vector_norm cannot compute the ", ord_str(ord), " norm on an empty tensor "
                  "because the operation does not have an identity");
    for (int64_t d : dims)
      TINYDDP_CHECK(x.size(d) != 0, "linalg.vector_norm cannot compute the ", ord_str(ord), " norm on the dimension ",
                    d, "because this dimension is empty and the operation does not have an identity");
  }
  if (dtype) {
    TINYDDP_CHECK(is_floating(*dtype), "linalg.vector_norm: dtype should be floating point or complex, but got ",
                  scalar_name(*dtype));
    TINYDDP_CHECK(!(x.dtype() == DType::f64 && *dtype == DType::f32), "linalg.vector_norm: the dtype of the input (",
                  scalar_name(x.dtype()), ") should be convertible without narrowing to the specified dtype (",
                  scalar_name(*dtype), ")");
  }
  return norm_with_node(x, ord, reduced_dims(x, dims), keepdim, dtype.value_or(x.dtype()),
                        "LinalgVectorNormBackward0");
}

Tensor norm(const Tensor& x, double p, const std::vector<int64_t>& dims, bool keepdim, std::optional<DType> dtype) {
  check_defined(x, "norm");
  TINYDDP_CHECK(is_floating(x.dtype()), "norm(): input dtype should be either floating point or complex. Got ",
                scalar_name(x.dtype()), " instead.");
  if (dtype)
    TINYDDP_CHECK(is_floating(*dtype), "norm(): the desired output dtype should be either floating point or complex. "
                  "Got ", scalar_name(*dtype), " instead.");
  return norm_with_node(x, p, reduced_dims(x, dims), keepdim, dtype.value_or(x.dtype()), "NormBackward1");
}

}  // namespace tinyddp
