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

// -mean_n log_softmax(logits)[n, target[n]]: cross-entropy with class indices, mean over the batch.
Tensor cross_entropy(const Tensor& logits, const Tensor& target) {
  check_floating(logits, "cross_entropy");
  check_defined(target, "cross_entropy", "target");
  TINYDDP_CHECK(logits.dim() == 2, "cross_entropy: expected logits of shape (N, C), got ", shape_str(logits.shape()),
                ".");
  TINYDDP_CHECK(target.dtype() == DType::i64, "cross_entropy: expected int64 class indices as target, got ",
                dtype_name(target.dtype()), " ", shape_str(target.shape()),
                ". For probabilities or regression targets use another loss.");
  TINYDDP_CHECK(target.dim() == 1 && target.shape()[0] == logits.shape()[0], "cross_entropy: logits have shape ",
                shape_str(logits.shape()), " so target must have shape [", logits.shape()[0], "], but it has shape ",
                shape_str(target.shape()), ".");
  const int64_t n = logits.shape()[0], c = logits.shape()[1];
  TINYDDP_CHECK(n > 0, "cross_entropy: the batch is empty.");
  // The bounds check reads the targets on the host: on a GPU that is a copy and a wait per loss (PyTorch
  // checks on the device instead and reports a device-side assert).
  const std::vector<int64_t> classes = target.to_vector<int64_t>();
  for (size_t i = 0; i < classes.size(); ++i)
    TINYDDP_CHECK(classes[i] >= 0 && classes[i] < c, "cross_entropy: target[", i, "] = ", classes[i],
                  " is out of bounds for logits of shape ", shape_str(logits.shape()), " (expected 0 <= target < ",
                  c, ").");
  const Tensor picked = log_softmax(logits, 1) * one_hot(target, c, logits.dtype());
  return mul(sum(picked), -1.0 / static_cast<double>(n));
}

}  // namespace tinyddp
