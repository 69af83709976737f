// amax / amin: the largest (smallest) element over several dims, as PyTorch's (AmaxBackward0 / AminBackward0).
// Unlike max(dim), whose gradient goes to the one arg-max, their gradient is shared evenly by every element equal
// to the result (1.13's scale_grad_by_count), so ties split it.
#include "engine/ops/op_utils.h"

namespace tinyddp {

using namespace detail;

namespace {

std::vector<int64_t> amax_dims(const Tensor& x, const std::vector<int64_t>& dims, const char* op) {
  std::vector<int64_t> out;
  if (dims.empty()) {
    TINYDDP_CHECK(x.numel() > 0, op, "(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
                  "reduction dim with the 'dim' argument.");
    for (int64_t d = 0; d < x.dim(); ++d) out.push_back(d);
    return out;
  }
  std::vector<bool> seen(std::max<int64_t>(x.dim(), 1), false);
  for (int64_t d : dims) {
    const int64_t w = wrap_dim(d, x.dim());
    TINYDDP_CHECK(!seen[w], "dim ", w, " appears multiple times in the list of dims");
    seen[w] = true;
    if (x.dim() == 0) continue;
    // 1.13 names the dim as given (amax(-1) of a (3, 0) tensor: "dim -1")
    TINYDDP_CHECK_INDEX(x.shape()[w] > 0, op, "(): Expected reduction dim ", d, " to have non-zero size.");
    out.push_back(w);
  }
  return out;
}

Tensor extremum(const Tensor& x, const std::vector<int64_t>& dims_in, bool keepdim, bool largest) {
  const char* op = largest ? "amax" : "amin";
  check_defined(x, op);
  const std::vector<int64_t> dims = amax_dims(x, dims_in, op);
  Shape kshape = x.shape(), out_shape;
  for (int64_t d : dims) kshape[d] = 1;
  for (size_t d = 0; d < kshape.size(); ++d)
    if (std::find(dims.begin(), dims.end(), static_cast<int64_t>(d)) == dims.end()) out_shape.push_back(kshape[d]);
  Tensor out;
  {
    NoGradGuard no_grad;
    // amin is -amax(-x), computed in int64 for bool (which has no negation), exactly in every dtype
    const DType work = x.dtype() == DType::b8 ? DType::i64 : x.dtype();
    Tensor v = to_dtype(x.detach(), work);
    if (!largest) v = neg(v);
    for (int64_t d : dims) v = max(v, d, true).values;
    if (!largest) v = neg(v);
    out = to_dtype(reshape(v, keepdim ? kshape : out_shape), x.dtype()).contiguous();
  }
  if (!is_floating(x.dtype())) return out;
  auto node = autograd::make_node(largest ? "AmaxBackward0" : "AminBackward0", {x},
                                  [dims, kshape](const TensorList& g, OpNode& n) {
    const Tensor& self = n.saved(0);
    const Tensor mask = to_dtype(eq(self, reshape(n.saved(1), kshape)), g[0].dtype());
    return TensorList{(reshape(g[0], kshape) / sum(mask, dims, true)) * mask};
  });
  autograd::set_history(out, node);
  if (node) {
    node->save(x);
    node->save(out, true);
  }
  return out;
}

}  // namespace

Tensor amax(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) { return extremum(x, dims, keepdim, true); }
Tensor amin(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  return extremum(x, dims, keepdim, false);
}

}  // namespace tinyddp
