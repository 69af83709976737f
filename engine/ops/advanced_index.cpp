// Advanced indexing, as PyTorch's at::index and index_put_ (ATen/native/TensorAdvancedIndexing.cpp): a tensor
// indexed by one optional int64 or bool tensor per leading dim, the tensors broadcast together. Tensor.__getitem__
// and __setitem__ (python/tinyddp/_indexing.py) call these once the basic indices (integers, slices, None) have made
// their view.
//
//   x (B..., I_0, ..., I_k-1, A...)    indices [undefined x |B|, i_0, ..., i_k-1]    P = broadcast(i_0.shape, ...)
//   index(x, indices)[b, p, a] = x[b, i_0[p], ..., i_k-1[p], a]                     -> (B..., P..., A...)
//
// A k-dim bool mask stands for k int64 tensors, the coordinates of its true elements. When the indexed dims are
// apart (x[i, :, j]) they move to the front, and P with them (NumPy's rule). The kernels read and write on the host
// (a device tensor makes the round trip, as embedding and where do); the backward rules are these ops again
// (index's is an accumulating index_put, index_put's an index), so every order of derivative exists.
//
// Legend: B = the dims before the indexed ones, I = the indexed dims, A = the dims after them, P = the indices'
// broadcast shape; b, p, a: row-major positions in B, P and A.
#include <algorithm>

#include "engine/ops/op_utils.h"

#include "base/warning.h"
#include "engine/autograd/inplace.h"
#include "engine/core/promotion.h"

