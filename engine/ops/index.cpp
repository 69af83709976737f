// Indexing ops: embedding (rows of a weight picked by integer indices).
//
// Legend: V = num_embeddings (the weight's rows), D = embedding_dim, n = the number of indices.
#include "engine/ops/op_utils.h"

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
    const Tensor picks = one_hot(reshape(ind, {n}), v, g[0].dtype());   // (n, V)
    return TensorList{mm(t(picks), reshape(g[0], {n, d}))};
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

}  // namespace tinyddp
