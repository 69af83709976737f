// Losses, composed of differentiable ops (so their higher-order gradients come for free).
#include "engine/ops/op_utils.h"
#include "kernels/cpu/cascade_sum.h"

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
  // mean((input - target)^2) as one node named as PyTorch's; its backward is that composition's, op for op
  // (mean's, pow's, sub's), so the gradients' bits are the composition's. It keeps input and target, as
  // PyTorch's does, and its backward is differentiable (create_graph).
  Tensor out;
  {
    NoGradGuard no_grad;
    out = mean((input - target).pow(2.0));
  }
  auto node = autograd::make_node("MseLossBackward0", {input, target}, [shape = input.shape()](const TensorList& g,
                                                                                             OpNode& n) {
    const double scale = 1.0 / static_cast<double>(numel_of(shape));
    const Tensor diff = n.saved(0) - n.saved(1);
    const Tensor grad_diff =
        expand(reshape(mul(g[0], scale), Shape(shape.size(), 1)), shape) * mul(pow(diff, 1.0), 2.0);
    return TensorList{n.needs_input_grad(0) ? grad_diff : Tensor(), n.needs_input_grad(1) ? neg(grad_diff) : Tensor()};
  });
  if (node) {
    node->save(input);
    node->save(target);
  }
  autograd::set_history(out, node);
  return out;
}

// -mean_n log_softmax(logits)[n, target[n]]: cross-entropy with class indices, mean over the batch, as
// PyTorch's graph: nll_loss over log_softmax (NllLossBackward0 over LogSoftmaxBackward0).
Tensor cross_entropy(const Tensor& logits, const Tensor& target) {
  check_floating(logits, "cross_entropy");
  check_defined(target, "cross_entropy", "target");
  // Unbatched, as 1.13 allows: logits (C) and a 0-dim target are a batch of one.
  if (logits.dim() == 1 && target.dim() == 0) return cross_entropy(unsqueeze(logits, 0), reshape(target, {1}));
  TINYDDP_CHECK(logits.dim() == 2, "cross_entropy: expected logits of shape (N, C), got ", shape_str(logits.shape()),
                ".");
  if (target.dtype() != DType::i64)
    TINYDDP_CHECK(target.shape() != logits.shape(), "cross_entropy: a target of the logits' shape holds class "
                  "probabilities, which tinyddp's cross_entropy does not take; pass int64 class indices.");
  return nll_loss(log_softmax(logits, 1), target);
}

namespace {

// 1.13's nll_loss_out_frame reduction (aten/src/ATen/native/LossNLL.cpp): each counted row's loss (its target's
// log-probability negated, times the target's class weight) and weight summed in 8 cascade levels of
// 2^max(4, ceil_log2(n) / 8) rows (row 0 is lifted a level at once, as there; an ignored row is skipped
// altogether), the levels then added from 0; a mean divides by the weights' sum, or by the count of rows
// counted when there are no weights. loss(b), weight(b), counted(b) describe row b of n.
template <typename T, typename Loss, typename Weight, typename Counted>
T aten_nll_reduce(int64_t n, Loss loss, Weight weight, Counted counted, bool weighted, bool mean) {
  constexpr int kLevels = 8;
  const int64_t level_power = std::max<int64_t>(4, kernels::cpu::cascade::ceil_log2(n) / kLevels);
  const int64_t level_mask = (int64_t(1) << level_power) - 1;
  T loss_partial[kLevels] = {};
  T weight_partial[kLevels] = {};
  int64_t ignored = 0;
  for (int64_t b = 0; b < n; ++b) {
    if (!counted(b)) {
      ++ignored;
      continue;
    }
    if (weighted) weight_partial[0] += weight(b);
    loss_partial[0] += loss(b);
    for (int j = 0; j + 1 < kLevels; ++j) {
      if ((b & (level_mask << (j * level_power))) != 0) break;
      weight_partial[j + 1] += weight_partial[j];
      loss_partial[j + 1] += loss_partial[j];
      weight_partial[j] = 0;
      loss_partial[j] = 0;
    }
  }
  T total = 0, total_weight = 0;
  for (int j = 0; j < kLevels; ++j) {
    total += loss_partial[j];
    total_weight += weight_partial[j];
  }
  if (!weighted) total_weight = static_cast<T>(n - ignored);
  return mean ? total / total_weight : total;
}

}  // namespace

