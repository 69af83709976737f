// Views (same storage, other shape/strides/offset), concatenation and copies, with backward rules.
#include <algorithm>
#include <type_traits>

#include "engine/ops/op_utils.h"

#include "engine/autograd/inplace.h"

#include "engine/core/promotion.h"

namespace tinyddp {

using namespace detail;

namespace {

// A view op's output: it knows its base (Note [In-place ops under autograd] in engine/autograd/inplace.h).
// multi_output: one of several views the op returns (split, unbind), never written in place under autograd.
Tensor view_op_result(const Tensor& x, Shape shape, Shape strides, int64_t offset, bool multi_output = false) {
  Tensor out = make_view(x, std::move(shape), std::move(strides), offset);
  autograd::mark_view(out, x, multi_output);
  return out;
}

// The shape `shape` (one -1 inferred) for `numel` elements, with PyTorch's texts (view and reshape give the same).
Shape infer_shape(const Shape& shape, int64_t numel) {
  Shape out = shape;
  int64_t known = 1, infer_at = -1;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      TINYDDP_CHECK(infer_at < 0, "only one dimension can be inferred");
      infer_at = static_cast<int64_t>(i);
    } else {
      TINYDDP_CHECK(out[i] >= 0, "invalid shape dimension ", out[i]);
      known *= out[i];
    }
  }
  if (infer_at >= 0) {
    TINYDDP_CHECK(known != 0 || numel == 0, "shape '", shape_str(shape), "' is invalid for input of size ", numel);
    TINYDDP_CHECK(known != 0, "cannot reshape tensor of 0 elements into shape ", shape_str(shape),
                  " because the unspecified dimension size -1 can be any value and is ambiguous");
    TINYDDP_CHECK(numel % known == 0, "shape '", shape_str(shape), "' is invalid for input of size ", numel);
    out[infer_at] = numel / known;
  }
  TINYDDP_CHECK(numel_of(out) == numel, "shape '", shape_str(shape), "' is invalid for input of size ", numel);
  return out;
}

// Note [Views of strided tensors]
// Read in row-major order, a tensor's elements fall into runs of dims each laid out contiguously relative to
// the next (stride[i] == stride[i+1] * size[i+1]; size-1 dims belong anywhere). Another shape views the same
// elements iff its dims group, in order, into consecutive groups whose sizes multiply to each run's element
// count; each group is then laid out contiguously from its run's innermost stride. So a narrowed last dim
// (a chunk of q, k, v) may be split, and a transposed pair may not be merged. Returns false when no view exists.
bool view_strides(const Tensor& x, const Shape& shape, Shape& strides) {
  strides = contiguous_strides(shape);
  if (x.numel() == 0 || x.is_contiguous()) return true;
  std::vector<std::pair<int64_t, int64_t>> dims;   // (size, stride) of the dims of size > 1
  for (int64_t d = 0; d < x.dim(); ++d)
    if (x.shape()[d] != 1) dims.emplace_back(x.shape()[d], x.strides()[d]);
  size_t next = 0;   // the first new dim not placed yet
  for (size_t i = 0; i < dims.size();) {
    size_t j = i;
    int64_t run = dims[i].first;
    while (j + 1 < dims.size() && dims[j].second == dims[j + 1].second * dims[j + 1].first) run *= dims[++j].first;
    const size_t first = next;
    int64_t covered = 1;
    while (next < shape.size() && covered < run) covered *= shape[next++];
    if (covered != run) return false;
    int64_t stride = dims[j].second;
    for (size_t k = next; k-- > first;) {
      strides[k] = stride;
      stride *= shape[k];
    }
    i = j + 1;
  }
  for (; next < shape.size(); ++next)
    if (shape[next] != 1) return false;
  return true;
}

// A view with another shape (Note [Views of strided tensors]), its node named `node_name`.  dx = g reshaped back.
Tensor view_as_shape(const Tensor& x, const Shape& shape, const char* node_name) {
  const Shape s = infer_shape(shape, x.numel());
  Shape strides;
  TINYDDP_CHECK(view_strides(x, s, strides), "view size is not compatible with input tensor's size and stride (at "
                "least one dimension spans across two contiguous subspaces). Use .reshape(...) instead.");
  Tensor out = view_op_result(x, s, strides, x.offset());
  autograd::set_history(out, autograd::make_node(node_name, {x}, [in = x.shape()](const TensorList& g, OpNode&) {
    return TensorList{reshape(g[0], in)};
  }));
  return out;
}

}  // namespace

Tensor view(const Tensor& x, const Shape& shape) {
  check_defined(x, "view");
  return view_as_shape(x, shape, "ViewBackward0");
}

// A view where the layout allows (Note [Views of strided tensors]), else a copy, with 1.13's node names:
// _reshape_alias of the view, _unsafe_view of a contiguous clone otherwise.
Tensor reshape(const Tensor& x, const Shape& shape) {
  check_defined(x, "reshape");
  if (x.is_contiguous()) return view_as_shape(x, shape, "ReshapeAliasBackward0");
  Shape strides;
  if (view_strides(x, infer_shape(shape, x.numel()), strides)) return view_as_shape(x, shape, "ReshapeAliasBackward0");
  return unsafe_view(clone(x), shape);
}