namespace tinyddp {

using namespace detail;

namespace {

// The element offsets (sum of coordinate * stride) of dims [first, last) of a tensor, coordinates in row-major order.
std::vector<int64_t> dim_offsets(const Shape& shape, const Shape& strides, size_t first, size_t last) {
  std::vector<int64_t> out{0};
  for (size_t d = first; d < last; ++d) {
    std::vector<int64_t> next;
    next.reserve(out.size() * static_cast<size_t>(shape[d]));
    for (int64_t o : out)
      for (int64_t i = 0; i < shape[d]; ++i) next.push_back(o + i * strides[d]);
    out = std::move(next);
  }
  return out;
}

// A k-dim bool mask's true elements as k int64 tensors of their coordinates, in row-major order (PyTorch's
// nonzero().select(1, j)).
std::vector<Tensor> mask_coordinates(const Tensor& mask) {
  const std::vector<int64_t> flags = mask.to_vector<int64_t>();
  const Shape& shape = mask.shape();
  std::vector<std::vector<int64_t>> coords(shape.size());
  for (size_t r = 0; r < flags.size(); ++r) {
    if (!flags[r]) continue;
    int64_t rest = static_cast<int64_t>(r);
    for (size_t d = shape.size(); d-- > 0;) {
      coords[d].push_back(rest % shape[d]);
      rest /= shape[d];
    }
  }
  std::vector<Tensor> out;
  for (const auto& c : coords)
    out.push_back(from_vector(c, {static_cast<int64_t>(c.size())}, DType::i64));
  return out;
}

// NumPy broadcasting of `shape` into `acc`; false where the two cannot broadcast.
bool broadcast_into(Shape& acc, const Shape& shape) {
  const size_t n = std::max(acc.size(), shape.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t a = i < n - acc.size() ? 1 : acc[i - (n - acc.size())];
    const int64_t s = i < n - shape.size() ? 1 : shape[i - (n - shape.size())];
    if (a != s && a != 1 && s != 1) return false;
    out[i] = a == 1 ? s : a;
  }
  acc = std::move(out);
  return true;
}

// PyTorch's AdvancedIndex (make_info): the index list of a tensor checked in 1.13's order and with its texts, masks
// replaced by their coordinates, the tensors broadcast, and the indexed dims moved to the front when they are apart.
struct AdvancedIndex {
  std::vector<Tensor> expanded;   // the index list in x's dims, masks replaced by int64 coordinates (not broadcast)
  Tensor src;                     // x, its indexed dims first when they were apart: a view without history
  size_t before = 0;              // |B|
  std::vector<Tensor> indices;    // the int64 index of each indexed dim of src, in order (k of them)
  Shape index_shape;              // P
  Shape result_shape;             // B + P + A
};

AdvancedIndex make_info(const Tensor& x, const std::vector<Tensor>& indices) {
  TINYDDP_CHECK_INDEX(static_cast<int64_t>(indices.size()) <= x.dim(), "too many indices for tensor of dimension ",
                      x.dim(), " (got ", indices.size(), ")");
  for (const Tensor& index : indices)
    TINYDDP_CHECK_INDEX(!index.defined() || index.dtype() == DType::i64 || index.dtype() == DType::b8,
                        "tensors used as indices must be long, byte or bool tensors");
  AdvancedIndex info;
  for (const Tensor& index : indices) {
    if (!index.defined() || index.dtype() != DType::b8) {
      info.expanded.push_back(index);
      continue;
    }
    for (int64_t j = 0; j < index.dim(); ++j) {   // the mask's dims against the dims it stands for
      const int64_t at = static_cast<int64_t>(info.expanded.size()) + j;
      TINYDDP_CHECK_INDEX(at < x.dim(), "Dimension out of range (expected to be in range of [", -x.dim(), ", ",
                          x.dim() - 1, "], but got ", at, ")");
      TINYDDP_CHECK_INDEX(index.shape()[j] == x.shape()[at], "The shape of the mask ", shape_str(index.shape()),
                          " at index ", j, " does not match the shape of the indexed tensor ", shape_str(x.shape()),
                          " at index ", at);
    }
    for (Tensor& c : mask_coordinates(index)) info.expanded.push_back(to_device(c, index.device()));
  }
  bool first = true, broadcastable = true;
  std::string shapes;
  for (const Tensor& index : info.expanded) {
    if (!index.defined()) continue;
    shapes += (first ? "" : ", ") + shape_str(index.shape());
    if (first) info.index_shape = index.shape();
    else broadcastable = broadcastable && broadcast_into(info.index_shape, index.shape());
    first = false;
  }
  TINYDDP_CHECK_INDEX(broadcastable, "shape mismatch: indexing tensors could not be broadcast together with shapes ",
                      shapes);
  const size_t n = static_cast<size_t>(x.dim());
  TINYDDP_CHECK_INDEX(info.expanded.size() <= n, "Dimension out of range (expected to be in range of [", -x.dim(),
                      ", ", x.dim() - 1, "], but got ", x.dim(), ")");
  std::vector<size_t> indexed, order;   // order: src's dims, in x's numbering
  for (size_t d = 0; d < info.expanded.size(); ++d)
    if (info.expanded[d].defined()) indexed.push_back(d);
  const bool adjacent = indexed.empty() || indexed.back() - indexed.front() + 1 == indexed.size();
  if (adjacent) {
    for (size_t d = 0; d < n; ++d) order.push_back(d);
    info.before = indexed.empty() ? 0 : indexed.front();
  } else {   // PyTorch's transposeToFront
    order = indexed;
    for (size_t d = 0; d < n; ++d)
      if (d >= info.expanded.size() || !info.expanded[d].defined()) order.push_back(d);
  }
  Shape shape(n), strides(n);
  for (size_t d = 0; d < n; ++d) {
    shape[d] = x.shape()[order[d]];
    strides[d] = x.strides()[order[d]];
  }
  info.src = make_view(x, shape, strides, x.offset());
  for (size_t d : indexed) info.indices.push_back(info.expanded[d]);
  const size_t k = info.indices.size();
  // A dim of size 0 can be indexed by no number: 1.13 says so before its kernel, unless there is nothing to pick.
  bool empty_dim = false;
  for (size_t j = 0; j < k; ++j) empty_dim = empty_dim || shape[info.before + j] == 0;
  TINYDDP_CHECK_INDEX(!empty_dim || numel_of(info.index_shape) == 0, "index is out of bounds for dimension with size 0");
  info.result_shape.assign(shape.begin(), shape.begin() + info.before);
  info.result_shape.insert(info.result_shape.end(), info.index_shape.begin(), info.index_shape.end());
  info.result_shape.insert(info.result_shape.end(), shape.begin() + info.before + k, shape.end());
  return info;
}

// For each p of P (row-major), the offset of src's element [0.., i_0[p], ..., i_k-1[p], 0..] from element [0, ..., 0]
// under `strides` (src's dims); negative indices count from the end. Each index is checked as 1.13's kernel checks
// it, element by element in that order, naming the j-th indexed dim "dimension j".
std::vector<int64_t> index_offsets(const AdvancedIndex& info, const Shape& strides) {
  const int64_t count = numel_of(info.index_shape);
  std::vector<int64_t> out(static_cast<size_t>(count), 0);
  std::vector<std::vector<int64_t>> values;
  for (const Tensor& index : info.indices) values.push_back(expand(index.detach(), info.index_shape).to_vector<int64_t>());
  for (int64_t p = 0; p < count; ++p) {
    for (size_t j = 0; j < values.size(); ++j) {
      const int64_t size = info.src.shape()[info.before + j];
      int64_t v = values[j][p];
      TINYDDP_CHECK_INDEX(v >= -size && v < size, "index ", v, " is out of bounds for dimension ", j, " with size ",
                          size);
      if (v < 0) v += size;
      out[p] += v * strides[info.before + j];
    }
  }
  return out;
}

// out[b, p, a] = src[b, i[p], a]: a new tensor of the result shape, on src's device.
Tensor gather(const AdvancedIndex& info) {
  const Device device = info.src.device();
  const Tensor src = device.is_cpu() ? info.src : to_device(info.src, Device::cpu());   // contiguous there
  Tensor out = empty(info.result_shape, src.dtype());
  if (out.numel() == 0) return to_device(out, device);   // nothing read, nothing checked (as 1.13's kernel)
  const size_t k = info.indices.size();
  const std::vector<int64_t> pos = index_offsets(info, src.strides());
  const std::vector<int64_t> ob = dim_offsets(src.shape(), src.strides(), 0, info.before);
  const std::vector<int64_t> oa = dim_offsets(src.shape(), src.strides(), info.before + k, src.shape().size());
  dispatch_all(src.dtype(), [&]<typename T>() {
    const T* in = src.data_ptr<T>();
    T* o = out.data_ptr<T>();
    for (int64_t b : ob)
      for (int64_t p : pos)
        for (int64_t a : oa) *o++ = in[b + p + a];
  });
  return to_device(out, device);
}

// dst[b, i[p], a] = values[b, p, a] (or +=), dst = info.src on the host and values contiguous of the result shape,
// in row-major order: a repeated position keeps the last value written, or sums in that order, as 1.13's serial CPU
// kernel does.
void scatter(const AdvancedIndex& info, const Tensor& values, bool accumulate) {
  if (numel_of(info.result_shape) == 0) return;
  const Tensor& dst = info.src;
  const size_t k = info.indices.size();
  const std::vector<int64_t> pos = index_offsets(info, dst.strides());
  const std::vector<int64_t> ob = dim_offsets(dst.shape(), dst.strides(), 0, info.before);
  const std::vector<int64_t> oa = dim_offsets(dst.shape(), dst.strides(), info.before + k, dst.shape().size());
  dispatch_all(dst.dtype(), [&]<typename T>() {
    T* out = dst.data_ptr<T>();
    const T* v = values.data_ptr<T>();
    for (int64_t b : ob)
      for (int64_t p : pos)
        for (int64_t a : oa) {
          if (accumulate) out[b + p + a] += *v++;
          else out[b + p + a] = *v++;
        }
  });
}

// Whether 1.13's index_put_ hands the write to masked_fill_ (canDispatchToMaskedFill): one value, on the host, and
// one bool mask among undefined indices. masked_fill_ takes the value as a number, so its dtype is not checked.
bool is_masked_fill(const std::vector<Tensor>& indices, const Tensor& values, bool accumulate) {
  if (accumulate || values.numel() != 1 || !values.device().is_cpu()) return false;
  int masks = 0;
  for (const Tensor& index : indices) {
    if (!index.defined()) continue;
    if (index.dtype() != DType::b8) return false;
    ++masks;
  }
  return masks == 1;
}

// 1.13's assert_no_overlap: `other` (the values, an index) must not share memory with the tensor written, when both
// are dense blocks of one storage and the blocks meet (other layouts are too hard to tell, and let through).
void check_no_overlap(const Tensor& self, const Tensor& other) {
  if (!other.defined() || self.numel() == 0 || other.numel() == 0 || self.storage() != other.storage() ||
      !is_dense(self) || !is_dense(other))
    return;
  const bool apart = self.offset() + self.numel() <= other.offset() || other.offset() + other.numel() <= self.offset();
  TINYDDP_CHECK(apart, "unsupported operation: some elements of the input tensor and the written-to tensor refer to a "
                       "single memory location. Please clone() the tensor before performing the operation.");
}

// Whether self repeats elements (a stride 0 over a dim of size > 1: an expanded tensor).
bool has_internal_overlap(const Tensor& self) {
  for (int64_t d = 0; d < self.dim(); ++d)
    if (self.strides()[d] == 0 && self.shape()[d] > 1) return true;
  return false;
}

// The write of index_put_ into self's elements, without autograd: the checks of 1.13 in its order, the kernel, one
// version bump. Returns the index list in self's dims with masks replaced (what backward rules index with).
std::vector<Tensor> put_into(Tensor& self, const std::vector<Tensor>& indices, const Tensor& values, bool accumulate) {
  TINYDDP_CHECK_INDEX(static_cast<int64_t>(indices.size()) <= self.dim(), "too many indices for tensor of dimension ",
                      self.dim(), " (got ", indices.size(), ")");
  if (has_internal_overlap(self))
    warn("Use of index_put_ on expanded tensors is deprecated. Please clone() the tensor before performing this "
         "operation. This also applies to advanced indexing e.g. tensor[indices] = tensor (Triggered internally at  "
         "./aten/src/ATen/native/TensorAdvancedIndexing.cpp:631.)");
  Tensor v = values.detach();
  if (is_masked_fill(indices, v, accumulate)) {
    v = reshape(to_dtype(v, self.dtype()), {});   // masked_fill_ takes the value as a number
  } else {
    check_no_overlap(self, v);
    for (const Tensor& index : indices) check_no_overlap(self, index);
  }
  AdvancedIndex info = make_info(self, indices);
  const Shape& result = info.result_shape;
  bool expandable = v.dim() <= static_cast<int64_t>(result.size());
  for (int64_t i = 1; expandable && i <= v.dim(); ++i) {
    const int64_t have = v.shape()[v.dim() - i], want = result[result.size() - i];
    expandable = have == want || have == 1;
  }
  TINYDDP_CHECK(expandable, "shape mismatch: value tensor of shape ", shape_str(v.shape()),
                " cannot be broadcast to indexing result of shape ", shape_str(result));
  TINYDDP_CHECK(v.dtype() == self.dtype(), "Index put requires the source and destination dtypes match, got ",
                scalar_type_name(self.dtype()), " for the destination and ", scalar_type_name(v.dtype()),
                " for the source.");
  const Tensor spread = to_device(expand(v, result), Device::cpu()).contiguous();
  if (self.device().is_cpu()) {
    scatter(info, spread, accumulate);
    self.bump_version();
    return info.expanded;
  }
  const Tensor host = to_device(self.detach(), Device::cpu());   // a contiguous copy, written, then copied back
  scatter(make_info(host, info.expanded), spread, accumulate);
  NoGradGuard no_grad;
  Tensor target = self.detach();
  copy_(target, host);   // through self's strides; the one version bump
  return info.expanded;
}

// IndexPutBackward0: the written elements' gradient goes to values (summed where values was broadcast), the others'
// to self; with accumulate, all of it to self as well.
std::shared_ptr<OpNode> put_node(const char* name, const Tensor& self, const Tensor& values,
                                 const std::vector<Tensor>& index_list, bool accumulate) {
  std::vector<bool> defined;
  for (const Tensor& index : index_list) defined.push_back(index.defined());
  auto node = autograd::make_node(name, {self, values}, [defined, accumulate,
                                                          values_shape = values.shape(), values_dtype = values.dtype(),
                                                          values_numel = values.numel()](const TensorList& g,
                                                                                         OpNode& n) {
    std::vector<Tensor> idx;
    size_t next = 0;
    for (bool d : defined) idx.push_back(d ? n.saved(next++) : Tensor());
    const Tensor& grad = g[0];
    TensorList out(2);
    if (n.needs_input_grad(0))
      out[0] = accumulate ? grad : index_put(grad, idx, zeros({}, grad.dtype(), grad.device()), false);
    if (n.needs_input_grad(1)) {
      const Tensor picked = index(grad, idx);
      // One value (a masked_fill in 1.13) takes the sum, whatever its shape; otherwise the broadcast is undone.
      const Tensor summed = values_numel == 1 ? reshape(sum(picked), values_shape) : sum_to(picked, values_shape);
      out[1] = to_dtype(summed, values_dtype);
    }
    return out;
  });
  if (node)
    for (const Tensor& index : index_list)
      if (index.defined()) node->save(index);
  return node;
}

Tensor index_put_named(const Tensor& self, const std::vector<Tensor>& indices, const Tensor& values, bool accumulate,
                       const char* name);

}  // namespace

Tensor index(const Tensor& x, const std::vector<Tensor>& indices) {
  check_defined(x, "index", "self");
  const AdvancedIndex info = make_info(x, indices);
  Tensor out = gather(info);
  std::vector<bool> defined;
  for (const Tensor& index : info.expanded) defined.push_back(index.defined());
  auto node = autograd::make_node("IndexBackward0", {x}, [defined, in = x.shape()](const TensorList& g, OpNode& n) {
    std::vector<Tensor> idx;
    size_t next = 0;
    for (bool d : defined) idx.push_back(d ? n.saved(next++) : Tensor());
    return TensorList{index_put_named(zeros(in, g[0].dtype(), g[0].device()), idx, g[0], /*accumulate=*/true,
                                      "IndexPutImplBackward0")};
  });
  if (node)   // as 1.13's IndexBackward0: the indices (masks as their coordinates here)
    for (const Tensor& index : info.expanded)
      if (index.defined()) node->save(index);
  autograd::set_history(out, node);
  return out;
}

namespace {

// index_put, its node named `name`: IndexPutBackward0, or IndexPutImplBackward0 for the accumulation that index's
// backward does (1.13 calls _index_put_impl_ there, so a first gradient taken with create_graph shows that name).
Tensor index_put_named(const Tensor& self, const std::vector<Tensor>& indices, const Tensor& values, bool accumulate,
                       const char* name) {
  check_defined(self, "index_put", "self");
  check_defined(values, "index_put", "values");
  Tensor out = clone(self.detach());
  const std::vector<Tensor> index_list = put_into(out, indices, values, accumulate);
  autograd::set_history(out, put_node(name, self, values, index_list, accumulate));
  return out;
}

}  // namespace

Tensor index_put(const Tensor& self, const std::vector<Tensor>& indices, const Tensor& values, bool accumulate) {
  return index_put_named(self, indices, values, accumulate, "IndexPutBackward0");
}

Tensor& index_put_(Tensor& self, const std::vector<Tensor>& indices, const Tensor& values, bool accumulate) {
  check_defined(self, "index_put_", "tensor modified in place");
  check_defined(values, "index_put_", "values");
  const bool record = GradMode::is_enabled() && (self.requires_grad() || values.requires_grad());
  autograd::check_inplace(self, record);
  const std::vector<Tensor> index_list = put_into(self, indices, values, accumulate);
  // The node's input 0 is self's history before the write (it saves only the indices, so self may change); it then
  // becomes self's history (on a view: CopySlices on the base).
  if (record) autograd::rebase_history(self, put_node("IndexPutBackward0", self, values, index_list, accumulate));
  return self;
}

}  // namespace tinyddp
