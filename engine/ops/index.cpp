// Indexing ops: embedding (rows of a weight picked by integer indices) and where (elements picked by a mask).
//
// Legend: V = num_embeddings (the weight's rows), D = embedding_dim, n = the number of indices.
#include "engine/ops/op_utils.h"

#include <cstring>

namespace tinyddp {

using namespace detail;

// out[..., :] = weight[indices[...], :], of shape indices.shape + (D). The forward copies rows (exact, on any
// device). Backward: grad_weight[v] = the sum of the gradient rows whose index is v, written as
// one_hot(indices)^T @ grad (V, D): a scatter-add with engine ops, so it is differentiable again (its
// derivative in the gradient is embedding itself).
Tensor embedding(const Tensor& weight, const Tensor& indices) {
  check_defined(weight, "embedding", "weight");
  check_defined(indices, "embedding", "indices");
  TINYDDP_CHECK(indices.dtype() == DType::i64, "Expected tensor for argument #1 'indices' to have one of the "
                "following scalar types: Long, Int; but got ", legacy_type_name(indices.dtype()),
                " instead (while checking arguments for embedding)");
  TINYDDP_CHECK(weight.dim() == 2, "'weight' must be 2-D");
  check_same_device(weight, indices, "embedding");
  const int64_t v = weight.shape()[0], d = weight.shape()[1];
  // Read on the host: on a GPU that is a copy and a wait (PyTorch checks on the device and asserts there).
  const std::vector<int64_t> idx = indices.to_vector<int64_t>();
  for (int64_t i : idx) TINYDDP_CHECK_INDEX(i >= 0 && i < v, "index out of range in self");
  Shape shape = indices.shape();
  shape.push_back(d);
  Tensor out = empty(shape, weight.dtype(), weight.device());
  {
    const Tensor w = weight.detach().contiguous();
    const size_t row_bytes = static_cast<size_t>(d) * element_size(weight.dtype());
    char* dst = static_cast<char*>(out.raw_data());
    const char* src = static_cast<const char*>(w.raw_data());
    for (size_t k = 0; k < idx.size() && row_bytes > 0; ++k)
      backend::copy_bytes(dst + k * row_bytes, out.device(), src + idx[k] * row_bytes, w.device(), row_bytes);
  }
  auto node = autograd::make_node("EmbeddingBackward0", {weight}, [v, d](const TensorList& g, OpNode& node) {
    const Tensor& ind = node.saved(1);
    const int64_t n = ind.numel();
    if (n == 0) return TensorList{zeros({v, d}, g[0].dtype(), g[0].device())};
    // 1.13's embedding_dense_backward: each row of g added into zeros at its index, in index order (a sequential
    // accumulate, so repeated indices sum in 1.13's order; untouched rows stay +0)
    return TensorList{index_put(zeros({v, d}, g[0].dtype(), g[0].device()), {reshape(ind, {n})},
                                reshape(g[0], {n, d}), /*accumulate=*/true)};
  });
  // Saved as 1.13's EmbeddingBackward0: the weight (so an in-place change of it before the backward raises
  // "modified by an inplace operation", as there) and the indices.
  if (node) {
    node->save(weight);
    node->save(indices);
  }
  autograd::set_history(out, node);
  return out;
}

// The forward copies bytes on the host (exact for every dtype, on any device: a device tensor makes the round
// trip); its backward is where again, so it is differentiable to any order.
Tensor where(const Tensor& condition, const Tensor& a, const Tensor& b) {
  check_defined(condition, "where", "condition");
  check_defined(a, "where", "self");
  check_defined(b, "where", "other");
  static const char* const kScalarTypeName[] = {"Float", "Double", "Long", "Bool"};   // c10's, in DType order
  TINYDDP_CHECK(condition.dtype() == DType::b8, "where expected condition to be a boolean tensor, but got a "
                "tensor with dtype ", kScalarTypeName[static_cast<int>(condition.dtype())]);
  check_same_dtype(a, b, "where");
  check_same_device(a, b, "where");
  check_same_device(condition, a, "where");
  const Shape shape = broadcast_shapes(broadcast_shapes(condition.shape(), a.shape()), b.shape());
  Tensor out;
  {
    const Device cpu = Device::cpu();
    const Tensor mask = to_device(expand(condition.detach(), shape), cpu).contiguous();   // one byte each
    Tensor picked = clone(to_device(expand(a.detach(), shape), cpu));                     // a, then b's bytes
    const Tensor other = to_device(expand(b.detach(), shape), cpu).contiguous();
    const size_t item = element_size(a.dtype());
    const auto* keep = static_cast<const uint8_t*>(mask.raw_data());
    char* dst = static_cast<char*>(picked.raw_data());
    const char* src = static_cast<const char*>(other.raw_data());
    const int64_t n = picked.numel();
    for (int64_t k = 0; k < n; ++k)
      if (!keep[k]) std::memcpy(dst + k * item, src + k * item, item);
    out = to_device(picked, a.device());
  }
  const Shape a_shape = a.shape(), b_shape = b.shape();
  auto node = autograd::make_node("WhereBackward0", {a, b}, [a_shape, b_shape](const TensorList& g,
                                                                                 OpNode& node) {
    const Tensor& mask = node.saved(0);
    const Tensor zero = zeros({}, g[0].dtype(), g[0].device());
    return TensorList{sum_to(where(mask, g[0], zero), a_shape), sum_to(where(mask, zero, g[0]), b_shape)};
  });
  if (node) node->save(condition);   // as 1.13's WhereBackward0, the condition only
  autograd::set_history(out, node);
  return out;
}

}  // namespace tinyddp