// 1.13's _unsafe_view: a fresh contiguous tensor's storage read in another shape, recorded as UnsafeViewBackward0
// but not a view (no base, so `_base` is None and in-place ops on it are plain ones): for results an op made
// itself (reshape's copy, matmul's products), which nothing else holds.
Tensor unsafe_view(const Tensor& fresh, const Shape& shape) {
  check_defined(fresh, "_unsafe_view");
  TINYDDP_CHECK(fresh.is_contiguous(), "_unsafe_view: expected a contiguous tensor.");
  const Shape s = infer_shape(shape, fresh.numel());
  Tensor out = make_view(fresh, s, contiguous_strides(s), fresh.offset());
  autograd::set_history(out, autograd::make_node("UnsafeViewBackward0", {fresh},
                                                 [in = fresh.shape()](const TensorList& g, OpNode&) {
                                                   return TensorList{reshape(g[0], in)};
                                                 }));
  return out;
}

// Swaps two dims (a view).  dx = g with the same dims swapped back.
Tensor transpose(const Tensor& x, int64_t dim0, int64_t dim1) {
  check_defined(x, "transpose");
  const int64_t d0 = wrap_dim(dim0, x.dim()), d1 = wrap_dim(dim1, x.dim());
  Shape shape = x.shape(), strides = x.strides();
  if (x.dim() > 0) {
    std::swap(shape[d0], shape[d1]);
    std::swap(strides[d0], strides[d1]);
  }
  Tensor out = view_op_result(x, shape, strides, x.offset());
  autograd::set_history(out, autograd::make_node("TransposeBackward0", {x}, [d0, d1](const TensorList& g, OpNode&) {
    return TensorList{transpose(g[0], d0, d1)};
  }));
  return out;
}

Tensor t(const Tensor& x) {
  check_defined(x, "t");
  TINYDDP_CHECK(x.dim() <= 2, "t() expects a tensor with <= 2 dimensions, but self is ", x.dim(), "D");
  // a 0-dim or 1-dim x: a view of it as it is, still recorded as TBackward0 (as 1.13's)
  Tensor out = x.dim() < 2 ? view_op_result(x, x.shape(), x.strides(), x.offset())
                           : view_op_result(x, {x.shape()[1], x.shape()[0]}, {x.strides()[1], x.strides()[0]}, x.offset());
  autograd::set_history(out, autograd::make_node("TBackward0", {x}, [](const TensorList& g, OpNode&) {
    return TensorList{t(g[0])};
  }));
  return out;
}

// Reorders the dims (a view): dim i of the result is dim dims[i] of x.  dx = g permuted back.
Tensor permute(const Tensor& x, const std::vector<int64_t>& dims) {
  check_defined(x, "permute");
  const int64_t n = x.dim();
  TINYDDP_CHECK(static_cast<int64_t>(dims.size()) == n, "permute(sparse_coo): number of dimensions in the tensor "
                "input does not match the length of the desired ordering of dimensions i.e. input.dim() = ", n,
                " is not equal to len(dims) = ", dims.size());
  std::vector<int64_t> inverse(n, -1);
  Shape shape(n), strides(n);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t d = wrap_dim(dims[i], n);
    TINYDDP_CHECK(inverse[d] < 0, "permute(): duplicate dims are not allowed.");
    inverse[d] = i;
    shape[i] = x.shape()[d];
    strides[i] = x.strides()[d];
  }
  Tensor out = view_op_result(x, shape, strides, x.offset());
  autograd::set_history(out, autograd::make_node("PermuteBackward0", {x}, [inverse](const TensorList& g, OpNode&) {
    return TensorList{permute(g[0], inverse)};
  }));
  return out;
}

namespace {

// Views of consecutive pieces of x along dim, of the given sizes, as outputs 0, 1, ... of one node named
// `node_name`.  dx = the pieces' gradients concatenated, zeros for a piece that got none (as 1.13's split_backward).
std::vector<Tensor> split_into(const Tensor& x, const std::vector<int64_t>& sizes, int64_t dim,
                               const char* node_name) {
  std::vector<Tensor> pieces;
  int64_t start = 0;
  for (int64_t length : sizes) {
    Shape shape = x.shape();
    shape[dim] = length;
    pieces.push_back(view_op_result(x, shape, x.strides(), x.offset() + start * x.strides()[dim], true));
    start += length;
  }
  auto node = autograd::make_node(node_name, {x}, [in = x.shape(), sizes, dim](const TensorList& g, OpNode&) {
    std::vector<Tensor> parts;
    for (size_t i = 0; i < sizes.size(); ++i) {
      Shape shape = in;
      shape[dim] = sizes[i];
      const Tensor& any = *std::find_if(g.begin(), g.end(), [](const Tensor& t) { return t.defined(); });
      parts.push_back(g[i].defined() ? g[i] : zeros(shape, any.dtype(), any.device()));
    }
    return TensorList{cat(parts, dim)};
  });
  if (node) {
    node->set_num_inputs(static_cast<uint32_t>(pieces.size()));
    for (size_t i = 0; i < pieces.size(); ++i) autograd::set_history(pieces[i], node, static_cast<uint32_t>(i));
  }
  return pieces;
}

}  // namespace

