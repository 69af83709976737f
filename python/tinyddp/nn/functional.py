"""torch.nn.functional: the engine's activations and losses (engine/ops/ops.h), PyTorch's names and defaults."""
import math
import warnings

from tinyddp import _C, _tensor


def _check_reduction(reduction):
    if reduction != "mean":
        if reduction in ("sum", "none"):
            raise NotImplementedError(f"reduction='{reduction}': tinyddp's losses have the mean reduction only "
                                      "(PyTorch's default).")
        raise ValueError(f"{reduction} is not a valid value for reduction")


def linear(input, weight, bias=None):
    return _C._nn.linear(input, weight, bias)


def relu(input, inplace=False):
    if inplace:
        raise NotImplementedError("relu(inplace=True): tinyddp has no in-place relu.")
    return _C._nn.relu(input)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """x for x > 0, else negative_slope * x (the gradient there negative_slope, at 0 too, as PyTorch's): x times
    a 0/1 mask blended with the slope, so the values are PyTorch's bits; the graph is MulBackward0, not
    LeakyReluBackward0."""
    if inplace:
        raise NotImplementedError("leaky_relu(inplace=True): tinyddp has no in-place leaky_relu.")
    positive = (input > 0).to(input.dtype)
    return input * (positive + (1 - positive) * negative_slope)


def _check_gelu_approximate(approximate):
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")


def gelu(input, approximate="none"):
    """x/2 (1 + erf(x / sqrt 2)), or with approximate='tanh' x/2 (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))),
    composed of engine ops: the values within float rounding of PyTorch's fused kernel (whose vectorized erf is
    a polynomial of its own), the graph the composition's, not GeluBackward0."""
    _check_gelu_approximate(approximate)
    if approximate == "none":
        return input * 0.5 * ((input * 0.7071067811865476).erf() + 1)   # 1 / sqrt(2)
    inner = (input + input * input * input * 0.044715) * 0.7978845608028654   # sqrt(2 / pi)
    return input * 0.5 * (inner.tanh() + 1)


def tanh(input):
    return _C._nn.tanh(input)


def sigmoid(input):
    return _C._nn.sigmoid(input)


def _softmax_dim(name, ndim, stacklevel):
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X as "
                  "an argument.", stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _softmax_dim("log_softmax", input.dim(), _stacklevel)
    if dtype is not None:
        input = input.to(dtype)
    return _C._nn.log_softmax(input, dim)


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _softmax_dim("softmax", input.dim(), _stacklevel)
    if dtype is not None:
        input = input.to(dtype)
    return _C._nn.softmax(input, dim)


def dropout(input, p=0.5, training=True, inplace=False):
    """Zeroes each element with probability p and scales the others by 1/(1-p); the input itself in eval mode
    or for p=0, as PyTorch's. The mask is PyTorch's draw, element for element (bernoulli_(1 - p), then divided
    by 1 - p), so a seed drops the same elements; the graph is input * mask (MulBackward0, as PyTorch's)."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0 or input.numel() == 0:
        return input
    if not input.is_floating_point():
        name = {"int64": "Long", "bool": "Bool"}.get(str(input.dtype)[len("torch."):], str(input.dtype))
        raise RuntimeError(f"result type Float can't be cast to the desired output type {name}")
    if p == 1:   # every element drops; 1/(1-p) would make 0 * inf = nan
        mask = _tensor.zeros((), dtype=input.dtype)
    else:
        mask = _tensor.empty(input.shape, dtype=input.dtype).bernoulli_(1 - p) / (1 - p)
    return input.mul_(mask) if inplace else input * mask


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    _check_reduction(reduction)
    if target.shape != input.shape:
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input size ({input.shape}). "
                      "This will likely lead to incorrect results due to broadcasting. Please ensure they have the "
                      "same size.", stacklevel=2)
    return _C._nn.mse_loss(input, target)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean",
                  label_smoothing=0.0):
    _check_reduction(reduction)
    if weight is not None or label_smoothing != 0.0:
        raise NotImplementedError("cross_entropy: weight and label_smoothing are not supported by tinyddp.")
    return _C._nn.cross_entropy(input, target)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """mean(|input - target|), PyTorch's composition (its grad_fn is MeanBackward0 there too)."""
    _check_reduction(reduction)
    if target.shape != input.shape:
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input size ({input.shape}). "
                      "This will likely lead to incorrect results due to broadcasting. Please ensure they have the "
                      "same size.", stacklevel=2)
    return (input - target).abs().mean()


