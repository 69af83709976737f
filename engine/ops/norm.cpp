// Vector norms: torch.linalg.vector_norm (LinalgVectorNormBackward0) and torch.norm (NormBackward1), one
// forward and one backward rule for both, as 1.13's at::linalg_vector_norm and at::norm share norm_backward.
//
//   ||x||_p = (sum_i |x_i|^p)^(1/p) over `dims` (every dim when empty);  p = inf: max |x_i|,  p = -inf:
//   min |x_i|,  p = 0: the number of nonzero x_i.
//
// The forward of the orders 2, 1, 0, inf and -inf on the CPU is 1.13's CPU kernel, bit for bit (Note [Matching
// 1.13's norm kernel]); other orders and device tensors accumulate in float64 and round once (within an ulp of
// 1.13's). The backward is 1.13's norm_backward (FunctionsManual.cpp) written with engine ops, so it is
// differentiable again; its masked_fill_(norm == 0, 0) is a where, which gives the 0 gradient at a zero norm.
//
// Note [Matching 1.13's norm kernel]
// 1.13's norm_kernel_tensor_iterator_impl (ReduceOpsKernel.cpp) accumulates in the input's dtype (float32 in
// float32), in TensorIterator's order: the reduced dims innermost, the one with the smallest stride first, adjacent
// ones merged where their strides chain. A float32 2-norm whose reduced elements form one contiguous run per output
// (a full reduction of a contiguous tensor, or over its last dims) takes a vectorized path: 8 lanes (AVX2) each
// accumulating fma(x, x, lane) over the run's first multiple of 8, the lanes summed left to right, then the rest
// added one by one, the first 4 of them as a rounded square then an add (GCC's in-order vectorized epilogue), the
// others as fma; then sqrt. Every other case is one sequential loop per output: acc = fma(x, x, acc) for the
// 2-norm (GCC contracts it), acc + |x| for 1, a count for 0, the NaN-propagating max / min of |x| for inf / -inf.
// Checked bit for bit against 1.13 by tests/golden/api_more.json. 1.13 splits a full reduction of 32768 elements
// or more across threads when it has several; tinyddp's order is its single-thread one.
#include <cmath>
#include <limits>
#include <sstream>
#include <type_traits>

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

// The reduced dims of x in TensorIterator's order for one output element (innermost first), size-1 dims dropped,
// adjacent dims merged where x's strides chain; and the input offsets of the output elements, in output order.
struct ReductionOrder {
  std::vector<int64_t> sizes, strides;
  std::vector<int64_t> out_offsets;
};

ReductionOrder reduction_order(const Tensor& x, const std::vector<int64_t>& dims) {
  ReductionOrder order;
  std::vector<int64_t> reduced, kept;
  for (int64_t d = x.dim() - 1; d >= 0; --d) {   // TensorIterator starts from the reversed dims
    if (x.shape()[d] == 1) continue;
    (std::find(dims.begin(), dims.end(), d) != dims.end() ? reduced : kept).push_back(d);
  }
  // insertion sort by stride (ties: the smaller size first), as TensorIterator's reorder_dimensions
  for (size_t i = 1; i < reduced.size(); ++i)
    for (size_t j = i; j > 0; --j) {
      const int64_t a = reduced[j - 1], b = reduced[j];
      const int64_t sa = x.strides()[a], sb = x.strides()[b];
      const bool swap = sa != 0 && sb != 0 && (sa > sb || (sa == sb && x.shape()[a] > x.shape()[b]));
      if (!swap) break;
      std::swap(reduced[j - 1], reduced[j]);
    }
  for (int64_t d : reduced) {
    const int64_t size = x.shape()[d], stride = x.strides()[d];
    if (!order.sizes.empty() && order.strides.back() * order.sizes.back() == stride) {
      order.sizes.back() *= size;   // coalesced with the previous (inner) dim
    } else {
      order.sizes.push_back(size);
      order.strides.push_back(stride);
    }
  }
  // the output elements in row-major order of the kept dims
  std::vector<int64_t> kept_logical;
  for (int64_t d = 0; d < x.dim(); ++d)
    if (std::find(dims.begin(), dims.end(), d) == dims.end()) kept_logical.push_back(d);
  int64_t count = 1;
  for (int64_t d : kept_logical) count *= x.shape()[d];
  order.out_offsets.resize(static_cast<size_t>(count));
  std::vector<int64_t> index(kept_logical.size(), 0);
  for (int64_t k = 0; k < count; ++k) {
    int64_t offset = 0;
    for (size_t i = 0; i < kept_logical.size(); ++i) offset += index[i] * x.strides()[kept_logical[i]];
    order.out_offsets[static_cast<size_t>(k)] = offset;
    for (size_t i = kept_logical.size(); i-- > 0;) {
      if (++index[i] < x.shape()[kept_logical[i]]) break;
      index[i] = 0;
    }
  }
  return order;
}