std::vector<Tensor> split(const Tensor& x, int64_t split_size, int64_t dim) {
  check_defined(x, "split");
  TINYDDP_CHECK(x.dim() != 0, "split expects at least a 1-dimensional tensor");
  TINYDDP_CHECK(split_size >= 0, "split expects split_size be non-negative, but got split_size=", split_size);
  dim = wrap_dim(dim, x.dim());
  const int64_t size = x.shape()[dim];
  TINYDDP_CHECK(split_size != 0 || size == 0, "split_size can only be 0 if dimension size is 0, but got dimension "
                "size of ", size);
  std::vector<int64_t> sizes;
  for (int64_t start = 0; start < size; start += split_size) sizes.push_back(std::min(split_size, size - start));
  if (sizes.empty()) sizes.push_back(0);   // one empty piece, as 1.13's
  return split_into(x, sizes, dim, "SplitBackward0");
}

std::vector<Tensor> split_with_sizes(const Tensor& x, const std::vector<int64_t>& sizes, int64_t dim) {
  check_defined(x, "split_with_sizes");
  TINYDDP_CHECK(x.dim() != 0, "split expects at least a 1-dimensional tensor");
  dim = wrap_dim(dim, x.dim());
  int64_t total = 0;
  for (int64_t s : sizes) {
    TINYDDP_CHECK(s >= 0, "split_with_sizes expects split_sizes have only non-negative entries, but got "
                  "split_sizes=", shape_str(sizes));
    total += s;
  }
  TINYDDP_CHECK(total == x.shape()[dim], "split_with_sizes expects split_sizes to sum exactly to ", x.shape()[dim],
                " (input tensor's size at dimension ", dim, "), but got split_sizes=", shape_str(sizes));
  return split_into(x, sizes, dim, "SplitWithSizesBackward0");
}

// x[..., i, ...] for every i along dim (views without dim).  dx = the gradients stacked, zeros for those missing.
std::vector<Tensor> unbind(const Tensor& x, int64_t dim) {
  check_defined(x, "unbind");
  TINYDDP_CHECK_INDEX(x.dim() > 0, "Dimension specified as 0 but tensor has no dimensions");
  dim = wrap_dim(dim, x.dim());
  Shape shape = x.shape(), strides = x.strides();
  shape.erase(shape.begin() + dim);
  strides.erase(strides.begin() + dim);
  std::vector<Tensor> slices;
  for (int64_t i = 0; i < x.shape()[dim]; ++i)
    slices.push_back(view_op_result(x, shape, strides, x.offset() + i * x.strides()[dim], true));
  auto node = autograd::make_node("UnbindBackward0", {x}, [shape, dim](const TensorList& g, OpNode&) {
    const Tensor& any = *std::find_if(g.begin(), g.end(), [](const Tensor& t) { return t.defined(); });
    std::vector<Tensor> parts;
    for (const Tensor& gi : g) parts.push_back(gi.defined() ? gi : zeros(shape, any.dtype(), any.device()));
    return TensorList{stack(parts, dim)};
  });
  if (node) {
    node->set_num_inputs(static_cast<uint32_t>(slices.size()));
    for (size_t i = 0; i < slices.size(); ++i) autograd::set_history(slices[i], node, static_cast<uint32_t>(i));
  }
  return slices;
}

namespace {

// The gradient of a view that took [start, start + g's size) of dim from a tensor of shape `in`: g, placed
// there between zeros.
Tensor placed_between_zeros(const Tensor& g, const Shape& in, int64_t dim, int64_t start) {
  std::vector<Tensor> parts;
  Shape before = in, after = in;
  before[dim] = start;
  after[dim] = in[dim] - start - g.shape()[dim];
  if (start > 0) parts.push_back(zeros(before, g.dtype(), g.device()));
  parts.push_back(g);
  if (after[dim] > 0) parts.push_back(zeros(after, g.dtype(), g.device()));
  return parts.size() == 1 ? parts[0] : cat(parts, dim);
}

}  // namespace

