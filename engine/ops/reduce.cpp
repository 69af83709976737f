// Reductions and their backward rules. g is the gradient of the op's output.
#include <algorithm>

#include "engine/ops/op_utils.h"

namespace tinyddp {

using namespace detail;

namespace {

// Normalizes dims (negative, duplicates) into a per-dimension mask. A 0-dim tensor takes dim 0 or -1, as
// PyTorch's: it names the tensor's one element, so reducing over it leaves the tensor as it is (an empty mask).
std::vector<bool> reduce_mask(const Tensor& x, const std::vector<int64_t>& dims) {
  std::vector<bool> mask(std::max<int64_t>(x.dim(), 1), false);
  for (int64_t d : dims) {
    const int64_t w = wrap_dim(d, x.dim());
    TINYDDP_CHECK(!mask[w], "dim ", w, " appears multiple times in the list of dims");
    mask[w] = true;
  }
  mask.resize(x.dim());
  return mask;
}

Shape keepdim_shape(const Shape& shape, const std::vector<bool>& mask) {
  Shape out = shape;
  for (size_t d = 0; d < out.size(); ++d)
    if (mask[d]) out[d] = 1;
  return out;
}

Shape drop_dims(const Shape& shape, const std::vector<bool>& mask) {
  Shape out;
  for (size_t d = 0; d < shape.size(); ++d)
    if (!mask[d]) out.push_back(shape[d]);
  return out;
}

Tensor sum_kernel(const Tensor& x, const std::vector<bool>& mask, bool keepdim) {
  // A bool sum counts the trues: it is taken in int64, exactly (as an int64 sum, wrapping on overflow).
  if (x.dtype() == DType::b8) return sum_kernel(x.to(DType::i64), mask, keepdim);
  const Tensor xc = x.contiguous();
  Tensor out = empty(keepdim_shape(x.shape(), mask), x.dtype(), x.device());
  dispatch_numeric(x.dtype(), "sum", [&]<typename T>() {
    backend::sum_dims<T>(x.device(), x.shape(), mask, xc.data_ptr<T>(), out.data_ptr<T>());
  });
  return keepdim ? out : make_view(out, drop_dims(x.shape(), mask), contiguous_strides(drop_dims(x.shape(), mask)), 0);
}

// (outer, size, inner) split of x's shape around dim.
void split_at(const Shape& shape, int64_t dim, int64_t& outer, int64_t& size, int64_t& inner) {
  outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= shape[d];
  size = shape.empty() ? 1 : shape[dim];
  for (size_t d = dim + 1; d < shape.size(); ++d) inner *= shape[d];
}

}  // namespace

// y = sum over dims.  dy/dx = 1: g is broadcast back to x's shape.
Tensor sum(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  check_defined(x, "sum");
  const std::vector<bool> mask = reduce_mask(x, dims);
  Tensor out = sum_kernel(x, mask, keepdim);
  if (!is_floating(x.dtype())) return out;
  auto node = autograd::make_node(
      "SumBackward1", {x}, [shape = x.shape(), kshape = keepdim_shape(x.shape(), mask)](const TensorList& g, OpNode&) {
        return TensorList{expand(reshape(g[0], kshape), shape)};
      });
  autograd::set_history(out, node);
  return out;
}

Tensor sum(const Tensor& x) {
  check_defined(x, "sum");
  Tensor out = sum_kernel(x, std::vector<bool>(x.dim(), true), false);
  if (!is_floating(x.dtype())) return out;
  auto node = autograd::make_node("SumBackward0", {x}, [shape = x.shape()](const TensorList& g, OpNode&) {
    return TensorList{expand(reshape(g[0], Shape(shape.size(), 1)), shape)};
  });
  autograd::set_history(out, node);
  return out;
}

// PyTorch's text for a mean of integers or bools.
void check_mean_dtype(const Tensor& x) {
  check_defined(x, "mean");
  TINYDDP_CHECK(is_floating(x.dtype()), "mean(): could not infer output dtype. Input dtype must be either a floating "
                "point or complex dtype. Got: ", x.dtype() == DType::b8 ? "Bool" : "Long");
}

namespace {

// mean = sum / count, as 1.13's CPU mean_out computes it (sum, then div_ by the count: a correctly rounded
// quotient, which sum * (1 / count) is not: 36 / 40 is 0.9f, 36 * 0.025f is the float above), recorded as one
// node named as PyTorch's (MeanBackward0 for all elements, MeanBackward1 over dims). Its backward is 1.13's
// mean_backward: g divided by the count, then sum's expand.
// saves_input: 1.13's node saves x (MeanBackward1 does, MeanBackward0 does not), so an in-place change of x before
// the backward raises its error there too, though the rule reads only shapes.
Tensor mean_of(const Tensor& x, const std::vector<bool>& mask, bool keepdim, const char* node_name,
               bool saves_input) {
  int64_t count = 1;
  for (size_t d = 0; d < mask.size(); ++d)
    if (mask[d]) count *= x.shape()[d];
  Tensor out;
  {
    NoGradGuard no_grad;
    out = div(sum_kernel(x, mask, keepdim), wrapped_number(static_cast<double>(count), x.device()));
  }
  auto node = autograd::make_node(node_name, {x}, [shape = x.shape(), kshape = keepdim_shape(x.shape(), mask),
                                                   count](const TensorList& g, OpNode&) {
    const Tensor quotient = div(g[0], wrapped_number(static_cast<double>(count), g[0].device()));
    return TensorList{expand(reshape(quotient, kshape), shape)};
  });
  autograd::set_history(out, node);
  if (node && saves_input) node->save(x);
  return out;
}

}  // namespace

Tensor mean(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  check_mean_dtype(x);
  return mean_of(x, reduce_mask(x, dims), keepdim, "MeanBackward1", /*saves_input=*/true);
}

Tensor mean(const Tensor& x) {
  check_mean_dtype(x);   // an empty x gives 0 / 0 = NaN, as 1.13's
  return mean_of(x, std::vector<bool>(x.dim(), true), false, "MeanBackward0", /*saves_input=*/false);
}

// y = max over all elements.  dy/dx = 1/k at each of the k elements equal to the maximum (PyTorch 1.13
// shares the gradient evenly between ties).
Tensor max(const Tensor& x) {
  check_defined(x, "max");
  TINYDDP_CHECK(x.numel() > 0, "max(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
                               "reduction dim with the 'dim' argument.");
  const Tensor flat = reshape(x.detach(), {x.numel()});
  MaxResult r;
  {
    NoGradGuard no_grad;
    r = max(flat, 0, false);
  }
  Tensor out = r.values;
  // 1.13's evenly_distribute_backward: g / k at the k elements equal to the maximum (the NaNs when it is NaN), +0
  // elsewhere
  auto node = autograd::make_node("MaxBackward1", {x}, [](const TensorList& g, OpNode& n) {
    const Tensor in = n.saved(0);
    const Tensor value = expand(reshape(n.saved(1), Shape(in.dim(), 1)), in.shape());
    const Tensor mask = logical_or(eq(in, value), logical_and(ne(in, in), ne(value, value)));
    const Tensor count = sum(to_dtype(mask, g[0].dtype()));
    return TensorList{where(mask, g[0] / count, scalar_tensor(0.0, g[0].dtype(), g[0].device()))};
  });
  autograd::set_history(out, node);
  if (node) {
    node->save(x);
    node->save(out, true);
  }
  return out;
}

// values = max over dim.  dvalues/dx = 1 at the arg-max of each slice, else 0.
MaxResult max(const Tensor& x, int64_t dim, bool keepdim) {
  check_defined(x, "max");
  if (x.dtype() == DType::b8) {   // true > false: the maximum of the 0/1 values, as bool (not differentiable)
    MaxResult r = max(x.to(DType::i64), dim, keepdim);
    return {r.values.to(DType::b8), r.indices};
  }
  dim = wrap_dim(dim, x.dim());
  TINYDDP_CHECK_INDEX(x.dim() == 0 || x.shape()[dim] > 0, "max(): Expected reduction dim ", dim,
                      " to have non-zero size.");
  int64_t outer, size, inner;
  split_at(x.shape(), dim, outer, size, inner);
  Shape kshape = x.shape();
  if (!kshape.empty()) kshape[dim] = 1;
  const Tensor xc = x.contiguous();
  Tensor values = empty(kshape, x.dtype(), x.device());
  Tensor indices = empty(kshape, DType::i64, x.device());
  dispatch_numeric(x.dtype(), "max", [&]<typename T>() {
    backend::max_dim<T>(x.device(), outer, size, inner, xc.data_ptr<T>(), values.data_ptr<T>(),
                        indices.data_ptr<int64_t>());
  });
  if (!keepdim && x.dim() > 0) {
    Shape s = x.shape();
    s.erase(s.begin() + dim);
    values = make_view(values, s, contiguous_strides(s), 0);
    indices = make_view(indices, s, contiguous_strides(s), 0);
  }
  auto node = autograd::make_node(
      "MaxBackward0", {x}, [shape = x.shape(), kshape, dim](const TensorList& g, OpNode& n) {
        const Tensor idx = n.saved(0);
        int64_t outer, size, inner;
        split_at(shape, dim, outer, size, inner);
        Tensor mask = empty(shape, g[0].dtype(), g[0].device());
        const Tensor ic = idx.contiguous();
        dispatch_floating(g[0].dtype(), "max backward", [&]<typename T>() {
          backend::one_hot<T>(g[0].device(), outer, size, inner, ic.data_ptr<int64_t>(), mask.data_ptr<T>());
        });
        // 1.13 scatters g into zeros (+0 away from the arg-max, where g * mask would give -0 for g < 0)
        const Tensor picked = ne(mask, scalar_tensor(0.0, mask.dtype(), mask.device()));
        return TensorList{where(picked, expand(reshape(g[0], kshape), shape),
                                scalar_tensor(0.0, g[0].dtype(), g[0].device()))};
      });
  if (node) node->save(indices);
  autograd::set_history(values, node);
  return {values, indices};
}

// y = x - logsumexp(x).  dy/dx applied to g: g - softmax(x) * sum(g), with softmax = exp(y).
Tensor log_softmax(const Tensor& x, int64_t dim) {
  check_floating(x, "log_softmax");
  dim = wrap_dim(dim, x.dim());
  int64_t outer, size, inner;
  split_at(x.shape(), dim, outer, size, inner);
  const Tensor xc = x.contiguous();
  Tensor out = empty(x.shape(), x.dtype(), x.device());
  dispatch_floating(x.dtype(), "log_softmax", [&]<typename T>() {
    backend::log_softmax<T>(x.device(), outer, size, inner, xc.data_ptr<T>(), out.data_ptr<T>());
  });
  auto node = autograd::make_node("LogSoftmaxBackward0", {x}, [dim](const TensorList& g, OpNode& n) {
    const Tensor y = n.saved(0);
    return TensorList{g[0] - exp(y) * sum(g[0], {dim}, /*keepdim=*/true)};
  });
  autograd::set_history(out, node);
  if (node) node->save(out, true);
  return out;
}

// y = exp(log_softmax(x)), recorded as one node named as PyTorch's (SoftmaxBackward0). Its backward is 1.13's
// _softmax_backward_data, y * (g - sum(g * y)): the same value as the composition's g * y - y * sum(g * y), in
// 1.13's order (so a column where g - sum(g * y) is 0 gets +0, as there, not the composition's -0).
Tensor softmax(const Tensor& x, int64_t dim) {
  check_floating(x, "softmax");
  dim = wrap_dim(dim, x.dim());
  Tensor out;
  {
    NoGradGuard no_grad;
    out = exp(log_softmax(x, dim));
  }
  auto node = autograd::make_node("SoftmaxBackward0", {x}, [dim](const TensorList& g, OpNode& n) {
    const Tensor y = n.saved(0);
    return TensorList{y * (g[0] - sum(g[0] * y, {dim}, /*keepdim=*/true))};
  });
  autograd::set_history(out, node);
  if (node) node->save(out, true);
  return out;
}

Tensor sum_to(const Tensor& grad, const Shape& shape) {
  if (grad.shape() == shape) return grad;
  TINYDDP_INTERNAL_ASSERT(grad.dim() >= static_cast<int64_t>(shape.size()), "sum_to: cannot sum ",
                          shape_str(grad.shape()), " to the larger shape ", shape_str(shape));
  const size_t lead = grad.dim() - shape.size();
  std::vector<int64_t> dims;
  for (size_t d = 0; d < static_cast<size_t>(grad.dim()); ++d)
    if (d < lead || (shape[d - lead] == 1 && grad.shape()[d] != 1)) dims.push_back(static_cast<int64_t>(d));
  const Tensor summed = dims.empty() ? grad : sum(grad, dims, /*keepdim=*/true);
  return reshape(summed, shape);
}

}  // namespace tinyddp