def _check_nll_options(weight, ignore_index):
    if weight is not None or ignore_index != -100:
        raise NotImplementedError("nll_loss: weight and ignore_index are not supported by tinyddp (a target of -100 "
                                  "is out of bounds there, not ignored).")


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    _check_reduction(reduction)
    _check_nll_options(weight, ignore_index)
    return _C._nn.nll_loss(input, target)


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    """PyTorch's native_batch_norm (engine/ops/normalization.cpp): the running stats are updated in place in
    training, without bumping their versions; NativeBatchNormBackward0 saves them (see BatchNorm1d)."""
    if training:
        size = input.size()
        values = size[0]
        for d in size[2:]:
            values *= d
        if values == 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input size {size}")
    return _C._nn.batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    return _C._nn.layer_norm(input, list(normalized_shape), weight, bias, eps)


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
              sparse=False):
    if padding_idx is not None or max_norm is not None or scale_grad_by_freq or sparse:
        raise NotImplementedError("embedding: padding_idx, max_norm, scale_grad_by_freq and sparse are not "
                                  "supported by tinyddp; use the defaults.")
    return _C._nn.embedding(weight, input)


def one_hot(tensor, num_classes=-1):
    """int64 rows with a 1 at each class index (num_classes=-1: the largest index plus one), as 1.13's."""
    if tensor.dtype is not _tensor.int64:
        raise RuntimeError("one_hot is only applicable to index tensor.")
    if num_classes == -1:
        num_classes = int(tensor.max().item()) + 1 if tensor.numel() else 0
    if tensor.numel() and int(tensor.min().item()) < 0:
        raise RuntimeError("Class values must be non-negative.")
    if tensor.numel() and int(tensor.max().item()) >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    return _C._one_hot(tensor, num_classes).long()


def _check_target_size(input, target):
    if target.shape != input.shape:
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input size "
                         f"({input.shape}) is deprecated. Please ensure they have the same size.")


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """-(y log(x) + (1 - y) log(1 - x)), reduced, each log clamped at -100 as 1.13's kernel clamps it."""
    _check_target_size(input, target)
    if weight is not None:
        raise NotImplementedError("binary_cross_entropy: weight is not supported by tinyddp.")
    log_x = input.log().clamp(min=-100)
    log_1mx = (1 - input).log().clamp(min=-100)
    return _reduce(-(target * log_x + (1 - target) * log_1mx), reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None, reduction="mean",
                                     pos_weight=None):
    """(1 - y) x + m + log(exp(-m) + exp(-x - m)), m = max(-x, 0), reduced: 1.13's stable formula, composed of
    engine ops (its gradient sigmoid(x) - y within float rounding; grad_fn MeanBackward0, PyTorch's
    BinaryCrossEntropyWithLogitsBackward0)."""
    _check_target_size(input, target)
    if weight is not None or pos_weight is not None:
        raise NotImplementedError("binary_cross_entropy_with_logits: weight and pos_weight are not supported by "
                                  "tinyddp.")
    m = (-input).clamp(min=0)
    return _reduce((1 - target) * input + m + ((-m).exp() + (-input - m).exp()).log(), reduction)


# ---- activations composed of engine ops ----
# The transcendental ones are computed in float64 for a float32 input and cast back, so each value is the
# correctly rounded one (1.13's kernels are within an ulp of it): the compositions' own roundings (1 + exp(x)
# for a tiny exp(x)) would otherwise show in printed values. A branch that where() does not pick gets a clamped
# input, so that its gradient stays finite (0, not inf * 0).

def _in_double(input, fn):
    return fn(input.double()).to(input.dtype) if input.dtype is _tensor.float32 else fn(input)


def _pick(condition, a, b):
    return _C.where(condition, a, b)


def silu(input, inplace=False):
    return _in_double(input, lambda x: x * x.sigmoid())


def elu(input, alpha=1.0, inplace=False):
    return _in_double(input, lambda x: _pick(x > 0, x, ((x.clamp(max=0)).exp() - 1) * alpha))


_SELU_ALPHA, _SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946


def selu(input, inplace=False):
    return _in_double(input, lambda x: _pick(x > 0, x, ((x.clamp(max=0)).exp() - 1) * _SELU_ALPHA) * _SELU_SCALE)