// x[..., start:start+length, ...] along dim (a view).  dx = g placed back between zeros.
Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length) {
  check_defined(x, "narrow");
  TINYDDP_CHECK(x.dim() > 0, "narrow() cannot be applied to a 0-dim tensor.");
  dim = wrap_dim(dim, x.dim());
  const int64_t size = x.shape()[dim];
  // 1.13 wraps start as it wraps a dim over `size` positions (an IndexError out of range), except start == size
  if (start != size) start = wrap_dim(start, size);
  TINYDDP_CHECK(length >= 0 && start <= size - length, "start (", start, ") + length (", length,
                ") exceeds dimension size (", size, ").");
  Shape shape = x.shape();
  shape[dim] = length;
  Tensor out = view_op_result(x, shape, x.strides(), x.offset() + start * x.strides()[dim]);
  auto node = autograd::make_node("SliceBackward0", {x}, [in = x.shape(), dim, start](const TensorList& g, OpNode&) {
    return TensorList{placed_between_zeros(g[0], in, dim, start)};
  });
  autograd::set_history(out, node);
  return out;
}

// x[..., start:end:step, ...] along dim (a view: the dim's stride times step), PyTorch's slice: start and end
// count from the back when negative and are clamped into the dim.  dx = g placed back at start, start + step, ...
// between zeros (an index_put, differentiable again).
Tensor slice(const Tensor& x, int64_t dim, int64_t start, int64_t end, int64_t step) {
  check_defined(x, "slice");
  TINYDDP_CHECK_INDEX(x.dim() > 0, "slice() cannot be applied to a 0-dim tensor.");
  TINYDDP_CHECK_VALUE(step > 0, "step must be greater than zero");
  dim = wrap_dim(dim, x.dim());
  const int64_t size = x.shape()[dim];
  if (start < 0) start += size;
  if (end < 0) end += size;
  start = std::clamp<int64_t>(start, 0, size);
  end = std::clamp<int64_t>(end, start, size);
  const int64_t length = (end - start + step - 1) / step;
  if (step == 1) return narrow(x, dim, start, length);
  Shape shape = x.shape(), strides = x.strides();
  shape[dim] = length;
  strides[dim] *= step;
  Tensor out = view_op_result(x, shape, strides, x.offset() + start * x.strides()[dim]);
  auto node = autograd::make_node("SliceBackward0", {x}, [in = x.shape(), dim, start, step](const TensorList& g,
                                                                                             OpNode&) {
    std::vector<int64_t> picked(static_cast<size_t>(g[0].shape()[dim]));
    for (size_t i = 0; i < picked.size(); ++i) picked[i] = start + static_cast<int64_t>(i) * step;
    std::vector<Tensor> indices(static_cast<size_t>(dim) + 1);
    indices[dim] = to_device(from_vector(picked, {static_cast<int64_t>(picked.size())}, DType::i64), g[0].device());
    return TensorList{index_put(zeros(in, g[0].dtype(), g[0].device()), indices, g[0], /*accumulate=*/false)};
  });
  autograd::set_history(out, node);
  return out;
}

// x[..., index, ...] along dim (a view without that dim).  dx = g placed back at index between zeros.
Tensor select(const Tensor& x, int64_t dim, int64_t index) {
  check_defined(x, "select");
  TINYDDP_CHECK(x.dim() > 0, "select() cannot be applied to a 0-dim tensor.");
  dim = wrap_dim(dim, x.dim());
  const int64_t size = x.shape()[dim];
  TINYDDP_CHECK(index >= -size && index < size, "select(): index ", index, " out of range for tensor of size ",
                shape_str(x.shape()), " at dimension ", dim);
  if (index < 0) index += size;
  Shape shape = x.shape(), strides = x.strides();
  shape.erase(shape.begin() + dim);
  strides.erase(strides.begin() + dim);
  Tensor out = view_op_result(x, shape, strides, x.offset() + index * x.strides()[dim]);
  auto node = autograd::make_node("SelectBackward0", {x}, [in = x.shape(), dim, index](const TensorList& g, OpNode&) {
    return TensorList{placed_between_zeros(unsqueeze(g[0], dim), in, dim, index)};
  });
  autograd::set_history(out, node);
  return out;
}

namespace {

// The row-major positions in a tensor of shape `in` of the elements of a view with `shape` and `strides` over
// that tensor's row-major layout, starting at position `first`, in the view's row-major order.
std::vector<int64_t> strided_positions(const Shape& shape, const Shape& strides, int64_t first) {
  std::vector<int64_t> positions{first};
  for (size_t d = 0; d < shape.size(); ++d) {
    std::vector<int64_t> next;
    next.reserve(positions.size() * static_cast<size_t>(shape[d]));
    for (int64_t p : positions)
      for (int64_t i = 0; i < shape[d]; ++i) next.push_back(p + i * strides[d]);
    positions = std::move(next);
  }
  return positions;
}

// The gradient of a view that reads the elements of a tensor of shape `in` at row-major `positions` (one per
// element of g, a position repeated where windows overlap): g summed into zeros of that shape there (an
// index_put that accumulates, differentiable again).
Tensor scattered_back(const Tensor& g, const Shape& in, const std::vector<int64_t>& positions) {
  const Tensor where = from_vector(positions, {static_cast<int64_t>(positions.size())}, DType::i64);
  const Tensor flat = zeros({numel_of(in)}, g.dtype(), g.device());
  return reshape(index_put(flat, {where}, reshape(g, {-1}), /*accumulate=*/true), in);
}

// The strides of x's shape laid out row-major.
Shape row_major_strides(const Shape& shape) {
  Shape strides(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) strides[d - 1] = strides[d] * shape[d];
  return strides;
}

}  // namespace

