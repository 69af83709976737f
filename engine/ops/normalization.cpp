// Normalization layers' ops: batch_norm (PyTorch's native_batch_norm) and layer_norm (native_layer_norm).
//
// Legend: N = batch, C = channels (dim 1), L = the product of the dims after the channels (1 for a 2-D input);
// for layer_norm, D = the product of the normalized (trailing) dims and M = the product of the leading ones.
//
// Each is one node named as PyTorch's (NativeBatchNormBackward0, NativeLayerNormBackward0). The forward is a
// composition of engine ops run without recording; the backward rule is written with engine ops too, so it
// can be differentiated again (create_graph). Both share one rule for the normalized part:
//
//   xhat = (x - mean) * invstd, y = xhat * w + b, mean and invstd over the reduced dims R (n elements each):
//   dL/dx = invstd * (gx - mean_R(gx) - xhat * mean_R(gx * xhat)),  gx = g * w
//   dL/dw = sum_R'(g * xhat),  dL/db = sum_R'(g)     (R' = the dims w does not cover)
//
// Note [Recomputing the statistics in a differentiable backward]: the saved mean and invstd are constants of the
// graph; the first-order gradient is the same with them, but a second derivative must see mean and invstd as
// functions of x. So under create_graph (grad mode on while the rule runs) the rule recomputes them from the
// saved input with the forward's ops (the same values, bit for bit), and reads the saved ones otherwise.
#include <sstream>

#include "engine/ops/op_utils.h"

