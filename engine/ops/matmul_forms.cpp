// matmul and linear as PyTorch 1.13 records them: which nodes a script sees under a product depends on the
// operands' dims there (1.13's matmul folds a batch into the rows of one mm, squeezes a 1-D row back, views a
// batched product back to its shape). The values are the engine's matmul's, bitwise: each 1.13 node is a
// composite (composite.h) over it, so only the graph's names and edges change.
//
// Legend: a (..., m, k) @ b (..., k, n); "fold": a of 3 or more dims times a 1-D or 2-D b, computed by 1.13 as
// one mm (or mv) of a.reshape(-1, k).
#include "engine/ops/composite.h"
#include "engine/ops/op_utils.h"

namespace tinyddp {

using namespace detail;

namespace {

bool records(const Tensor& a, const Tensor& b) {
  return GradMode::is_enabled() && (a.requires_grad() || b.requires_grad());
}

// Whether matmul(a, b) would succeed: the restructured forms below only run where it does, so every error is
// the engine matmul's own text.
bool valid_operands(const Tensor& a, const Tensor& b) {
  if (!a.defined() || !b.defined() || a.dim() == 0 || b.dim() == 0) return false;
  if (!is_floating(a.dtype()) || a.dtype() != b.dtype() || a.device() != b.device()) return false;
  const int64_t k_b = b.dim() == 1 ? b.shape()[0] : b.shape()[b.dim() - 2];
  return a.shape().back() == k_b;
}

// 1.13's should_fold: a (>= 3 dims) times a 1-D or 2-D b is one mm of a's rows, unless a is 3-D with its last two
// dims transposed over a slowest first dim (permute(0, 2, 1)), which 1.13 leaves to bmm.
bool folds(const Tensor& a, const Tensor& b) {
  if (a.dim() < 3 || b.dim() > 2) return false;
  const auto& s = a.strides();
  return !(a.dim() == 3 && b.dim() == 2 && s[2] != 1 && s[0] == a.shape()[1] * a.shape()[2]);
}

Tensor one(const std::string& name, const TensorList& inputs, const std::function<Tensor()>& fn) {
  return composite(name, inputs, [&] { return TensorList{fn()}; })[0];
}

}  // namespace

Tensor pytorch_matmul(const Tensor& a, const Tensor& b) {
  if (!records(a, b) || !valid_operands(a, b)) return matmul(a, b);
  const int64_t da = a.dim(), db = b.dim();
  if (da == 1 && db == 1) return one("DotBackward0", {a, b}, [&] { return matmul(a, b); });
  if (da == 2 && db == 1) return one("MvBackward0", {a, b}, [&] { return matmul(a, b); });
  if (da == 2 && db == 2) return matmul(a, b);   // MmBackward0 itself
  if (da == 1 && db == 2) return matmul(a, b);   // 1.13's a.unsqueeze(0).mm(b).squeeze_(0), as the engine's
  Shape out_shape(a.shape().begin(), a.shape().end() - 1);
  if (folds(a, b)) {
    // UnsafeViewBackward0 over MmBackward0 (MvBackward0) of a.reshape(-1, k): the product itself the engine's
    // matmul of those rows read back in a's shape
    const Tensor rows = reshape(a, {-1, a.shape().back()});
    Shape product_shape{rows.shape()[0]};
    if (db == 2) {
      product_shape.push_back(b.shape()[1]);
      out_shape.push_back(b.shape()[1]);
    }
    const Tensor product = one(db == 2 ? "MmBackward0" : "MvBackward0", {rows, b},
                               [&] { return reshape(matmul(reshape(rows, a.shape()), b), product_shape); });
    return unsafe_view(product.contiguous(), out_shape);
  }
  if (da >= 3 && db >= 2) {   // a batched product: 1.13's bmm of the expanded operands, viewed back
    const Tensor product = matmul(a, b);
    return unsafe_view(product.contiguous(), product.shape());
  }
  return matmul(a, b);   // a 1-D or 2-D a times a batch: 1.13 transposes both around a fold (not mirrored)
}

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  check_defined(x, "linear", "input");
  check_defined(weight, "linear", "weight");
  if (bias.defined() && x.dim() == 2) return addmm(bias, x, t(weight));
  const Tensor wt = t(weight);
  if (bias.defined() && x.dim() == 3 && x.is_contiguous() && records(x, wt) && valid_operands(x, wt)) {
    // 1.13's _flatten_3d_linear: addmm(bias, x.view(N L, k), w.t()).view(N, L, n), over the engine's batched
    // product plus bias (the values tinyddp has always given)
    const Shape in = x.shape();
    const Tensor rows = view(x, {in[0] * in[1], in[2]});
    const int64_t n = weight.shape()[0];
    const Tensor product = one("AddmmBackward0", {bias, rows, wt}, [&] {
      return reshape(matmul(view(rows, in), wt) + bias, {in[0] * in[1], n});
    });
    return view(product, {in[0], in[1], n});
  }
  const Tensor y = pytorch_matmul(x, wt);
  return bias.defined() ? y + bias : y;   // 1.13: output.add_(bias), AddBackward0
}

}  // namespace tinyddp