// The elements (i, i + offset) of dims dim1 and dim2, as a new last dim (a view: that dim's stride is the sum of
// theirs). dx = g placed on that diagonal of zeros of x's shape (PyTorch's DiagonalBackward0).
Tensor diagonal(const Tensor& x, int64_t offset, int64_t dim1, int64_t dim2) {
  check_defined(x, "diagonal");
  const int64_t d1 = wrap_dim(dim1, x.dim()), d2 = wrap_dim(dim2, x.dim());
  TINYDDP_CHECK(d1 != d2, "diagonal dimensions cannot be identical ", dim1, ", ", dim2);
  const int64_t rows = x.shape()[d1], cols = x.shape()[d2];
  const int64_t count =
      std::max<int64_t>(0, offset >= 0 ? std::min(rows, cols - offset) : std::min(rows + offset, cols));
  // The view's strides over a layout (x's, or a row-major one of x's shape) and its first element there.
  const auto geometry = [&](const Shape& strides, int64_t base_offset, Shape& out_strides) {
    int64_t start = base_offset;
    if (count > 0) start += offset >= 0 ? offset * strides[d2] : -offset * strides[d1];
    out_strides.clear();
    for (int64_t d = 0; d < x.dim(); ++d)
      if (d != d1 && d != d2) out_strides.push_back(strides[d]);
    out_strides.push_back(strides[d1] + strides[d2]);
    return start;
  };
  Shape shape;
  for (int64_t d = 0; d < x.dim(); ++d)
    if (d != d1 && d != d2) shape.push_back(x.shape()[d]);
  shape.push_back(count);
  Shape strides, logical;
  const int64_t start = geometry(x.strides(), x.offset(), strides);
  Tensor out = view_op_result(x, shape, strides, start);
  const int64_t first = geometry(row_major_strides(x.shape()), 0, logical);
  auto node = autograd::make_node("DiagonalBackward0", {x}, [in = x.shape(), shape, logical, first](
                                                               const TensorList& g, OpNode&) {
    return TensorList{scattered_back(g[0], in, strided_positions(shape, logical, first))};
  });
  autograd::set_history(out, node);
  return out;
}

// The windows of `size` elements every `step` along dim, as a new last dim (a view: dim's stride times step, the
// new dim's stride dim's). dx = g summed back at the positions each window read (UnfoldBackward0).
Tensor unfold(const Tensor& x, int64_t dim, int64_t size, int64_t step) {
  check_defined(x, "unfold");
  dim = wrap_dim(dim, std::max<int64_t>(x.dim(), 1));
  const int64_t length = x.dim() > 0 ? x.shape()[dim] : 1;
  TINYDDP_CHECK(size <= length, "maximum size for tensor at dimension ", dim, " is ", length, " but size is ", size);
  TINYDDP_CHECK(step > 0, "step is ", step, " but must be > 0");
  const auto geometry = [&](const Shape& strides, Shape& out_shape, Shape& out_strides) {
    out_shape = x.shape();
    out_strides = strides;
    if (x.dim() > 0) {
      out_shape[dim] = (length - size) / step + 1;
      out_strides[dim] = strides[dim] * step;
    }
    out_shape.push_back(size);
    out_strides.push_back(x.dim() > 0 ? strides[dim] : 1);
  };
  Shape shape, strides, logical;
  geometry(x.strides(), shape, strides);
  Tensor out = view_op_result(x, shape, strides, x.offset());
  geometry(row_major_strides(x.shape()), shape, logical);
  auto node = autograd::make_node("UnfoldBackward0", {x}, [in = x.shape(), shape, logical](const TensorList& g,
                                                                                            OpNode&) {
    return TensorList{scattered_back(g[0], in, strided_positions(shape, logical, 0))};
  });
  autograd::set_history(out, node);
  return out;
}