def softplus(input, beta=1, threshold=20):
    """log(1 + exp(beta x)) / beta, and x itself where beta x > threshold (1.13's linear region)."""
    def fn(x):
        bx = x * beta
        return _pick(bx > threshold, x, (bx.clamp(max=threshold).exp() + 1).log() / beta)
    return _in_double(input, fn)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """input limited to [min_val, max_val]; the gradient is 0 at the ends too, as 1.13's."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    low = _tensor.tensor(min_val, dtype=input.dtype)
    high = _tensor.tensor(max_val, dtype=input.dtype)
    return _pick(input <= min_val, low, _pick(input >= max_val, high, input))


def relu6(input, inplace=False):
    return hardtanh(input, 0.0, 6.0)


def mish(input, inplace=False):
    return _in_double(input, lambda x: x * softplus(x).tanh())


def logsigmoid(input):
    return -softplus(-input)


def softsign(input):
    return input / (input.abs() + 1)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _softmax_dim("softmin", input.dim(), _stacklevel)
    return softmax(-(input.to(dtype) if dtype is not None else input), dim)


# ---- losses composed of engine ops, with every reduction ----

def _reduce(loss, reduction):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ValueError(f"{reduction} is not a valid value for reduction")


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """0.5 d^2 / beta where d = |input - target| < beta, else d - 0.5 beta; beta = 0 is l1_loss."""
    if target.shape != input.shape:
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input size ({input.shape}). "
                      "This will likely lead to incorrect results due to broadcasting. Please ensure they have the "
                      "same size.", stacklevel=2)
    d = (input - target).abs()
    if beta == 0:
        return _reduce(d, reduction)
    return _reduce(_pick(d < beta, d * d * (0.5 / beta), d - 0.5 * beta), reduction)


def huber_loss(input, target, reduction="mean", delta=1.0):
    """0.5 d^2 where d = |input - target| < delta, else delta (d - 0.5 delta)."""
    if target.shape != input.shape:
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input size ({input.shape}). "
                      "This will likely lead to incorrect results due to broadcasting. Please ensure they have the "
                      "same size.", stacklevel=2)
    d = (input - target).abs()
    return _reduce(_pick(d < delta, d * d * 0.5, (d - 0.5 * delta) * delta), reduction)


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """target (log target - input) summed as reduction says (input holds log-probabilities); 0 where the
    target is 0. 'batchmean' divides the sum by the batch size; 'mean' warns as 1.13's."""
    if reduction == "mean":
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the support size."
                      "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                      "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
                      stacklevel=2)
    if log_target:
        loss = target.exp() * (target - input)
    else:
        positive = target > 0
        safe = _pick(positive, target, _tensor.ones([], dtype=target.dtype))
        loss = _pick(positive, target * (safe.log() - input), _tensor.zeros([], dtype=input.dtype) * input)
    if reduction == "batchmean":
        return loss.sum() / (input.shape[0] if input.dim() else 1)
    return _reduce(loss, reduction)


# ---- distances and padding ----

def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """input / max(||input||_p along dim, eps), p = 2 (the default) or 1."""
    if p == 2 or p == 2.0:
        norm = (input * input).sum(dim, True).clamp(min=eps * eps).sqrt()
    elif p == 1 or p == 1.0:
        norm = input.abs().sum(dim, True).clamp(min=eps)
    else:
        raise NotImplementedError(f"tinyddp: normalize with p={p!r}; p=2 and p=1 are supported")
    return input / norm


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """sum(x1 x2) / sqrt(max(sum(x1^2) sum(x2^2), eps^2)) along dim."""
    w12 = (x1 * x2).sum(dim)
    w1, w2 = (x1 * x1).sum(dim), (x2 * x2).sum(dim)
    return w12 / (w1 * w2).clamp(min=eps * eps).sqrt()