// -mean_n log_probs[n, target[n]]. The checks are PyTorch 1.13's, with its texts and its Python exception types
// (IndexError, ValueError).
Tensor nll_loss(const Tensor& log_probs, const Tensor& target) {
  check_floating(log_probs, "nll_loss");
  check_defined(target, "nll_loss", "target");
  if (log_probs.dim() == 1 && target.dim() == 0) return nll_loss(unsqueeze(log_probs, 0), reshape(target, {1}));
  TINYDDP_CHECK(log_probs.dim() == 2, "nll_loss: expected input of shape (N, C), got ",
                shape_str(log_probs.shape()), ".");
  if (target.dtype() != DType::i64) {
    const char* found = target.dtype() == DType::f32 ? "Float" : target.dtype() == DType::f64 ? "Double" : "Bool";
    TINYDDP_CHECK(false, "expected scalar type Long but found ", found);
  }
  TINYDDP_CHECK_VALUE(target.dim() == 0 || target.shape()[0] == log_probs.shape()[0], "Expected input batch_size (",
                      log_probs.shape()[0], ") to match target batch_size (", target.shape()[0], ").");
  TINYDDP_CHECK(target.dim() == 1, "1D target tensor expected, multi-target not supported");
  const int64_t n = log_probs.shape()[0], c = log_probs.shape()[1];
  // an empty batch: the mean of no losses, 0 * (-1/0) = NaN, as 1.13's
  // The bounds check reads the targets on the host: on a GPU that is a copy and a wait per loss (PyTorch
  // checks on the device instead and reports a device-side assert).
  const std::vector<int64_t> classes = target.to_vector<int64_t>();
  for (int64_t k : classes) TINYDDP_CHECK_INDEX(k >= 0 && k < c, "Target ", k, " is out of bounds.");
  // The forward on the CPU is 1.13's (aten_nll_reduce); on a device, -1/n * sum(log_probs * one_hot). The
  // backward is 1.13's nll_loss_backward: -(g / n) at each row's target, 0 elsewhere.
  const Tensor picks = one_hot(target, c, log_probs.dtype());
  Tensor out;
  {
    NoGradGuard no_grad;
    if (log_probs.device().is_cpu()) {
      const Tensor lp = log_probs.contiguous();
      double value = 0;
      dispatch_floating(lp.dtype(), "nll_loss", [&]<typename T>() {
        const T* p = lp.data_ptr<T>();
        value = aten_nll_reduce<T>(
            n, [&](int64_t b) { return -p[b * c + classes[b]]; }, [](int64_t) { return T(1); },
            [](int64_t) { return true; }, /*weighted=*/false, /*mean=*/true);
      });
      out = scalar_tensor(value, log_probs.dtype(), log_probs.device());
    } else {
      out = mul(sum(log_probs * picks), -1.0 / static_cast<double>(n));
    }
  }
  auto node = autograd::make_node("NllLossBackward0", {log_probs}, [n](const TensorList& g, OpNode& node) {
    const Tensor& picks = node.saved(0);
    const Tensor per_row = neg(div(g[0], scalar_tensor(static_cast<double>(n), g[0].dtype(), g[0].device())));
    return TensorList{expand(reshape(per_row, {1, 1}), picks.shape()) * picks};
  });
  if (node) node->save(picks);
  autograd::set_history(out, node);
  return out;
}

// The value of nll_loss's 'sum' or 'mean' over rows already picked and weighted (row_losses, row_weights: (N),
// valid: (N) bool, false for an ignored row), added as 1.13 adds them (aten_nll_reduce). A 0-dim tensor without
// history: Python's composed nll_loss takes its value from here, its gradient from the composition.
Tensor nll_reduce(const Tensor& row_losses, const Tensor& row_weights, const Tensor& valid, bool weighted, bool mean) {
  TINYDDP_CHECK(row_losses.dim() == 1 && row_weights.shape() == row_losses.shape() &&
                    valid.shape() == row_losses.shape() && valid.dtype() == DType::b8,
                "nll_reduce: expects (N) losses and weights and an (N) bool mask.");
  const int64_t n = row_losses.shape()[0];
  const std::vector<bool> counted = [&] {
    std::vector<bool> out;
    for (int64_t v : valid.to(DType::i64).to_vector<int64_t>()) out.push_back(v != 0);
    return out;
  }();
  double value = 0;
  dispatch_floating(row_losses.dtype(), "nll_reduce", [&]<typename T>() {
    const std::vector<T> losses = row_losses.contiguous().to_vector<T>();
    const std::vector<T> weights = row_weights.to(row_losses.dtype()).contiguous().to_vector<T>();
    value = aten_nll_reduce<T>(
        n, [&](int64_t b) { return losses[b]; }, [&](int64_t b) { return weights[b]; },
        [&](int64_t b) { return static_cast<bool>(counted[b]); }, weighted, mean);
  });
  return scalar_tensor(value, row_losses.dtype(), row_losses.device());
}

}  // namespace tinyddp