// A view of x's storage with any sizes, strides and storage offset (PyTorch's as_strided). dx = g summed back at
// the elements of x each element of the view reads; tinyddp computes that for a contiguous x only.
Tensor as_strided(const Tensor& x, const Shape& shape, const Shape& strides, std::optional<int64_t> storage_offset) {
  check_defined(x, "as_strided");
  TINYDDP_CHECK(shape.size() == strides.size(), "mismatch in length of strides and shape");
  const int64_t offset = storage_offset.value_or(x.offset());
  int64_t last = offset;   // the largest storage element the view reaches
  for (size_t d = 0; d < shape.size(); ++d) {
    TINYDDP_CHECK(shape[d] >= 0, "as_strided: negative size ", shape[d]);
    TINYDDP_CHECK(strides[d] >= 0, "as_strided: Negative strides are not supported at the moment, got strides: ",
                  shape_str(strides));
    if (shape[d] == 0) last = offset - 1;
    if (last >= offset) last += (shape[d] - 1) * strides[d];
  }
  const int64_t storage_numel = static_cast<int64_t>(x.storage()->nbytes / element_size(x.dtype()));
  TINYDDP_CHECK(last < storage_numel, "setStorage: sizes ", shape_str(shape), ", strides ", shape_str(strides),
                ", storage offset ", offset, ", and itemsize ", element_size(x.dtype()),
                " requiring a storage size of ", (last + 1) * static_cast<int64_t>(element_size(x.dtype())),
                " are out of bounds for storage of size ", x.storage()->nbytes);
  Tensor out = view_op_result(x, shape, strides, offset);
  if (!GradMode::is_enabled() || !x.requires_grad()) return out;
  TINYDDP_CHECK(x.is_contiguous() && (last < offset || (offset >= x.offset() && last < x.offset() + x.numel())),
                "tinyddp: as_strided under autograd needs a contiguous input whose elements the view stays within "
                "(its gradient is then summed back element by element).");
  auto node = autograd::make_node("AsStridedBackward0", {x}, [in = x.shape(), shape, strides,
                                                             first = offset - x.offset()](const TensorList& g,
                                                                                          OpNode&) {
    return TensorList{scattered_back(g[0], in, strided_positions(shape, strides, first))};
  });
  autograd::set_history(out, node);
  return out;
}

// The same elements, shape and strides (a view; PyTorch's alias, what x[...] returns).  dx = g.
Tensor alias(const Tensor& x) {
  check_defined(x, "alias");
  Tensor out = view_op_result(x, x.shape(), x.strides(), x.offset());
  autograd::set_history(out, autograd::make_node("AliasBackward0", {x}, [](const TensorList& g, OpNode&) {
    return TensorList{g[0]};
  }));
  return out;
}

// Broadcasts x to `shape` (a view with stride 0 on repeated dims); -1 keeps a dim.  dx = g summed back.
Tensor expand(const Tensor& x, const Shape& shape) {
  check_defined(x, "expand");
  // 1.13's texts: the tensor as its type prints it (bool is "CPUBoolType"), the dims checked from the last
  TINYDDP_CHECK(shape.size() >= static_cast<size_t>(x.dim()), "expand(",
                x.dtype() == DType::b8 ? "CPUBoolType" : legacy_type_name(x.dtype()), "{", shape_str(x.shape()),
                "}, size=", shape_str(shape), "): the number of sizes provided (", shape.size(),
                ") must be greater or equal to the number of dimensions in the tensor (", x.dim(), ")");
  const size_t lead = shape.size() - x.dim();
  Shape out_shape(shape.size()), strides(shape.size(), 0);
  for (size_t r = shape.size(); r-- > 0;) {
    const size_t i = r;
    if (i < lead) {
      TINYDDP_CHECK(shape[i] >= 0, "expand: -1 is not allowed in a leading, non-existing dimension (", i, ") of ",
                    shape_str(shape), ".");
      out_shape[i] = shape[i];
      continue;
    }
    const int64_t have = x.shape()[i - lead];
    const int64_t want = shape[i] == -1 ? have : shape[i];
    TINYDDP_CHECK(have == want || have == 1, "The expanded size of the tensor (", want,
                  ") must match the existing size (", have, ") at non-singleton dimension ", i, ".  Target sizes: ",
                  shape_str(shape), ".  Tensor sizes: ", shape_str(x.shape()));
    out_shape[i] = want;
    strides[i] = have == want ? x.strides()[i - lead] : 0;
  }
  if (out_shape == x.shape()) return x;
  Tensor out = view_op_result(x, out_shape, strides, x.offset());
  autograd::set_history(out, autograd::make_node("ExpandBackward0", {x}, [in = x.shape()](const TensorList& g, OpNode&) {
    return TensorList{sum_to(g[0], in)};
  }));
  return out;
}

// Inserts a size-1 dim (a view).  dx = g with that dim removed.
Tensor unsqueeze(const Tensor& x, int64_t dim) {
  check_defined(x, "unsqueeze");
  dim = wrap_dim(dim, x.dim() + 1);
  Shape shape = x.shape(), strides = x.strides();
  const int64_t stride = dim < x.dim() ? shape[dim] * strides[dim] : 1;
  shape.insert(shape.begin() + dim, 1);
  strides.insert(strides.begin() + dim, stride);
  Tensor out = view_op_result(x, shape, strides, x.offset());
  autograd::set_history(out, autograd::make_node("UnsqueezeBackward0", {x}, [in = x.shape()](const TensorList& g, OpNode&) {
    return TensorList{reshape(g[0], in)};
  }));
  return out;
}

