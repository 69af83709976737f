// Losses, composed of differentiable ops (so their higher-order gradients come for free).
#include "engine/ops/op_utils.h"

namespace tinyddp {

using namespace detail;

// mean((input - target)^2), PyTorch's default reduction.
Tensor mse_loss(const Tensor& input, const Tensor& target) {
  check_floating(input, "mse_loss");
  check_floating(target, "mse_loss");
  TINYDDP_CHECK(input.shape() == target.shape(), "mse_loss: input has shape ", shape_str(input.shape()),
                " but target has shape ", shape_str(target.shape()),
                ". They must match (tinyddp does not broadcast losses, which usually hides a bug); reshape the "
                "target, e.g. target.reshape(", shape_str(input.shape()), ").");
  const Tensor diff = input - target;
  return mean(diff.pow(2.0));
}

// -mean_n log_softmax(logits)[n, target[n]]: cross-entropy with class indices, mean over the batch. The
// checks are PyTorch 1.13's, with its texts and its Python exception types (IndexError, ValueError).
Tensor cross_entropy(const Tensor& logits, const Tensor& target) {
  check_floating(logits, "cross_entropy");
  check_defined(target, "cross_entropy", "target");
  // Unbatched, as 1.13 allows: logits (C) and a 0-dim target are a batch of one.
  if (logits.dim() == 1 && target.dim() == 0) return cross_entropy(unsqueeze(logits, 0), reshape(target, {1}));
  TINYDDP_CHECK(logits.dim() == 2, "cross_entropy: expected logits of shape (N, C), got ", shape_str(logits.shape()),
                ".");
  if (target.dtype() != DType::i64) {
    TINYDDP_CHECK(target.shape() != logits.shape(), "cross_entropy: a target of the logits' shape holds class "
                  "probabilities, which tinyddp's cross_entropy does not take; pass int64 class indices.");
    const char* found = target.dtype() == DType::f32 ? "Float" : target.dtype() == DType::f64 ? "Double" : "Bool";
    TINYDDP_CHECK(false, "expected scalar type Long but found ", found);
  }
  TINYDDP_CHECK_VALUE(target.dim() == 0 || target.shape()[0] == logits.shape()[0], "Expected input batch_size (",
                      logits.shape()[0], ") to match target batch_size (", target.shape()[0], ").");
  TINYDDP_CHECK(target.dim() == 1, "1D target tensor expected, multi-target not supported");
  const int64_t n = logits.shape()[0], c = logits.shape()[1];
  TINYDDP_CHECK(n > 0, "cross_entropy: the batch is empty.");
  // The bounds check reads the targets on the host: on a GPU that is a copy and a wait per loss (PyTorch
  // checks on the device instead and reports a device-side assert).
  const std::vector<int64_t> classes = target.to_vector<int64_t>();
  for (int64_t k : classes) TINYDDP_CHECK_INDEX(k >= 0 && k < c, "Target ", k, " is out of bounds.");
  const Tensor picked = log_softmax(logits, 1) * one_hot(target, c, logits.dtype());
  return mul(sum(picked), -1.0 / static_cast<double>(n));
}

}  // namespace tinyddp