namespace tinyddp {

using namespace detail;

namespace {

// mean and invstd = 1 / sqrt(biased var + eps) over `dims` (keepdim), as the forward computes them.
struct Stats {
  Tensor mean, invstd, var;   // var: biased, for the running-variance update
};

// 1 / sqrt(var + eps). With eps = 0, 1.13's batch-norm training kernel defines it as 0 where the batch variance
// is 0 (a constant channel normalizes to 0, not to 0 * inf = NaN): var == 0 takes 0 / sqrt(1) there. Its
// evaluation with a zero running variance and eps = 0 gives NaN, the plain formula.
Tensor inv_std(const Tensor& var, double eps, bool zero_for_zero_var) {
  if (eps != 0.0 || !zero_for_zero_var) return 1.0 / sqrt(var + eps);
  const Tensor nonzero = 1.0 - eq_mask(var, zeros_like(var));
  return nonzero / sqrt(var + (1.0 - nonzero));
}

Stats stats_over(const Tensor& x, const std::vector<int64_t>& dims, double eps, bool zero_for_zero_var = false) {
  Stats s;
  s.mean = mean(x, dims, /*keepdim=*/true);
  const Tensor centered = x - s.mean;
  s.var = mean(centered * centered, dims, /*keepdim=*/true);
  s.invstd = inv_std(s.var, eps, zero_for_zero_var);
  return s;
}

// dL/dx of y = xhat * w (+ b) given gx = g * w (see the file comment), reducing over `dims`.
Tensor normalized_input_grad(const Tensor& gx, const Tensor& xhat, const Tensor& invstd,
                             const std::vector<int64_t>& dims) {
  return invstd * (gx - mean(gx, dims, true) - xhat * mean(gx * xhat, dims, true));
}

// PyTorch's name of a dtype in "expected scalar type Float but found Double".
const char* scalar_name(DType t) {
  return t == DType::f32 ? "Float" : t == DType::f64 ? "Double" : t == DType::i64 ? "Long" : "Bool";
}

// PyTorch's "<name> should contain C elements not n" for a per-channel tensor.
void check_per_channel(const Tensor& t, const char* name, const Tensor& input, int64_t c) {
  if (!t.defined()) return;
  TINYDDP_CHECK(t.numel() == c, name, " should contain ", c, " elements not ", t.numel());
  check_same_dtype(input, t, "batch_norm");
  check_same_device(input, t, "batch_norm");
}

// running = running * (1 - momentum) + value * momentum, written into running's storage without a version bump:
// 1.13's native_batch_norm updates the running stats in its kernel, and their versions stay as they were
// (bn.running_mean._version is the same before and after a training forward), so only DDP's broadcast, or the
// user's own in-place ops, make a saved running stat stale.
void update_running(const Tensor& running, const Tensor& value, double momentum) {
  TINYDDP_CHECK(running.is_contiguous(), "batch_norm: the running statistics must be contiguous.");
  const Tensor updated = (reshape(running.detach(), {running.numel()}) * (1.0 - momentum) +
                          reshape(value, {running.numel()}) * momentum).contiguous();
  backend::copy_bytes(running.raw_data(), running.device(), updated.raw_data(), updated.device(),
                      static_cast<size_t>(updated.numel()) * element_size(updated.dtype()));
}

}  // namespace

// input (N, C, *); weight, bias, running_mean, running_var (C) or undefined. Training normalizes with the
// batch's statistics over every dim but 1 and, when running stats are given, blends them in with `momentum`
// (the variance unbiased, n / (n - 1), as PyTorch's); evaluation normalizes with the running stats.
Tensor batch_norm(const Tensor& input, const Tensor& weight, const Tensor& bias, const Tensor& running_mean,
                  const Tensor& running_var, bool training, double momentum, double eps) {
  check_defined(input, "batch_norm");
  TINYDDP_CHECK(is_floating(input.dtype()), "\"batch_norm\" not implemented for '",
                input.dtype() == DType::i64 ? "Long" : "Bool", "'");
  // 1.13 reads input.size(1) first: its IndexError for a 1-D input.
  TINYDDP_CHECK_INDEX(input.dim() != 1, "Dimension out of range (expected to be in range of [-1, 0], but got 1)");
  TINYDDP_CHECK(input.dim() >= 2, "batch_norm: expected an input of shape (N, C, *) with at least 2 dims, got ",
                shape_str(input.shape()), ".");
  const int64_t c = input.shape()[1];
  // 1.13's order: the running stats (each must be defined in evaluation), then weight and bias.
  check_per_channel(running_mean, "running_mean", input, c);
  TINYDDP_CHECK(training || running_mean.defined(), "running_mean must be defined in evaluation mode");
  check_per_channel(running_var, "running_var", input, c);
  TINYDDP_CHECK(training || running_var.defined(), "running_var must be defined in evaluation mode");
  check_per_channel(weight, "weight", input, c);
  check_per_channel(bias, "bias", input, c);
  TINYDDP_CHECK(running_mean.defined() == running_var.defined(), "batch_norm: running_mean and running_var must "
                "both be given or both be None.");
  if (input.numel() == 0) {
    // 1.13's empty batch: a copy of the input times weight[0] plus bias[0] (CloneBackward0, MulBackward0,
    // AddBackward0 nodes, so the graph stays connected), the running stats untouched.
    TINYDDP_CHECK_INDEX(c > 0 || (!weight.defined() && !bias.defined()),
                        "select(): index 0 out of range for tensor of size [0] at dimension 0");
    Tensor out = clone(input);
    if (weight.defined()) out = out * narrow(weight, 0, 0, 1);
    if (bias.defined()) out = out + narrow(bias, 0, 0, 1);
    return out;
  }
  const int64_t n = input.numel() / c;   // elements per channel (c > 0: the input is not empty)
  std::vector<int64_t> dims{0};
  for (int64_t d = 2; d < input.dim(); ++d) dims.push_back(d);
  Shape per_channel(input.dim(), 1);   // (1, C, 1, ...): a (C) tensor broadcast over the input
  per_channel[1] = c;
  if (training) {
    std::ostringstream size;
    size << "torch.Size([";
    for (int64_t d = 0; d < input.dim(); ++d) size << (d ? ", " : "") << input.shape()[d];
    TINYDDP_CHECK_VALUE(n != 1, "Expected more than 1 value per channel when training, got input size ", size.str(),
                        "])");
  }

  Tensor out, save_mean, save_invstd;
  {
    NoGradGuard no_grad;
    const Tensor x = input.detach();
    Tensor mean_b, invstd_b;   // (1, C, 1, ...)
    if (training) {
      const Stats s = stats_over(x, dims, eps, /*zero_for_zero_var=*/true);
      mean_b = s.mean, invstd_b = s.invstd;
      save_mean = reshape(s.mean, {c}), save_invstd = reshape(s.invstd, {c});
      if (running_mean.defined()) {
        update_running(running_mean, s.mean, momentum);
        update_running(running_var, s.var * (static_cast<double>(n) / static_cast<double>(n - 1)), momentum);
      }
    } else {
      mean_b = reshape(running_mean.detach(), per_channel);
      invstd_b = inv_std(reshape(running_var.detach(), per_channel), eps, false);   // inf for var = eps = 0
      // 1.13's CPU kernel returns empty statistics in evaluation.
      save_mean = empty({0}, input.dtype(), input.device()), save_invstd = empty({0}, input.dtype(), input.device());
    }
    // 1.13's CPU kernel's expression, out = x * alpha + beta with alpha = invstd * w and beta = b - mean * alpha
    // (so a zero running variance with eps = 0 gives its NaN). The statistics are taken in the input's dtype,
    // where 1.13 accumulates float in double: float32 values agree to a few ulps, not bit for bit.
    Tensor alpha = invstd_b;
    if (weight.defined()) alpha = alpha * reshape(weight.detach(), per_channel);
    Tensor beta = neg(mean_b * alpha);
    if (bias.defined()) beta = reshape(bias.detach(), per_channel) - mean_b * alpha;
    out = x * alpha + beta;
  }

  // Saved as 1.13's NativeBatchNormBackward0: input, weight, running_mean, running_var, save_mean, save_invstd
  // (the running stats in training too, which is why DDP's buffer broadcast between two forwards and one
  // backward raises "modified by an inplace operation").
  auto node = autograd::make_node(
      "NativeBatchNormBackward0", {input, weight, bias},
      [training, eps, dims, per_channel, c](const TensorList& g, OpNode& node) {
        const Tensor& x = node.saved(0);
        const Tensor& w = node.saved(1);
        Tensor mean_b, invstd_b;
        if (!training) {
          mean_b = reshape(node.saved(2), per_channel);
          invstd_b = inv_std(reshape(node.saved(3), per_channel), eps, false);
        } else if (GradMode::is_enabled()) {   // Note [Recomputing the statistics in a differentiable backward]
          const Stats s = stats_over(x, dims, eps, /*zero_for_zero_var=*/true);
          mean_b = s.mean, invstd_b = s.invstd;
        } else {
          mean_b = reshape(node.saved(4), per_channel), invstd_b = reshape(node.saved(5), per_channel);
        }
        const Tensor xhat = (x - mean_b) * invstd_b;
        Tensor grad_input, grad_weight, grad_bias;
        if (node.needs_input_grad(0)) {
          const Tensor gx = w.defined() ? g[0] * reshape(w, per_channel) : g[0];
          // In evaluation the statistics are constants: dL/dx = g * w * invstd.
          grad_input = training ? normalized_input_grad(gx, xhat, invstd_b, dims) : gx * invstd_b;
        }
        if (node.needs_input_grad(1)) grad_weight = reshape(sum(g[0] * xhat, dims), {c});
        if (node.needs_input_grad(2)) grad_bias = reshape(sum(g[0], dims), {c});
        return TensorList{grad_input, grad_weight, grad_bias};
      });
  if (node) {
    node->save(input);
    node->save(weight);
    node->save(running_mean);
    node->save(running_var);
    node->save(save_mean);
    node->save(save_invstd);
  }
  autograd::set_history(out, node);
  return out;
}

// input (*, normalized_shape); weight and bias of normalized_shape, or undefined. Each row of D trailing
// elements is normalized with its own mean and biased variance.
Tensor layer_norm(const Tensor& input, const Shape& normalized_shape, const Tensor& weight, const Tensor& bias,
                  double eps) {
  check_defined(input, "layer_norm");
  TINYDDP_CHECK(is_floating(input.dtype()), "\"LayerNormKernelImpl\" not implemented for '",
                input.dtype() == DType::i64 ? "Long" : "Bool", "'");
  const int64_t k = static_cast<int64_t>(normalized_shape.size());
  TINYDDP_CHECK(k >= 1, "Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one "
                "element, but got normalized_shape = ", shape_str(normalized_shape));
  for (const Tensor* t : {&weight, &bias}) {
    if (!t->defined()) continue;
    TINYDDP_CHECK(t->shape() == normalized_shape, "Expected ", t == &weight ? "weight" : "bias",
                  " to be of same shape as normalized_shape, but got ", t == &weight ? "weight" : "bias",
                  " of shape ", shape_str(t->shape()), " and normalized_shape = ", shape_str(normalized_shape));
    TINYDDP_CHECK(t->dtype() == input.dtype(), "expected scalar type ", scalar_name(input.dtype()), " but found ",
                  scalar_name(t->dtype()));
    check_same_device(input, *t, "layer_norm");
  }
  bool fits = input.dim() >= k;
  for (int64_t i = 0; fits && i < k; ++i) fits = input.shape()[input.dim() - k + i] == normalized_shape[i];
  if (!fits) {
    std::ostringstream expected;
    expected << "[*";
    for (int64_t d : normalized_shape) expected << ", " << d;
    TINYDDP_CHECK(false, "Given normalized_shape=", shape_str(normalized_shape), ", expected input with shape ",
                  expected.str(), "], but got input of size", shape_str(input.shape()));
  }
  std::vector<int64_t> dims, lead;   // the normalized dims, and the ones weight's gradient sums over
  for (int64_t d = 0; d < input.dim(); ++d) (d >= input.dim() - k ? dims : lead).push_back(d);

  Tensor out, save_mean, save_rstd;
  {
    NoGradGuard no_grad;
    const Tensor x = input.detach();
    const Stats s = stats_over(x, dims, eps);
    save_mean = s.mean, save_rstd = s.invstd;   // (*, 1, ..., 1), as 1.13's
    out = (x - s.mean) * s.invstd;
    if (weight.defined()) out = out * weight.detach();
    if (bias.defined()) out = out + bias.detach();
  }

  // Saved as 1.13's NativeLayerNormBackward0: input, weight, bias, mean, rstd.
  auto node = autograd::make_node(
      "NativeLayerNormBackward0", {input, weight, bias},
      [eps, dims, lead, normalized_shape](const TensorList& g, OpNode& node) {
        const Tensor& x = node.saved(0);
        const Tensor& w = node.saved(1);
        Tensor mean_b, rstd_b;
        if (GradMode::is_enabled()) {   // Note [Recomputing the statistics in a differentiable backward]
          const Stats s = stats_over(x, dims, eps);
          mean_b = s.mean, rstd_b = s.invstd;
        } else {
          mean_b = node.saved(3), rstd_b = node.saved(4);
        }
        const Tensor xhat = (x - mean_b) * rstd_b;
        Tensor grad_input, grad_weight, grad_bias;
        if (node.needs_input_grad(0))
          grad_input = normalized_input_grad(w.defined() ? g[0] * w : g[0], xhat, rstd_b, dims);
        auto over_lead = [&](const Tensor& t) { return lead.empty() ? t : reshape(sum(t, lead), normalized_shape); };
        if (node.needs_input_grad(1)) grad_weight = over_lead(g[0] * xhat);
        if (node.needs_input_grad(2)) grad_bias = over_lead(g[0]);
        return TensorList{grad_input, grad_weight, grad_bias};
      });
  if (node) {
    node->save(input);
    node->save(weight);
    node->save(bias);
    node->save(save_mean);
    node->save(save_rstd);
  }
  autograd::set_history(out, node);
  return out;
}

}  // namespace tinyddp