// Removes size-1 dims (a view): every one (SqueezeBackward0), or `dim` if its size is 1 (SqueezeBackward1; a
// view with the same shape otherwise, as PyTorch records one either way).  dx = g reshaped back.
Tensor squeeze(const Tensor& x, std::optional<int64_t> dim) {
  check_defined(x, "squeeze");
  // A 0-dim tensor takes dim 0 or -1, as if it had one dim.
  const std::optional<int64_t> only = dim ? std::optional<int64_t>(wrap_dim(*dim, std::max<int64_t>(x.dim(), 1)))
                                          : std::nullopt;
  Shape shape, strides;
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (x.shape()[d] == 1 && (!only || *only == d)) continue;
    shape.push_back(x.shape()[d]);
    strides.push_back(x.strides()[d]);
  }
  Tensor out = view_op_result(x, shape, strides, x.offset());
  autograd::set_history(out, autograd::make_node(dim ? "SqueezeBackward1" : "SqueezeBackward0", {x},
                                                 [in = x.shape()](const TensorList& g, OpNode&) {
    return TensorList{reshape(g[0], in)};
  }));
  return out;
}

// Joins tensors of one shape along a new dim (one StackBackward0 node).  dx_i = g's i-th slice along dim.
Tensor stack(const std::vector<Tensor>& tensors, int64_t dim) {
  TINYDDP_CHECK(!tensors.empty(), "stack expects a non-empty TensorList");
  for (const Tensor& x : tensors) check_defined(x, "stack", "tensor");
  const Shape in = tensors[0].shape();
  for (size_t i = 0; i < tensors.size(); ++i)
    TINYDDP_CHECK(tensors[i].shape() == in, "stack expects each tensor to be equal size, but got ",
                  shape_str(in), " at entry 0 and ", shape_str(tensors[i].shape()), " at entry ", i);
  dim = wrap_dim(dim, static_cast<int64_t>(in.size()) + 1);
  Tensor out;
  {
    NoGradGuard no_grad;
    std::vector<Tensor> slices;
    for (const Tensor& x : tensors) slices.push_back(unsqueeze(x.detach(), dim));
    out = cat(slices, dim);
  }
  std::vector<DType> dtypes;
  for (const Tensor& x : tensors) dtypes.push_back(x.dtype());
  autograd::set_history(out, autograd::make_node("StackBackward0", tensors,
                                                 [dim, in, dtypes](const TensorList& g, OpNode& n) {
    TensorList grads;
    for (size_t i = 0; i < dtypes.size(); ++i)
      grads.push_back(n.needs_input_grad(i)
                          ? to_dtype(reshape(narrow(g[0], dim, static_cast<int64_t>(i), 1), in), dtypes[i])
                          : Tensor());
    return grads;
  }));
  return out;
}

// Concatenates along dim.  dx_i = the slice of g that x_i filled.
// Note [cat skips 1-D empty tensors]: 1.13 keeps the legacy rule that a tensor of shape [0] takes no part in the
// shape checks (torch.cat([torch.zeros(0), m]) is m's copy, whatever m's dims); it still counts in the dtype.
Tensor cat(const std::vector<Tensor>& tensors, int64_t dim) {
  TINYDDP_CHECK(!tensors.empty(), "torch.cat(): expected a non-empty list of Tensors");
  for (size_t i = 0; i < tensors.size(); ++i)
    TINYDDP_CHECK(!tensors[i].defined() || tensors[i].dim() > 0, "zero-dimensional tensor (at position ", i,
                  ") cannot be concatenated");
  for (const Tensor& x : tensors) check_defined(x, "cat", "tensor");
  auto skipped = [](const Tensor& x) { return x.dim() == 1 && x.numel() == 0; };
  size_t ref = 0;
  while (ref < tensors.size() && skipped(tensors[ref])) ++ref;
  if (ref == tensors.size()) ref = 0;   // all of shape [0]: the result has that shape
  const Tensor& first = tensors[ref];
  dim = wrap_dim(dim, first.dim());
  Shape shape = first.shape();
  shape[dim] = 0;
  std::vector<int64_t> sizes;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& x = tensors[i];
    check_same_device(first, x, "cat");
    if (skipped(x) && i != ref) {
      sizes.push_back(0);
      continue;
    }
    // PyTorch's texts: the number of dims first, then the first dim that differs.
    TINYDDP_CHECK(x.dim() == first.dim(), "Tensors must have same number of dimensions: got ", first.dim(),
                  " and ", x.dim());
    for (int64_t d = 0; d < x.dim(); ++d)
      TINYDDP_CHECK(d == dim || x.shape()[d] == first.shape()[d], "Sizes of tensors must match except in "
                    "dimension ", dim, ". Expected size ", first.shape()[d], " but got size ", x.shape()[d],
                    " for tensor number ", i, " in the list.");
    sizes.push_back(x.shape()[dim]);
    shape[dim] += x.shape()[dim];
  }
  // The result has the tensors' promoted dtype (cat's operands all have dims, so no tier rule applies).
  ResultType promoted;
  for (const Tensor& x : tensors) promoted.add(x);
  Tensor out = empty(shape, promoted.result(), first.device());
  {
    NoGradGuard no_grad;
    int64_t offset = 0;
    for (size_t i = 0; i < tensors.size(); ++i) {
      if (sizes[i] == 0) continue;   // a 1-D empty tensor (skipped) or an empty slot
      copy_values(narrow(out, dim, offset, sizes[i]), to_dtype(tensors[i].detach(), out.dtype()));   // version 0
      offset += sizes[i];
    }
  }
  std::vector<DType> dtypes;
  std::vector<Shape> shapes;
  for (const Tensor& x : tensors) {
    dtypes.push_back(x.dtype());
    shapes.push_back(x.shape());
  }
  auto node = autograd::make_node("CatBackward0", tensors, [dim, sizes, dtypes, shapes](const TensorList& g,
                                                                                         OpNode& n) {
    TensorList out;
    int64_t offset = 0;
    for (size_t i = 0; i < sizes.size(); ++i) {
      if (!n.needs_input_grad(i)) {
        out.push_back(Tensor());
      } else if (shapes[i].size() == 1 && shapes[i][0] == 0) {   // a skipped [0] tensor: an empty gradient
        out.push_back(zeros(shapes[i], dtypes[i], g[0].device()));
      } else {
        // Each slice back in its input's dtype (a float32 input of a float64 result gets float32).
        out.push_back(to_dtype(narrow(g[0], dim, offset, sizes[i]), dtypes[i]));
      }
      offset += sizes[i];
    }
    return out;
  });
  autograd::set_history(out, node);
  return out;
}