def pad(input, pad, mode="constant", value=None):
    """Constant padding: pad = (left, right) for the last dim, then (top, bottom) for the one before, ...;
    negative amounts crop. Other modes are not in tinyddp's subset."""
    if mode != "constant":
        raise NotImplementedError(f"tinyddp: pad mode '{mode}'; only mode='constant' is supported")
    if len(pad) % 2 != 0:
        raise ValueError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.dim():
        raise ValueError("Padding length too large")
    fill = 0 if value is None else value
    out = input
    for k in range(len(pad) // 2):
        dim = input.dim() - 1 - k
        for before, amount in ((True, pad[2 * k]), (False, pad[2 * k + 1])):
            size = out._shape()[dim]
            if amount < 0:
                out = out.narrow(dim, -amount, size + amount) if before else out.narrow(dim, 0, size + amount)
            elif amount > 0:
                shape = list(out._shape())
                shape[dim] = amount
                block = _tensor.full(shape, fill, dtype=out.dtype)
                out = _C.cat([block, out] if before else [out, block], dim)
    return out


# ---- convolution and pooling: windows gathered, then a matmul or a reduction ----
# Legend: N = batch, C = channels, (H, W) = the padded input's size, (kh, kw) = the kernel's, L = the output
# positions (Ho * Wo), K = kh * kw. Each output position's window is picked from the flattened (H * W) plane with
# the engine's row gather (embedding), so the backward is its scatter-add and the gradients are PyTorch's; the
# sums run in another order than 1.13's kernels, so values agree to float rounding.

_WINDOWS = {}   # (H, W, kh, kw, stride, dilation) -> the (K, L) int64 positions and (Ho, Wo)


def _windows(height, width, kernel, stride, dilation):
    key = (height, width, kernel, stride, dilation)
    if key not in _WINDOWS:
        (kh, kw), (sh, sw), (dh, dw) = kernel, stride, dilation
        out_h, out_w = (height - dh * (kh - 1) - 1) // sh + 1, (width - dw * (kw - 1) - 1) // sw + 1
        if out_h <= 0 or out_w <= 0:
            raise RuntimeError(f"Calculated output size: ({out_h}x{out_w}). Output size is too small")
        positions = [[(oy * sh + i * dh) * width + ox * sw + j * dw for oy in range(out_h) for ox in range(out_w)]
                     for i in range(kh) for j in range(kw)]
        _WINDOWS[key] = (_tensor.tensor(positions, dtype=_tensor.int64), (out_h, out_w))
    return _WINDOWS[key]


def _pair(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v, v)


def _unfold(input, kernel, stride, padding, dilation, fill=0.0):
    """(N, C, K, L) windows of a (N, C, H, W) input padded with `fill`, and the output size (Ho, Wo)."""
    from tinyddp._indexing import _take
    ph, pw = padding
    if ph or pw:
        input = pad(input, (pw, pw, ph, ph), value=fill)
    n, c, height, width = input.shape
    positions, out_size = _windows(height, width, kernel, stride, dilation)
    return _take(input.reshape([n, c, height * width]), 2, positions), out_size


def _batched(input, name):
    if input.dim() == 3:
        return input.unsqueeze(0), True
    if input.dim() != 4:
        raise RuntimeError(f"Expected 3D (unbatched) or 4D (batched) input to {name}, but got input of size: "
                           f"{list(input.shape)}")
    return input, False


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    if groups != 1:
        raise NotImplementedError("tinyddp: conv2d with groups != 1 is not supported")
    input, unbatched = _batched(input, "conv2d")
    out_channels, in_channels, kh, kw = weight.shape
    if input.shape[1] != in_channels:
        raise RuntimeError(f"Given groups=1, weight of size {list(weight.shape)}, expected input"
                           f"{list(input.shape)} to have {in_channels} channels, but got {input.shape[1]} channels "
                           "instead")
    cols, (out_h, out_w) = _unfold(input, (kh, kw), _pair(stride), _pair(padding), _pair(dilation))
    n = input.shape[0]
    cols = cols.reshape([n, in_channels * kh * kw, out_h * out_w])              # (N, C K, L)
    out = weight.reshape([out_channels, in_channels * kh * kw]).matmul(cols)   # (N, O, L)
    if bias is not None:
        out = out + bias.reshape([1, out_channels, 1])
    out = out.reshape([n, out_channels, out_h, out_w])
    return out.squeeze(0) if unbatched else out


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    if ceil_mode or return_indices:
        raise NotImplementedError("tinyddp: max_pool2d without ceil_mode and return_indices only")
    input, unbatched = _batched(input, "max_pool2d")
    kernel = _pair(kernel_size)
    windows, (out_h, out_w) = _unfold(input, kernel, _pair(stride if stride is not None else kernel_size),
                                      _pair(padding), _pair(dilation), fill=-math.inf)
    n, c = input.shape[:2]
    out = windows.max(2)[0].reshape([n, c, out_h, out_w])
    return out.squeeze(0) if unbatched else out


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    if ceil_mode or divisor_override is not None or not count_include_pad:
        raise NotImplementedError("tinyddp: avg_pool2d without ceil_mode, divisor_override and "
                                  "count_include_pad=False only")
    input, unbatched = _batched(input, "avg_pool2d")
    kernel = _pair(kernel_size)
    windows, (out_h, out_w) = _unfold(input, kernel, _pair(stride if stride is not None else kernel_size),
                                      _pair(padding), (1, 1))
    n, c = input.shape[:2]
    out = windows.mean(2).reshape([n, c, out_h, out_w])
    return out.squeeze(0) if unbatched else out