// 1.13's vectorized float32 2-norm of one contiguous run (Note [Matching 1.13's norm kernel]).
float two_norm_run(const float* p, int64_t n) {
  constexpr int64_t kLanes = 8;   // Vectorized<float>::size() under AVX2, the capability 1.13 runs on
  float lanes[kLanes] = {};
  int64_t d = 0;
  for (; d < n - (n % kLanes); d += kLanes)
    for (int64_t j = 0; j < kLanes; ++j) lanes[j] = std::fma(p[d + j], p[d + j], lanes[j]);
  float acc = lanes[0];
  for (int64_t j = 1; j < kLanes; ++j) acc = acc + lanes[j];
  if (n - d >= 4)
    for (const int64_t end = d + 4; d < end; ++d) {
      const float square = p[d] * p[d];
      acc = acc + square;
    }
  for (; d < n; ++d) acc = std::fma(p[d], p[d], acc);
  return std::sqrt(acc);
}

// One output's sequential reduction of the order's elements from `base`, in T (1.13's binary_kernel_reduce; a
// dtype= result reads the input converted, in the input's own layout, as 1.13's self.to(dtype) keeps it).
template <typename T, typename S>
T serial_norm(const S* base, const ReductionOrder& order, double ord) {
  T acc = ord == -INFINITY ? std::numeric_limits<T>::infinity() : T(0);
  std::vector<int64_t> index(order.sizes.size(), 0);
  int64_t total = 1;
  for (int64_t s : order.sizes) total *= s;
  for (int64_t k = 0; k < total; ++k) {
    int64_t offset = 0;
    for (size_t i = 0; i < index.size(); ++i) offset += index[i] * order.strides[i];
    const T v = static_cast<T>(base[offset]);
    if (ord == 2.0) {
      acc = std::fma(v, v, acc);
    } else if (ord == 1.0) {
      acc = acc + std::abs(v);
    } else if (ord == 0.0) {
      acc = acc + (v == T(0) ? T(0) : T(1));
    } else if (ord == INFINITY) {   // max_impl: a NaN accumulator or a NaN element wins
      const T a = std::abs(v);
      acc = (std::isnan(acc) || acc > a) ? acc : a;
    } else {
      const T a = std::abs(v);
      acc = (std::isnan(acc) || acc < a) ? acc : a;
    }
    for (size_t i = 0; i < index.size(); ++i) {   // innermost first
      if (++index[i] < order.sizes[i]) break;
      index[i] = 0;
    }
  }
  return ord == 2.0 ? std::sqrt(acc) : acc;
}

bool matches_cpu_kernel(double ord) {
  return ord == 2.0 || ord == 1.0 || ord == 0.0 || ord == INFINITY || ord == -INFINITY;
}

// The norm's value, without history, in `dtype` (the input converted to it, as 1.13's reduction iterator does).
Tensor norm_value(const Tensor& x, double ord, const std::vector<int64_t>& dims, bool keepdim, DType dtype) {
  NoGradGuard no_grad;
  const Shape kshape = keepdim_shape(x.shape(), dims);
  const Shape out_shape = keepdim ? kshape : drop_dims(x.shape(), dims);
  if (x.numel() == 0)   // 1.13's kernel fills an empty input's result with 0, whatever the order (torch.norm(-1) of
    return zeros(out_shape, dtype, x.device());   // nothing is 0; linalg.vector_norm refused orders < 0 and inf first)
  if (x.device().is_cpu() && matches_cpu_kernel(ord)) {
    const ReductionOrder order = reduction_order(x, dims);
    Tensor out = empty(out_shape, dtype);
    dispatch_floating(x.dtype(), "norm", [&]<typename S>() {
      dispatch_floating(dtype, "norm", [&]<typename T>() {
        const S* in = x.data_ptr<S>();
        T* o = out.data_ptr<T>();
        const bool vectorized = std::is_same_v<T, float> && std::is_same_v<S, float> && ord == 2.0 &&
                                order.sizes.size() == 1 && order.strides[0] == 1;
        for (size_t k = 0; k < order.out_offsets.size(); ++k) {
          const S* base = in + order.out_offsets[k];
          if constexpr (std::is_same_v<T, float> && std::is_same_v<S, float>) {
            if (vectorized) {
              o[k] = two_norm_run(base, order.sizes[0]);
              continue;
            }
          }
          o[k] = serial_norm<T, S>(base, order, ord);
        }
      });
    });
    return out;
  }
  const Tensor xd = to_dtype(x.detach(), DType::f64);
  Tensor r;
  if (ord == 2.0) {
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
  return to_dtype(reshape(r, out_shape), dtype).contiguous();
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
  // 1.13's overloads: norm.ScalarOpt_dim (NormBackward1) and, with a dtype, norm.ScalarOpt_dim_dtype (NormBackward3)
  return norm_with_node(x, p, reduced_dims(x, dims), keepdim, dtype.value_or(x.dtype()),
                        dtype ? "NormBackward3" : "NormBackward1");
}

}  // namespace tinyddp