// A contiguous copy.  dx = g.
Tensor clone(const Tensor& x) {
  check_defined(x, "clone");
  Tensor out = empty(x.shape(), x.dtype(), x.device());
  dispatch_all(x.dtype(), [&]<typename T>() {
    backend::copy_to_contiguous<T>(x.device(), x.shape(), x.data_ptr<T>(), x.strides(), out.data_ptr<T>());
  });
  autograd::set_history(out, autograd::make_node("CloneBackward0", {x}, [](const TensorList& g, OpNode&) {
    return TensorList{g[0]};
  }));
  return out;
}

// A copy in another dtype.  dx = g converted back.
Tensor to_dtype(const Tensor& x, DType dtype) {
  check_defined(x, "to");
  if (x.dtype() == dtype) return x;
  const Tensor xc = x.contiguous();
  Tensor out = empty(x.shape(), dtype, x.device());
  dispatch_all(x.dtype(), [&]<typename S>() {
    dispatch_all(dtype, [&]<typename D>() {
      if constexpr (!std::is_same_v<S, D>)
        backend::convert<S, D>(x.device(), xc.data_ptr<S>(), out.data_ptr<D>(), out.numel());
    });
  });
  if (is_floating(dtype)) {
    autograd::set_history(out, autograd::make_node("ToCopyBackward0", {x}, [from = x.dtype()](const TensorList& g, OpNode&) {
      return TensorList{to_dtype(g[0], from)};
    }));
  }
  return out;
}

// A copy on another device.  dx = g copied back.
Tensor to_device(const Tensor& x, Device device) {
  check_defined(x, "to");
  if (x.device() == device) return x;
  const Tensor xc = x.contiguous();
  Tensor out = empty(x.shape(), x.dtype(), device);
  backend::copy_bytes(out.raw_data(), device, xc.raw_data(), xc.device(),
                      static_cast<size_t>(xc.numel()) * element_size(x.dtype()));
  if (is_floating(x.dtype())) {
    autograd::set_history(out, autograd::make_node("ToCopyBackward0", {x}, [from = x.device()](const TensorList& g, OpNode&) {
      return TensorList{to_device(g[0], from)};
    }));
  }
  return out;
}

Tensor one_hot(const Tensor& indices, int64_t num_classes, DType dtype) {
  check_defined(indices, "one_hot", "indices");
  TINYDDP_CHECK(indices.dtype() == DType::i64, "one_hot: expected int64 class indices, got ", dtype_name(indices.dtype()),
                ".");
  TINYDDP_CHECK(num_classes > 0, "one_hot: num_classes must be positive, got ", num_classes, ".");
  const std::vector<int64_t> idx = indices.to_vector<int64_t>();
  for (size_t i = 0; i < idx.size(); ++i)
    TINYDDP_CHECK(idx[i] >= 0 && idx[i] < num_classes, "one_hot: class index ", idx[i], " at position ", i,
                  " is out of bounds for ", num_classes, " classes (expected 0 <= index < ", num_classes, ").");
  Shape shape = indices.shape();
  shape.push_back(num_classes);
  Tensor out = empty(shape, dtype, indices.device());
  const Tensor ic = indices.contiguous();
  dispatch_floating(dtype, "one_hot", [&]<typename T>() {
    backend::one_hot<T>(indices.device(), indices.numel(), num_classes, 1, ic.data_ptr<int64_t>(), out.data_ptr<T>());
  });
  return out;
}

}  // namespace tinyddp
