// Matrix products. Legend: (m, k) @ (k, n) -> (m, n); batch dims broadcast by NumPy rules.
#include "engine/ops/op_utils.h"

namespace tinyddp {

using namespace detail;

namespace {

// How a 2-D operand is read by gemm without copying: row-major (trans = false, ld = row stride) or the
// transpose of a row-major buffer (trans = true), which is what .t() of a contiguous matrix is.
struct GemmOperand {
  Tensor t;
  bool trans = false;
  int64_t ld = 0;
};

GemmOperand as_gemm_operand(const Tensor& x) {
  const auto& s = x.strides();
  const int64_t rows = x.shape()[0], cols = x.shape()[1];
  if ((s[1] == 1 || cols == 1) && s[0] >= std::max<int64_t>(cols, 1)) return {x, false, s[0]};
  if ((s[0] == 1 || rows == 1) && s[1] >= std::max<int64_t>(rows, 1)) return {x, true, s[1]};
  Tensor c = x.contiguous();
  return {c, false, std::max<int64_t>(cols, 1)};
}

// out (m, n) = a (m, k) @ b (k, n), or, given `init` (m, n) contiguous and owned by the caller, out = init
// += a @ b in init's storage (addmm: one pass fills the bias, the product adds to it). No autograd.
Tensor mm_kernel(const Tensor& a, const Tensor& b, Tensor init = Tensor()) {
  const int64_t m = a.shape()[0], k = a.shape()[1], n = b.shape()[1];
  const bool accumulate = init.defined();
  Tensor out = accumulate ? std::move(init) : empty({m, n}, a.dtype(), a.device());
  TINYDDP_INTERNAL_ASSERT(out.shape() == Shape({m, n}) && out.is_contiguous(),
                          "mm_kernel: init must be a contiguous (m, n) tensor");
  const GemmOperand ga = as_gemm_operand(a), gb = as_gemm_operand(b);
  dispatch_floating(a.dtype(), "mm", [&]<typename T>() {
    backend::gemm<T>(a.device(), ga.trans, gb.trans, m, n, k, ga.t.data_ptr<T>(), ga.ld, gb.t.data_ptr<T>(), gb.ld,
                     accumulate, out.data_ptr<T>(), std::max<int64_t>(n, 1));
  });
  return out;
}

void check_matmul_operands(const Tensor& a, const Tensor& b, const char* op) {
  check_floating(a, op);
  check_floating(b, op);
  check_same_dtype(a, b, op);
  check_same_device(a, b, op);
}

Tensor transpose_last(const Tensor& x) { return transpose(x, -2, -1); }

// d(a @ b)/db applied to g: a^T @ g, laid out like b. When b is the transpose of a contiguous matrix
// (nn::Linear's W.t()), computing (g^T @ a)^T gives the gradient in b's own layout, so that after
// TBackward0 the weight's gradient is contiguous and AccumulateGrad copies it without transposing
// (PyTorch's mm_mat2_backward does the same).
// Whether b is laid out as the transpose of a contiguous matrix (what mm_grad_b needs of it: the backward
// keeps this flag, not b, so that b is saved only when a's gradient needs its values, as PyTorch saves it).
bool is_transposed_layout(const Tensor& b) { return b.strides()[0] == 1 && b.shape()[1] > 1; }

Tensor mm_grad_b(const Tensor& a, bool b_transposed, const Tensor& g) {
  return b_transposed ? t(mm(t(g), a)) : mm(t(a), g);
}

// Batched product of tensors with >= 2 dims each; batch dims broadcast.
Tensor batched_matmul(const Tensor& a, const Tensor& b) {
  const int64_t m = a.shape()[a.dim() - 2], k = a.shape()[a.dim() - 1];
  const int64_t n = b.shape()[b.dim() - 1];
  TINYDDP_CHECK(b.shape()[b.dim() - 2] == k, "matmul: mat1 and mat2 shapes cannot be multiplied (",
                shape_str(a.shape()), " and ", shape_str(b.shape()), "): the last dim of the first (", k,
                ") must equal the second-to-last dim of the second (", b.shape()[b.dim() - 2], ").");
  const Shape batch_a(a.shape().begin(), a.shape().end() - 2), batch_b(b.shape().begin(), b.shape().end() - 2);
  const Shape batch = broadcast_shapes(batch_a, batch_b);
  Shape sa = batch, sb = batch, so = batch;
  sa.insert(sa.end(), {m, k});
  sb.insert(sb.end(), {k, n});
  so.insert(so.end(), {m, n});
  const Tensor ac = expand(a.detach(), sa).contiguous(), bc = expand(b.detach(), sb).contiguous();
  Tensor out = empty(so, a.dtype(), a.device());
  const int64_t count = numel_of(batch);
  dispatch_floating(a.dtype(), "matmul", [&]<typename T>() {
    for (int64_t i = 0; i < count; ++i)
      backend::gemm<T>(a.device(), false, false, m, n, k, ac.data_ptr<T>() + i * m * k, std::max<int64_t>(k, 1),
                       bc.data_ptr<T>() + i * k * n, std::max<int64_t>(n, 1), false, out.data_ptr<T>() + i * m * n,
                       std::max<int64_t>(n, 1));
  });
  // dA = g @ B^T, dB = A^T @ g, each summed back over broadcast batch dims.
  auto node = autograd::make_node("BmmBackward0", {a, b}, [sa = a.shape(), sb = b.shape()](const TensorList& g, OpNode& n) {
    return TensorList{n.needs_input_grad(0) ? sum_to(matmul(g[0], transpose_last(n.saved(1))), sa) : Tensor(),
                      n.needs_input_grad(1) ? sum_to(matmul(transpose_last(n.saved(0)), g[0]), sb) : Tensor()};
  });
  if (node) {
    node->save(a);
    node->save(b);
  }
  autograd::set_history(out, node);
  return out;
}

}  // namespace

// y = a @ b.  dy/da = g @ b^T, dy/db = a^T @ g.
Tensor mm(const Tensor& a, const Tensor& b) {
  check_matmul_operands(a, b, "mm");
  TINYDDP_CHECK(a.dim() == 2 && b.dim() == 2, "mm: expected two 2-D tensors, got ", shape_str(a.shape()), " and ",
                shape_str(b.shape()), "; use matmul for 1-D or batched operands.");
  TINYDDP_CHECK(a.shape()[1] == b.shape()[0], "mm: mat1 and mat2 shapes cannot be multiplied (", a.shape()[0], "x",
                a.shape()[1], " and ", b.shape()[0], "x", b.shape()[1], ").");
  Tensor out = mm_kernel(a, b);
  const bool b_transposed = is_transposed_layout(b);
  auto node = autograd::make_node("MmBackward0", {a, b}, [b_transposed](const TensorList& g, OpNode& n) {
    return TensorList{n.needs_input_grad(0) ? mm(g[0], t(n.saved(1))) : Tensor(),
                      n.needs_input_grad(1) ? mm_grad_b(n.saved(0), b_transposed, g[0]) : Tensor()};
  });
  if (node) {   // each operand only where the other's gradient needs it
    node->save(node->needs_input_grad(1) ? a : Tensor());
    node->save(node->needs_input_grad(0) ? b : Tensor());
  }
  autograd::set_history(out, node);
  return out;
}

// y = bias + a @ b (bias broadcast over rows).  dbias = g summed to bias's shape, da = g @ b^T, db = a^T @ g.
// nn::Linear on a batch is addmm(bias, x, W.t()), as in PyTorch, so the graph (and so the order in which
// parameters' gradients become ready) is the same.
Tensor addmm(const Tensor& bias, const Tensor& a, const Tensor& b) {
  check_matmul_operands(a, b, "addmm");
  check_floating(bias, "addmm");
  check_same_dtype(bias, a, "addmm");
  check_same_device(bias, a, "addmm");
  TINYDDP_CHECK(a.dim() == 2 && b.dim() == 2, "addmm: expected 2-D matrices, got ", shape_str(a.shape()), " and ",
                shape_str(b.shape()), ".");
  TINYDDP_CHECK(a.shape()[1] == b.shape()[0], "addmm: mat1 and mat2 shapes cannot be multiplied (", a.shape()[0], "x",
                a.shape()[1], " and ", b.shape()[0], "x", b.shape()[1], ").");
  const Shape out_shape{a.shape()[0], b.shape()[1]};   // the bias's expand below checks it, with PyTorch's text
  Tensor out;
  {
    NoGradGuard no_grad;
    // The bias broadcast into a fresh (m, n) buffer, then the product added in place (BLAS's beta = 1): one
    // pass over the output fewer than a zero-filled product plus a separate add, and no second buffer.
    out = mm_kernel(a, b, clone(expand(bias.detach(), out_shape)));
  }
  const bool b_transposed = is_transposed_layout(b);
  auto node = autograd::make_node("AddmmBackward0", {bias, a, b},
                                  [sbias = bias.shape(), b_transposed](const TensorList& g, OpNode& n) {
    return TensorList{n.needs_input_grad(0) ? sum_to(g[0], sbias) : Tensor(),
                      n.needs_input_grad(1) ? mm(g[0], t(n.saved(1))) : Tensor(),
                      n.needs_input_grad(2) ? mm_grad_b(n.saved(0), b_transposed, g[0]) : Tensor()};
  });
  if (node) {   // each operand only where the other's gradient needs it (a layer whose input needs no
                // gradient keeps no reference to its weight: an optimizer step before its backward is fine)
    node->save(node->needs_input_grad(2) ? a : Tensor());
    node->save(node->needs_input_grad(1) ? b : Tensor());
  }
  autograd::set_history(out, node);
  return out;
}

Tensor matmul(const Tensor& a, const Tensor& b) {
  check_matmul_operands(a, b, "matmul");
  TINYDDP_CHECK(a.dim() >= 1 && b.dim() >= 1, "both arguments to matmul need to be at least 1D, but they are ",
                a.dim(), "D and ", b.dim(), "D");
  // Checked here, on the shapes the caller passed (the branches below reshape 1-D operands and call mm).
  const int64_t k_a = a.shape().back(), k_b = b.dim() == 1 ? b.shape()[0] : b.shape()[b.dim() - 2];
  TINYDDP_CHECK(k_a == k_b || a.dim() != 2 || b.dim() != 2, "mat1 and mat2 shapes cannot be multiplied (",
                a.shape()[0], "x", a.shape()[1], " and ", b.shape()[0], "x", b.shape()[1], ")");   // 1.13's mm text
  TINYDDP_CHECK(k_a == k_b, "matmul: shapes ", shape_str(a.shape()), " and ", shape_str(b.shape()),
                " cannot be multiplied: the last dim of the first (", k_a, ") must equal ",
                b.dim() == 1 ? "the size of the second (" : "the second-to-last dim of the second (", k_b, ").");
  // 1-D operands become matrices (a row for a, a column for b) and the added dim is dropped afterwards, from the
  // fresh product as 1.13 drops it: squeeze_ of a row (a version bump), else _unsafe_view, so that the result is
  // never a view.
  if (a.dim() == 1 && b.dim() == 1) return unsafe_view(mm(unsqueeze(a, 0), unsqueeze(b, 1)), {});
  if (a.dim() == 1 && b.dim() == 2) {
    Tensor r = mm(unsqueeze(a, 0), b);
    return squeeze_(r, 0);
  }
  if (a.dim() == 1) {
    const Tensor r = matmul(unsqueeze(a, 0), b).contiguous();
    Shape s = r.shape();
    s.erase(s.end() - 2);
    return unsafe_view(r, s);
  }
  if (b.dim() == 1) {
    const Tensor r = matmul(a, unsqueeze(b, 1)).contiguous();
    Shape s = r.shape();
    s.pop_back();
    return unsafe_view(r, s);
  }
  if (a.dim() == 2 && b.dim() == 2) return mm(a, b);
  return batched_matmul(a, b);
}

}  // namespace tinyddp
