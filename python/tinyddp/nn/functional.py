"""torch.nn.functional: the engine's activations and losses (engine/ops/ops.h), PyTorch's names and defaults."""
import functools
import math
import warnings

from tinyddp import _C, _tensor


def linear(input, weight, bias=None):
    return _C._nn.linear(input, weight, bias)


def relu(input, inplace=False):
    return _C._nn.relu(input)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """x for x > 0, else negative_slope * x (the gradient there negative_slope, at 0 too, as PyTorch's): x times
    a 0/1 mask blended with the slope, so the values are PyTorch's bits; the graph is MulBackward0, not
    LeakyReluBackward0."""
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


def _legacy_reduction(size_average, reduce, reduction, stacklevel=3):
    """1.13's reading of the deprecated size_average and reduce (either set overrides reduction), with its
    warning."""
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    out = ("mean" if size_average else "sum") if reduce else "none"
    warnings.warn(f"size_average and reduce args will be deprecated, please use reduction='{out}' instead.",
                  stacklevel=stacklevel)
    return out


def _warn_target_size(input, target):
    if target.shape != input.shape:
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input size ({input.shape}). "
                      "This will likely lead to incorrect results due to broadcasting. Please ensure they have the "
                      "same size.", stacklevel=3)


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """mean((input - target)^2) by the engine's kernel; 'sum' and 'none' composed of engine ops."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _warn_target_size(input, target)
    if reduction == "mean":
        return _C._nn.mse_loss(input, target)
    d = input - target
    return _reduce(d * d, reduction)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """|input - target| reduced, PyTorch's composition (its grad_fn is MeanBackward0 there too)."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _warn_target_size(input, target)
    return _reduce((input - target).abs(), reduction)


def _class_weights(weight, target, valid, dtype):
    """Each target's class weight (1 without `weight`), 0 where the target is ignored."""
    if weight is None:
        return valid.to(dtype)
    picked = weight.index_select(0, _pick(valid, target, target * 0).reshape([-1])).reshape(list(target.shape))
    return _pick(valid, picked, picked * 0)


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    """-input[n, target[n]] weighted by the target's class weight; 'mean' divides by the sum of the weights of the
    targets not ignored. The plain mean over (N, C) input is the engine's kernel; the rest composed of engine ops
    (a gather over the class dim, 1 for (C,) input)."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if weight is None and reduction == "mean" and input.dim() == 2 and not bool((target == ignore_index).any()):
        return _C._nn.nll_loss(input, target)
    unbatched = input.dim() == 1
    if unbatched:
        input, target = input.unsqueeze(0), target.unsqueeze(0)
    valid = target != ignore_index
    safe = _pick(valid, target, target * 0)
    picked = -input.gather(1, safe.unsqueeze(1)).squeeze(1)
    w = _class_weights(weight, target, valid, input.dtype)
    loss = picked * w
    if reduction == "none":
        return loss.squeeze(0) if unbatched else loss
    if reduction == "sum":
        return loss.sum()
    return loss.sum() / w.sum()


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean",
                  label_smoothing=0.0):
    """nll_loss(log_softmax(input, 1), target) for class indices; for class probabilities (a float target of
    input's shape) -sum(target * weight * log_softmax(input)) over the classes. label_smoothing mixes in the
    uniform distribution as 1.13 does. The plain mean over (N, C) is the engine's fused kernel."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    probabilities = target.is_floating_point() and target.shape == input.shape
    if target.is_floating_point() and not probabilities:
        return _C._nn.cross_entropy(input, target)   # 1.13 reads it as class indices, and refuses their dtype
    if (not probabilities and weight is None and label_smoothing == 0.0 and reduction == "mean"
            and input.dim() == 2 and not bool((target == ignore_index).any())):
        return _C._nn.cross_entropy(input, target)
    dim = 0 if input.dim() == 1 else 1
    logp = log_softmax(input, dim)
    classes = input.shape[dim]
    w_shape = [classes] if dim == 0 else [1, classes] + [1] * (input.dim() - 2)
    if probabilities:
        if label_smoothing > 0:
            target = target * (1 - label_smoothing) + label_smoothing / classes
        terms = logp * target
        if weight is not None:
            terms = terms * weight.reshape(w_shape)
        loss = -terms.sum(dim)
        if reduction == "mean":
            return loss.sum() / (input.numel() // classes) if input.dim() > 0 else loss
        return _reduce(loss, reduction)
    nll = nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)
    if label_smoothing == 0.0:
        return nll
    valid = target != ignore_index
    terms = logp if weight is None else logp * weight.reshape(w_shape)
    smooth = -terms.sum(dim)
    smooth = _pick(valid, smooth, smooth * 0)
    if reduction == "none":
        smooth_reduced = smooth
    elif reduction == "sum":
        smooth_reduced = smooth.sum()
    else:
        denominator = _class_weights(weight, target, valid, input.dtype).sum()
        smooth_reduced = smooth.sum() / denominator
    return nll * (1 - label_smoothing) + smooth_reduced * (label_smoothing / classes)


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
    """weight's rows picked by input. padding_idx's row gets no gradient; max_norm first rescales (in place, as
    1.13's embedding_renorm_) each referenced row whose norm exceeds it to max_norm / (norm + 1e-7) times itself;
    scale_grad_by_freq divides each row's gradient by its count in input."""
    if sparse:
        raise NotImplementedError("embedding(sparse=True): tinyddp has no sparse gradients; use sparse=False.")
    if padding_idx is not None:
        if padding_idx > 0:
            assert padding_idx < weight.size(0), "Padding_idx must be within num_embeddings"
        elif padding_idx < 0:
            assert padding_idx >= -weight.size(0), "Padding_idx must be within num_embeddings"
            padding_idx = weight.size(0) + padding_idx
    if max_norm is not None:
        from tinyddp.autograd.grad_mode import no_grad
        with no_grad():
            rows = weight.shape[0]
            referenced = one_hot(input.reshape([-1]), rows).sum(0) > 0
            norms = weight.detach().norm(norm_type, 1)
            scale = _pick(referenced.logical_and(norms > max_norm), max_norm / (norms + 1e-7), norms * 0 + 1)
            weight.mul_(scale.unsqueeze(1))
    out = _C._nn.embedding(weight, input)
    if padding_idx is not None:
        out = _pick((input == padding_idx).unsqueeze(-1), out.detach(), out)
    if scale_grad_by_freq:
        flat = input.reshape([-1])
        counts = one_hot(flat, weight.shape[0]).sum(0).index_select(0, flat).reshape(list(input.shape) + [1])
        frozen = out.detach()
        out = frozen + (out - frozen) / counts.to(out.dtype)   # the values exactly out's, the gradient / count
    return out


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
    """pad = (left, right) for the last dim, then (top, bottom) for the one before, ...; negative amounts crop.
    mode 'constant' fills with value, 'reflect', 'replicate' and 'circular' take the input's own elements."""
    if len(pad) % 2 != 0:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.dim():
        raise RuntimeError("Padding length too large")
    if mode != "constant":
        if mode not in ("reflect", "replicate", "circular"):
            raise NotImplementedError(f"Unrecognised padding mode {mode}")
        if value is not None and value != 0:
            raise AssertionError('Padding mode "{}"" doesn\'t take in value argument'.format(mode))
        return _pad_by_index(input, pad, mode)
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


def _conv2d(input, weight, bias, stride, padding, dilation):
    """One group's convolution (stride, padding and dilation pairs)."""
    input, unbatched = _batched(input, "conv2d")
    out_channels, in_channels, kh, kw = weight.shape
    if input.shape[1] != in_channels:
        raise RuntimeError(f"Given groups=1, weight of size {list(weight.shape)}, expected input"
                           f"{list(input.shape)} to have {in_channels} channels, but got {input.shape[1]} channels "
                           "instead")
    cols, (out_h, out_w) = _unfold(input, (kh, kw), stride, padding, dilation)
    n = input.shape[0]
    cols = cols.reshape([n, in_channels * kh * kw, out_h * out_w])              # (N, C K, L)
    out = weight.reshape([out_channels, in_channels * kh * kw]).matmul(cols)   # (N, O, L)
    if bias is not None:
        out = out + bias.reshape([1, out_channels, 1])
    out = out.reshape([n, out_channels, out_h, out_w])
    return out.squeeze(0) if unbatched else out


def _pool_geometry(input, kernel_size, stride, padding, dilation, ceil_mode, name):
    """Kernel, stride, padding, dilation pairs, the output size and the extra bottom/right padding ceil_mode's
    last window needs (1.13's pooling_output_shape: a last window must start inside the input or its left
    padding)."""
    kernel = _pair(kernel_size)
    stride = _pair(stride if stride is not None and stride != [] else kernel_size)
    padding, dilation = _pair(padding), _pair(dilation)
    for p, k in zip(padding, kernel):
        if p > k // 2:
            raise RuntimeError(f"pad should be at most half of kernel size, but got pad={p} and kernel_size={k}")
    sizes, extra = [], []
    for size, k, s_, p, d in zip(input.shape[-2:], kernel, stride, padding, dilation):
        out = (size + 2 * p - d * (k - 1) - 1 + (s_ - 1 if ceil_mode else 0)) // s_ + 1
        if ceil_mode and (out - 1) * s_ >= size + p:
            out -= 1
        if out <= 0:
            raise RuntimeError(f"Given input size: ({'x'.join(str(v) for v in input.shape[-3:])}). Calculated output "
                               f"size: ({input.shape[-3]}x{'x'.join(str(v) for v in sizes + [out])}). Output size is "
                               "too small")
        sizes.append(out)
        extra.append(max((out - 1) * s_ + d * (k - 1) + 1 - (size + 2 * p), 0))
    return kernel, stride, padding, dilation, sizes, extra


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """The max of each window (padding never wins: it is -inf); with return_indices, also each max's position in
    its (H * W) input plane (the first of equal maxima in the window's row-major order)."""
    input, unbatched = _batched(input, "max_pool2d")
    kernel, stride, (ph, pw), dilation, (out_h, out_w), (eh, ew) = _pool_geometry(
        input, kernel_size, stride, padding, dilation, ceil_mode, "max_pool2d")
    n, c, height, width = input.shape
    padded = pad(input, (pw, pw + ew, ph, ph + eh), value=-math.inf) if (ph or pw or eh or ew) else input
    windows, _ = _unfold(padded, kernel, stride, (0, 0), dilation)
    values, which = windows.max(2)
    out = values.reshape([n, c, out_h, out_w])
    if not return_indices:
        return out.squeeze(0) if unbatched else out
    positions, _ = _windows(height + 2 * ph + eh, width + 2 * pw + ew, kernel, stride, dilation)   # (K, L)
    k, positions_l = positions.shape
    picked = positions.reshape([1, 1, k, positions_l]).expand([n, c, k, positions_l]).gather(2, which.unsqueeze(2))
    picked = picked.squeeze(2)
    padded_width = width + 2 * pw + ew
    rows, cols = picked.div(padded_width, rounding_mode="floor") - ph, picked.remainder(padded_width) - pw
    indices = (rows * width + cols).reshape([n, c, out_h, out_w])
    return (out.squeeze(0), indices.squeeze(0)) if unbatched else (out, indices)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """Each window's sum over its divisor: divisor_override, else the window's elements inside the padded input
    (count_include_pad) or inside the input itself; ceil_mode's overhang never counts."""
    input, unbatched = _batched(input, "avg_pool2d")
    kernel, stride, (ph, pw), _, (out_h, out_w), (eh, ew) = _pool_geometry(
        input, kernel_size, stride, padding, 1, ceil_mode, "avg_pool2d")
    n, c, height, width = input.shape
    padded = pad(input, (pw, pw + ew, ph, ph + eh)) if (ph or pw or eh or ew) else input
    windows, _ = _unfold(padded, kernel, stride, (0, 0), (1, 1))
    if divisor_override is None and (count_include_pad or not (ph or pw)) and not (eh or ew):
        out = windows.mean(2)
    else:
        if divisor_override is not None:
            divisor = float(divisor_override)
        else:
            inside = _tensor.ones(1, 1, height + 2 * ph, width + 2 * pw, dtype=input.dtype) if count_include_pad \
                else pad(_tensor.ones(1, 1, height, width, dtype=input.dtype), (pw, pw, ph, ph))
            inside = pad(inside, (0, ew, 0, eh))
            divisor = _unfold(inside, kernel, stride, (0, 0), (1, 1))[0].sum(2)
        out = windows.sum(2) / divisor
    out = out.reshape([n, c, out_h, out_w])
    return out.squeeze(0) if unbatched else out


def _ntuple(v, n):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * n


def _same_padding(kernel, dilation):
    """padding='same' as 1.13 pads: d (k - 1) in all, the odd element on the right/bottom, as F.pad's list."""
    out = []
    for k, d in zip(reversed(kernel), reversed(dilation)):
        total = d * (k - 1)
        out += [total // 2, total - total // 2]
    return out


def _conv_padding(padding, kernel, stride, dilation, n):
    """The symmetric padding of a convolution and an extra F.pad list (for 'same'), from an int, tuple or string."""
    if isinstance(padding, str):
        if padding == "valid":
            return (0,) * n, None
        if padding != "same":
            raise ValueError(f"Invalid padding string '{padding}', should be one of ('valid', 'same')")
        if any(s != 1 for s in stride):
            raise RuntimeError("padding='same' is not supported for strided convolutions")
        return (0,) * n, _same_padding(kernel, dilation)
    return _ntuple(padding, n), None


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """Cross-correlation of a (N, C, H, W) or (C, H, W) input with a (O, C / groups, kh, kw) weight; groups run as
    separate convolutions over their channel slices, concatenated."""
    stride, dilation = _pair(stride), _pair(dilation)
    padding, extra = _conv_padding(padding, tuple(weight.shape[2:]), stride, dilation, 2)
    if extra is not None:
        input = pad(input, extra)
    if groups == 1:
        return _conv2d(input, weight, bias, stride, padding, dilation)
    batched, unbatched = _batched(input, "conv2d")
    out_channels, in_per_group = weight.shape[:2]
    if batched.shape[1] != in_per_group * groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {list(weight.shape)}, expected input"
                           f"{list(batched.shape)} to have {in_per_group * groups} channels, but got "
                           f"{batched.shape[1]} channels instead")
    if out_channels % groups != 0:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, but "
                           f"got weight of size {list(weight.shape)} instead")
    per_out = out_channels // groups
    outs = [_conv2d(batched.narrow(1, g * in_per_group, in_per_group), weight.narrow(0, g * per_out, per_out),
                    None if bias is None else bias.narrow(0, g * per_out, per_out), stride, padding, dilation)
            for g in range(groups)]
    out = _C.cat(outs, 1)
    return out.squeeze(0) if unbatched else out


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """conv2d over a height of 1: (N, C, L) or (C, L) input, (O, C / groups, k) weight."""
    if input.dim() not in (2, 3):
        raise RuntimeError(f"Expected 2D (unbatched) or 3D (batched) input to conv1d, but got input of size: "
                           f"{list(input.shape)}")
    if isinstance(padding, str):
        padding_2d = padding
    else:
        padding_2d = (0, _ntuple(padding, 1)[0])
    out = conv2d(input.unsqueeze(-2), weight.unsqueeze(2), bias, (1, _ntuple(stride, 1)[0]), padding_2d,
                 (1, _ntuple(dilation, 1)[0]), groups)
    return out.squeeze(-2)


def _pool1d(pool2d, input, kernel_size, stride, padding, **kwargs):
    if input.dim() not in (2, 3):
        raise RuntimeError(f"Expected 2D (unbatched) or 3D (batched) input, but got input of size: "
                           f"{list(input.shape)}")
    k = _ntuple(kernel_size, 1)[0]
    s = k if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0) else _ntuple(stride, 1)[0]
    out = pool2d(input.unsqueeze(-2), (1, k), (1, s), (0, _ntuple(padding, 1)[0]), **kwargs)
    return tuple(t.squeeze(-2) for t in out) if isinstance(out, tuple) else out.squeeze(-2)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    return _pool1d(max_pool2d, input, kernel_size, stride, padding, dilation=(1, _ntuple(dilation, 1)[0]),
                   ceil_mode=ceil_mode, return_indices=return_indices)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    return _pool1d(avg_pool2d, input, kernel_size, stride, padding, ceil_mode=ceil_mode,
                   count_include_pad=count_include_pad)


# ---- adaptive pooling: output cell i of n over an input of size L covers [floor(i L / n), ceil((i + 1) L / n)) ----

def _adaptive_bounds(in_size, out_size):
    return [((i * in_size) // out_size, -((-(i + 1) * in_size) // out_size)) for i in range(out_size)]


def _adaptive_pool(input, output_size, reduce, name, n_spatial):
    if input.dim() not in (n_spatial + 1, n_spatial + 2):
        raise RuntimeError(f"{name}(): Expected {n_spatial + 1}D or {n_spatial + 2}D tensor, but got "
                           f"{list(input.shape)}")
    sizes = _ntuple(output_size, n_spatial)
    out = input
    for k, size in enumerate(sizes):
        dim = input.dim() - n_spatial + k
        in_size = out.shape[dim]
        size = in_size if size is None else size
        if in_size % size == 0:   # equal windows: one reshape and one reduction
            shape = list(out.shape)
            shape[dim:dim + 1] = [size, in_size // size]
            out = reduce(out.reshape(shape), dim + 1)
        else:
            out = _C.cat([reduce(out.narrow(dim, a, b - a), dim).unsqueeze(dim)
                          for a, b in _adaptive_bounds(in_size, size)], dim)
    return out


def adaptive_avg_pool1d(input, output_size):
    return _adaptive_pool(input, output_size, lambda t, d: t.mean(d), "adaptive_avg_pool1d", 1)


def adaptive_avg_pool2d(input, output_size):
    """Means over 1.13's adaptive windows, per spatial dim in turn (a mean of means of equal-sized rows is the
    window's mean; the sums run in another order than 1.13's kernel)."""
    return _adaptive_pool(input, output_size, lambda t, d: t.mean(d), "adaptive_avg_pool2d", 2)


def _max_over(t, d):
    return t.max(d)[0]


def adaptive_max_pool1d(input, output_size, return_indices=False):
    if return_indices:
        raise NotImplementedError("tinyddp: adaptive_max_pool1d without return_indices only")
    return _adaptive_pool(input, output_size, _max_over, "adaptive_max_pool1d", 1)


def adaptive_max_pool2d(input, output_size, return_indices=False):
    if return_indices:
        raise NotImplementedError("tinyddp: adaptive_max_pool2d without return_indices only")
    return _adaptive_pool(input, output_size, _max_over, "adaptive_max_pool2d", 2)


# ---- normalizations composed of engine ops (values within float rounding of 1.13's kernels) ----

def _normalize_groups(x, n_groups, eps):
    """x (N, C, *) normalized over each of n_groups groups of channels (with their spatial elements), biased
    variance."""
    n = x.shape[0]
    grouped = x.reshape([n, n_groups, -1])
    mean = grouped.mean(2, keepdim=True)
    centered = grouped - mean
    var = (centered * centered).mean(2, keepdim=True)
    return (centered / (var + eps).sqrt()).reshape(list(x.shape))


def _per_channel(t, ndim):
    return t.reshape([1, -1] + [1] * (ndim - 2))


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.dim()}")
    channels = input.shape[1]
    if channels % num_groups != 0:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input of "
                           f"shape {list(input.shape)} and num_groups={num_groups}")
    out = _normalize_groups(input, num_groups, eps)
    if weight is not None:
        out = out * _per_channel(weight, input.dim())
    if bias is not None:
        out = out + _per_channel(bias, input.dim())
    return out


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-5):
    """Each (sample, channel) plane normalized by its own mean and biased variance; with running stats, those
    are updated as 1.13's (the mean over the batch of each plane's mean and unbiased variance)."""
    channels = input.shape[1]
    if use_input_stats:
        out = _normalize_groups(input, channels, eps)
        if running_mean is not None or running_var is not None:
            from tinyddp.autograd.grad_mode import no_grad
            with no_grad():
                planes = input.detach().reshape([input.shape[0], channels, -1])
                count = planes.shape[2]
                mean = planes.mean(2)
                var = ((planes - mean.unsqueeze(2)) ** 2).sum(2) / max(count - 1, 1)
                if running_mean is not None:
                    running_mean.mul_(1 - momentum).add_(mean.mean(0) * momentum)
                if running_var is not None:
                    running_var.mul_(1 - momentum).add_(var.mean(0) * momentum)
    else:
        shape = [1, -1] + [1] * (input.dim() - 2)
        out = (input - running_mean.reshape(shape)) / (running_var.reshape(shape) + eps).sqrt()
    if weight is not None:
        out = out * _per_channel(weight, input.dim())
    if bias is not None:
        out = out + _per_channel(bias, input.dim())
    return out


# ---- padding modes: every mode is one index_select per padded dim (so the backward is its scatter-add) ----

def _pad_index(size, before, after, mode, dim, shape):
    if mode == "reflect":
        if before >= size or after >= size:
            raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding input dimension, "
                               f"but got: padding ({before}, {after}) at dimension {dim} of input {shape}")
        return list(range(before, 0, -1)) + list(range(size)) + list(range(size - 2, size - 2 - after, -1))
    if mode == "replicate":
        return [0] * before + list(range(size)) + [size - 1] * after
    # circular
    if before > size or after > size:
        raise RuntimeError("Padding value causes wrapping around more than once.")
    return list(range(size - before, size)) + list(range(size)) + list(range(after))


def _pad_by_index(input, pad, mode):
    if len(pad) // 2 > input.dim() - 1 or (mode != "circular" and len(pad) // 2 > 3):
        raise NotImplementedError(f"Only 2D, 3D, 4D, 5D padding with non-constant padding are supported for now")
    out = input
    for k in range(len(pad) // 2):
        dim = input.dim() - 1 - k
        before, after = pad[2 * k], pad[2 * k + 1]
        if before < 0 or after < 0:   # a negative amount crops first
            size = out.shape[dim]
            start, stop = max(-before, 0), size - max(-after, 0)
            out = out.narrow(dim, start, stop - start)
            before, after = max(before, 0), max(after, 0)
        if before or after:
            index = _tensor.tensor(_pad_index(out.shape[dim], before, after, mode, dim, list(input.shape)),
                                   dtype=_tensor.int64)
            out = out.index_select(dim, index)
    return out


# ---- resampling ----

def _f32(x):
    import numpy
    return float(numpy.float32(x))


def _scale_value(in_size, out_size, scale):
    """1.13's compute_scales_value, in float32 (its kernels' opmath for float): 1/scale if given, else in/out."""
    return _f32(1.0 / scale) if scale is not None else _f32(_f32(in_size) / out_size)


def _nearest_exact_index(in_size, out_size, scale):
    s = _scale_value(in_size, out_size, scale)
    return [min(int(math.floor(_f32(_f32(i + 0.5) * s))), in_size - 1) for i in range(out_size)]


def _nearest_index(in_size, out_size, scale):
    if out_size == in_size:
        return list(range(out_size))
    if out_size == 2 * in_size:
        return [i >> 1 for i in range(out_size)]
    s = _scale_value(in_size, out_size, scale)
    return [min(int(math.floor(_f32(i * s))), in_size - 1) for i in range(out_size)]


def _linear_weights(in_size, out_size, align_corners, scale):
    """The two source indices and weights of each output position (1.13's area_pixel_compute_source_index)."""
    if align_corners:
        s = _f32(_f32(in_size - 1) / (out_size - 1)) if out_size > 1 else 0.0
    else:
        s = _scale_value(in_size, out_size, scale)
    i0, i1, w0, w1 = [], [], [], []
    for i in range(out_size):
        src = _f32(s * i) if align_corners else max(_f32(_f32(s * _f32(i + 0.5)) - 0.5), 0.0)
        low = int(src)
        lam = _f32(src - low)
        i0.append(low)
        i1.append(low + (1 if low < in_size - 1 else 0))
        w0.append(_f32(1.0 - lam))
        w1.append(lam)
    return i0, i1, w0, w1


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resamples the last 1-3 dims: mode 'nearest' picks 1.13's source element, 'linear', 'bilinear' and
    'trilinear' mix the two neighbours of each dim in turn (values within float rounding of 1.13's fused
    kernel)."""
    n_spatial = input.dim() - 2
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: "
                             "linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is None and scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    if size is not None:
        sizes = list(_ntuple(size, n_spatial))
        if len(sizes) != n_spatial:
            raise ValueError(f"Input and output must have the same number of spatial dimensions, but got input with "
                             f"spatial dimensions of {list(input.shape[2:])} and output size of {size}. Please "
                             f"provide input tensor in (N, C, d1, d2, ...,dK) format and output size in (o1, o2, "
                             f"...,oK) format.")
        scales = [None] * n_spatial
    else:
        factors = list(_ntuple(scale_factor, n_spatial))
        if len(factors) != n_spatial:
            raise ValueError(f"Input and scale_factor must have the same number of spatial dimensions, but got input "
                             f"with spatial dimensions of {list(input.shape[2:])} and scale_factor of shape "
                             f"{scale_factor}. Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                             f"scale_factor in (s1, s2, ...,sK) format.")
        sizes = [int(math.floor(float(input.shape[2 + i]) * factors[i])) for i in range(n_spatial)]
        scales = [None] * n_spatial if recompute_scale_factor else factors
    linear_modes = {"linear": 1, "bilinear": 2, "trilinear": 3}
    if mode in linear_modes and linear_modes[mode] != n_spatial:
        raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs {linear_modes[mode] + 2}D "
                                  f"input")
    if mode == "area":
        pool = {1: adaptive_avg_pool1d, 2: adaptive_avg_pool2d, 3: adaptive_avg_pool3d}[n_spatial]
        return pool(input, sizes)
    if mode not in ("nearest", "nearest-exact") + tuple(linear_modes):
        raise NotImplementedError(f"tinyddp: interpolate mode '{mode}'; nearest, nearest-exact, area, linear, "
                                  "bilinear and trilinear are supported")
    out = input
    for k in range(n_spatial):
        dim = 2 + k
        in_size, out_size = input.shape[dim], sizes[k]
        if mode in ("nearest", "nearest-exact"):
            index = (_nearest_index if mode == "nearest" else _nearest_exact_index)(in_size, out_size, scales[k])
            out = out.index_select(dim, _tensor.tensor(index, dtype=_tensor.int64))
            continue
        i0, i1, w0, w1 = _linear_weights(in_size, out_size, align_corners, scales[k])
        shape = [1] * input.dim()
        shape[dim] = out_size
        a = out.index_select(dim, _tensor.tensor(i0, dtype=_tensor.int64))
        b = out.index_select(dim, _tensor.tensor(i1, dtype=_tensor.int64))
        out = (a * _tensor.tensor(w0, dtype=input.dtype).reshape(shape)
               + b * _tensor.tensor(w1, dtype=input.dtype).reshape(shape))
    return out


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    return interpolate(input, size, scale_factor, mode, align_corners)


def pixel_shuffle(input, upscale_factor):
    """(*, C r^2, H, W) -> (*, C, H r, W r)."""
    r = upscale_factor
    *lead, c, h, w = input.shape
    if c % (r * r) != 0:
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                           f"upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    n = len(lead)
    x = input.reshape(lead + [c // (r * r), r, r, h, w])
    x = x.permute(list(range(n)) + [n, n + 3, n + 1, n + 4, n + 2])
    return x.reshape(lead + [c // (r * r), h * r, w * r])


def pixel_unshuffle(input, downscale_factor):
    """(*, C, H r, W r) -> (*, C r^2, H, W)."""
    r = downscale_factor
    *lead, c, h, w = input.shape
    n = len(lead)
    x = input.reshape(lead + [c, h // r, r, w // r, r])
    x = x.permute(list(range(n)) + [n, n + 2, n + 4, n + 1, n + 3])
    return x.reshape(lead + [c * r * r, h // r, w // r])


# ---- more activations ----

def hardsigmoid(input, inplace=False):
    """relu6(x + 3) / 6."""
    return (input + 3).clamp(0, 6) / 6


def hardswish(input, inplace=False):
    """x relu6(x + 3) / 6."""
    return input * (input + 3).clamp(0, 6) / 6


def prelu(input, weight):
    """x for x > 0, else weight x, the weight per channel (dim 1) or one for all."""
    w = weight
    if weight.numel() != 1:
        if input.dim() < 2 or input.shape[1] != weight.numel():
            raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found parameter numbers = "
                               f"{weight.numel()} and channel size = {input.shape[1] if input.dim() >= 2 else 1}.")
        w = weight.reshape([1, -1] + [1] * (input.dim() - 2))
    return _pick(input > 0, input, input * w)


def glu(input, dim=-1):
    """a sigmoid(b) with a, b the halves of input along dim."""
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    size = input.shape[dim]
    if size % 2 != 0:
        raise RuntimeError(f"Halving dimension must be even, but dimension {dim % input.dim()} is size {size}")
    a, b = input.narrow(dim, 0, size // 2), input.narrow(dim, size // 2, size // 2)
    return a * b.sigmoid()


def tanhshrink(input):
    return input - input.tanh()


def softshrink(input, lambd=0.5):
    return _pick(input > lambd, input - lambd, _pick(input < -lambd, input + lambd, input * 0))


def hardshrink(input, lambd=0.5):
    return _pick((input > lambd).logical_or(input < -lambd), input, input * 0)


def celu(input, alpha=1.0, inplace=False):
    return _pick(input > 0, input, ((input / alpha).exp() - 1) * alpha)


def threshold(input, threshold, value, inplace=False):
    return _pick(input > threshold, input, input * 0 + value)


def _exponential_like(t):
    """Exp(1) draws of t's shape as 1.13's CPU exponential_ makes them: -log1p(-u) of a float64 uniform draw per
    element, rounded to t's dtype (so a seed gives 1.13's values, to rounding of log1p)."""
    u = _tensor.empty(tuple(t.shape), dtype=_tensor.float64).uniform_()
    return (-(-u).log1p()).to(t.dtype)


def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    """softmax((logits + g) / tau) with g = -log(E), E ~ Exp(1) drawn as 1.13's exponential_ (the same stream);
    hard=True gives the one-hot of the argmax with the soft sample's gradient."""
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    gumbels = -_exponential_like(logits).log()
    y_soft = softmax((logits + gumbels) / tau, dim)
    if not hard:
        return y_soft
    dim = dim % y_soft.dim()
    index = y_soft.argmax(dim, keepdim=True)
    shape = [1] * y_soft.dim()
    shape[dim] = y_soft.shape[dim]
    y_hard = (_tensor.arange(y_soft.shape[dim]).reshape(shape) == index).to(y_soft.dtype)
    return y_hard - y_soft.detach() + y_soft


# ---- distances and the losses over them ----

def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """||x1 - x2 + eps||_p over the last dim."""
    d = x1 - x2 + eps
    return d.norm(p, -1, keepdim) if x1.dim() > 0 else d.abs()


def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    """max(0, -target (input1 - input2) + margin)."""
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
                           f"input1: {input1.shape}, input2: {input2.shape}, target: {target.shape} ")
    return _reduce((-target * (input1 - input2) + margin).clamp_min(0), reduction)


def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    """1 - cos(x1, x2) where target = 1, max(0, cos(x1, x2) - margin) where target = -1 (cos with 1.13's
    EPSILON = 1e-12 added to each squared norm)."""
    dot = (input1 * input2).sum(-1)
    mag1 = (input1 * input1).sum(-1) + 1e-12
    mag2 = (input2 * input2).sum(-1) + 1e-12
    cos = dot / (mag1 * mag2).sqrt()
    zeros = cos * 0
    pos = 1 - cos
    neg = (cos - margin).clamp_min(0)
    loss = _pick(target == 1, pos, zeros) + _pick(target == -1, neg, zeros)
    return _reduce(loss, reduction)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, size_average=None,
                        reduce=None, reduction="mean"):
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_swap = pairwise_distance(positive, negative, p, eps)
        d_neg = _pick(d_swap < d_neg, d_swap, d_neg)
    return _reduce((d_pos - d_neg + margin).clamp_min(0), reduction)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    zeros = input * 0
    loss = _pick(target == 1, input, zeros) + _pick(target == -1, (margin - input).clamp_min(0), zeros)
    return _reduce(loss, reduction)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    return _reduce((-target * input).exp().log1p(), reduction)


def bilinear(input1, input2, weight, bias=None):
    """y_k = x1^T W_k x2 + b_k; weight (O, I1, I2)."""
    out = (input1.unsqueeze(-2).unsqueeze(-2).matmul(weight.unsqueeze(0) if input1.dim() > 1 else weight)
           .squeeze(-2) * input2.unsqueeze(-2)).sum(-1)
    return out + bias if bias is not None else out


# ---- channel dropout ----

def _feature_dropout(input, p, training, inplace, batched_dims):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0 or input.numel() == 0:
        return input
    shape = list(input.shape[:batched_dims]) + [1] * (input.dim() - batched_dims)
    if p == 1:
        mask = _tensor.zeros(shape, dtype=input.dtype)
    else:
        mask = _tensor.empty(shape, dtype=input.dtype).bernoulli_(1 - p) / (1 - p)
    return _in_place(input, input * mask, inplace)


def dropout1d(input, p=0.5, training=True, inplace=False):
    if input.dim() not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {input.dim()}D input. Note that "
                           "dropout1d exists to provide channel-wise dropout on inputs with 1 spatial dimension, a "
                           "channel dimension, and an optional batch dimension (i.e. 2D or 3D inputs).")
    if input.dim() == 2:
        return _feature_dropout(input.unsqueeze(0), p, training, False, 2).squeeze(0)
    return _feature_dropout(input, p, training, inplace, 2)


def dropout2d(input, p=0.5, training=True, inplace=False):
    if input.dim() not in (3, 4):
        warnings.warn(f"dropout2d: Received a {input.dim()}-D input to dropout2d, which is deprecated and will "
                      "result in an error in a future release. To retain the behavior and silence this warning, "
                      "please use dropout instead. Note that dropout2d exists to provide channel-wise dropout on "
                      "inputs with 2 spatial dimensions, a channel dimension, and an optional batch dimension "
                      "(i.e. 3D or 4D inputs).", stacklevel=2)
    if input.dim() == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout "
                      "behavior is desired - input is interpreted as shape (N, C, L), where C is the channel dim. "
                      "This behavior will change in a future release to interpret the input as one without a batch "
                      "dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise dropout behavior, please "
                      "switch to using dropout1d instead.", stacklevel=2)
    return _feature_dropout(input, p, training, inplace, 2)


# ---- sliding blocks ----

def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """(N, C, H, W) -> (N, C kh kw, L): each column one block, in conv2d's (c, i, j) order."""
    if input.dim() not in (3, 4):
        raise RuntimeError(f"Input Error: Only 3D or 4D input Tensors are supported (got {input.dim()}D)")
    batched, unbatched = _batched(input, "unfold")
    kernel = _pair(kernel_size)
    cols, (out_h, out_w) = _unfold(batched, kernel, _pair(stride), _pair(padding), _pair(dilation))
    n, c = batched.shape[:2]
    out = cols.reshape([n, c * kernel[0] * kernel[1], out_h * out_w])
    return out.squeeze(0) if unbatched else out


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """The adjoint of unfold: (N, C kh kw, L) columns summed back into (N, C, H, W) (overlaps add), as the
    gradient of unfold, which it is here."""
    from tinyddp.autograd import grad as _grad
    unbatched = input.dim() == 2
    cols = input.unsqueeze(0) if unbatched else input
    kh, kw = _pair(kernel_size)
    n, ckk, _ = cols.shape
    c = ckk // (kh * kw)
    h, w = _pair(output_size)
    from tinyddp.autograd.grad_mode import enable_grad
    with enable_grad():
        probe = _tensor.zeros(n, c, h, w, dtype=input.dtype, requires_grad=True)
        unfolded = unfold(probe, (kh, kw), dilation, padding, stride)
    out = _grad(unfolded, probe, cols, create_graph=True)[0]
    return out.squeeze(0) if unbatched else out


# ---- inplace=True ----

def _in_place(input, out, inplace):
    """The result of an inplace=True call: written into input where the engine allows it (input outside any
    autograd graph). The engine records no in-place ops on graph tensors, so there the result is a new tensor and
    input keeps its values: the same values and gradients as 1.13's, for code that uses the returned tensor (as
    nn.Sequential and `x = F.relu(x, inplace=True)` do)."""
    if not inplace or input.requires_grad:
        return out
    from tinyddp.autograd.grad_mode import no_grad
    with no_grad():
        input.copy_(out)
    return input


def _with_inplace(fn):
    @functools.wraps(fn)
    def wrapper(input, *args, inplace=False, **kwargs):
        return _in_place(input, fn(input, *args, **kwargs), inplace)
    return wrapper


for _name in ("relu", "leaky_relu", "silu", "elu", "selu", "hardtanh", "relu6", "mish", "hardsigmoid", "hardswish",
              "celu", "threshold"):
    globals()[_name] = _with_inplace(globals()[_name])
del _name


# ---- transposed convolutions: each input pixel's weighted kernel, summed into the output (fold) ----

def _conv_transpose2d(input, weight, stride, padding, output_padding, dilation):
    """One group: (N, C, H, W) input, (C, O, kh, kw) weight -> (N, O, Ho, Wo)."""
    n, c, h, w = input.shape
    in_channels, out_channels, kh, kw = weight.shape
    if c != in_channels:
        raise RuntimeError(f"Given transposed=1, weight of size {list(weight.shape)}, expected input"
                           f"{list(input.shape)} to have {in_channels} channels, but got {c} channels instead")
    (sh, sw), (ph, pw), (oh, ow), (dh, dw) = stride, padding, output_padding, dilation
    out_h = (h - 1) * sh - 2 * ph + dh * (kh - 1) + oh + 1
    out_w = (w - 1) * sw - 2 * pw + dw * (kw - 1) + ow + 1
    cols = weight.reshape([in_channels, out_channels * kh * kw]).t().matmul(input.reshape([n, c, h * w]))
    return fold(cols, (out_h, out_w), (kh, kw), dilation, padding, stride)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """The adjoint of conv2d (its gradient wrt the input): weight (C, O / groups, kh, kw)."""
    if input.dim() not in (3, 4):
        raise RuntimeError(f"Expected 3D (unbatched) or 4D (batched) input to conv_transpose2d, but got input of "
                           f"size: {list(input.shape)}")
    unbatched = input.dim() == 3
    x = input.unsqueeze(0) if unbatched else input
    stride, padding, output_padding, dilation = _pair(stride), _pair(padding), _pair(output_padding), _pair(dilation)
    if any(o >= s and o >= d for o, s, d in zip(output_padding, stride, dilation)):
        raise RuntimeError("output padding must be smaller than either stride or dilation")
    in_per_group = weight.shape[0] // groups
    outs = [_conv_transpose2d(x.narrow(1, g * in_per_group, in_per_group),
                              weight.narrow(0, g * in_per_group, in_per_group), stride, padding, output_padding,
                              dilation) for g in range(groups)]
    out = outs[0] if groups == 1 else _C.cat(outs, 1)
    if bias is not None:
        out = out + bias.reshape([1, -1, 1, 1])
    return out.squeeze(0) if unbatched else out


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    if input.dim() not in (2, 3):
        raise RuntimeError(f"Expected 2D (unbatched) or 3D (batched) input to conv_transpose1d, but got input of "
                           f"size: {list(input.shape)}")
    one = lambda v: _ntuple(v, 1)[0]   # noqa: E731
    out = conv_transpose2d(input.unsqueeze(-2), weight.unsqueeze(2), bias, (1, one(stride)), (0, one(padding)),
                           (0, one(output_padding)), groups, (1, one(dilation)))
    return out.squeeze(-2)


# ---- the in-place forms ----

def relu_(input):
    return relu(input, inplace=True)


def elu_(input, alpha=1.0):
    return elu(input, alpha, inplace=True)


def leaky_relu_(input, negative_slope=0.01):
    return leaky_relu(input, negative_slope, inplace=True)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    return hardtanh(input, min_val, max_val, inplace=True)


def selu_(input):
    return selu(input, inplace=True)


def celu_(input, alpha=1.0):
    return celu(input, alpha, inplace=True)


def threshold_(input, threshold_value, value):
    return threshold(input, threshold_value, value, inplace=True)


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=True):
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=True):
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def upsample_nearest(input, size=None, scale_factor=None):
    warnings.warn("nn.functional.upsample_nearest is deprecated. Use nn.functional.interpolate instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    warnings.warn("nn.functional.upsample_bilinear is deprecated. Use nn.functional.interpolate instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


def adaptive_avg_pool3d(input, output_size):
    return _adaptive_pool(input, output_size, lambda t, d: t.mean(d), "adaptive_avg_pool3d", 3)


def channel_shuffle(input, groups):
    """(N, g * c, *) -> channels regrouped: the c channels of each group interleaved."""
    n, channels = input.shape[:2]
    rest = list(input.shape[2:])
    return input.reshape([n, groups, channels // groups] + rest).transpose(1, 2).reshape([n, channels] + rest)


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """x / (k + alpha * mean of x^2 over `size` neighbouring channels)^beta (the window zero-padded: size // 2
    channels before, (size - 1) // 2 after)."""
    if input.dim() < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {input.dim()} dimensions)")
    if input.numel() == 0:
        return input
    n, c = input.shape[:2]
    square = (input * input).reshape([n, 1, c, -1])
    square = pad(square, (0, 0, size // 2, (size - 1) // 2))
    windows = _C.cat([square.narrow(2, i, c) for i in range(size)], 1)   # (N, size, C, rest)
    div = windows.sum(1).reshape(list(input.shape)) / size
    return input / (div * alpha + k).pow(beta)


def pdist(input, p=2):
    """||x_i - x_j||_p of each pair of rows i < j, in row-major order of the pairs."""
    rows = input.shape[0]
    first = [i for i in range(rows) for j in range(i + 1, rows)]
    second = [j for i in range(rows) for j in range(i + 1, rows)]
    if not first:
        return input.new_zeros(0)
    a = input.index_select(0, _tensor.tensor(first, dtype=_tensor.int64))
    b = input.index_select(0, _tensor.tensor(second, dtype=_tensor.int64))
    return (a - b).norm(p, -1)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """(sum of x^p over each window)^(1/p), 1.13's form: the window's mean times its size."""
    kw, kh = _pair(kernel_size)
    out = avg_pool2d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return (out.sign() * out.abs().clamp_min(0)).mul(kw * kh).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    out = avg_pool1d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return (out.sign() * out.abs().clamp_min(0)).mul(kernel_size).pow(1.0 / norm_type)


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                     reduction="mean"):
    """exp(input) - target input (log_input), else input - target log(input + eps); full adds Stirling's term
    target log target - target + log(2 pi target) / 2 where target > 1."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(reduction + " is not a valid value for reduction")
    loss = input.exp() - target * input if log_input else input - target * (input + eps).log()
    if full:
        stirling = target * target.log() - target + (target * (2 * math.pi)).log() * 0.5
        loss = loss + _pick(target > 1, stirling, stirling * 0)
    return _reduce(loss, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """(log max(var, eps) + (input - target)^2 / max(var, eps)) / 2 (+ log(2 pi) / 2 with full); the clamp is
    outside the graph, as 1.13's."""
    if var.shape != input.shape:
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif not (tuple(input.shape[:-1]) == tuple(var.shape[:-1]) and var.shape[-1] == 1):
            raise ValueError("var is of incorrect size")
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(reduction + " is not valid")
    if bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    var = var.clone()
    from tinyddp.autograd.grad_mode import no_grad
    with no_grad():
        var.copy_(var.clamp_min(eps))
    loss = ((var.log() + (input - target) ** 2 / var)) * 0.5
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    loss = loss.sum(input.dim() - 1) / input.shape[-1]
    return _reduce(loss, reduction)


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                      reduction="mean"):
    """sum over j != y of max(0, margin - x[y] + x[j])^p, over the C classes (times weight[y])."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    x = input if input.dim() == 2 else input.unsqueeze(0)
    y = target.reshape([-1])
    picked = x.gather(1, y.unsqueeze(1))
    margins = (x - picked + margin).clamp_min(0)
    if p == 2:
        margins = margins * margins
    if weight is not None:
        margins = margins * weight.index_select(0, y).unsqueeze(1)
    classes = _tensor.arange(x.shape[1]).reshape([1, -1])
    margins = _pick(classes == y.unsqueeze(1), margins * 0, margins)
    loss = margins.sum(1) / x.shape[1]
    if input.dim() != 2:
        loss = loss.squeeze(0)
    return _reduce(loss, reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin=1.0, swap=False,
                                      reduction="mean"):
    distance = distance_function if distance_function is not None else pairwise_distance
    d_pos, d_neg = distance(anchor, positive), distance(anchor, negative)
    if swap:
        d_swap = distance(positive, negative)
        d_neg = _pick(d_swap < d_neg, d_swap, d_neg)
    return _reduce((d_pos - d_neg + margin).clamp_min(0), reduction)


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False, mode="mean",
                  sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """Each bag's rows of weight reduced by mode ('sum', 'mean' or 'max'): the bags are input's rows (2-D input)
    or the slices of 1-D input that offsets start; padding_idx's entries are left out (and out of the mean's
    count); an empty bag gives zeros. The sums are a 0/1 matrix product, so their order is not 1.13's."""
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             "fixed length sequences. However, found offsets of type " + _type_text(offsets))
        bags, length = input.shape
        offsets_list = list(range(0, bags * length, length))
        input = input.reshape([-1])
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape([-1])
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
        offsets_list = offsets.tolist()
        if include_last_offset:
            offsets_list = offsets_list[:-1]
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                  f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
                                  "GitHub.")
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    rows = embedding(input, weight, None, max_norm, norm_type, scale_grad_by_freq)   # (n, D)
    n = input.shape[0]
    ends = offsets_list[1:] + [n] if not include_last_offset or offsets is None else offsets.tolist()[1:]
    keep = [True] * n if padding_idx is None else [v != padding_idx % weight.shape[0] for v in input.tolist()]
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.unsqueeze(1)
    if mode == "max":
        outs = []
        for start, end in zip(offsets_list, ends):
            members = [i for i in range(start, end) if keep[i]]
            if members:
                outs.append(rows.index_select(0, _tensor.tensor(members, dtype=_tensor.int64)).max(0)[0])
            else:
                outs.append(rows.new_zeros(rows.shape[1]))
        return _tensor.stack(outs, 0)
    membership = [[1.0 if start <= i < end and keep[i] else 0.0 for i in range(n)]
                  for start, end in zip(offsets_list, ends)]
    m = _tensor.tensor(membership, dtype=rows.dtype)   # (B, n)
    out = m.matmul(rows)
    if mode == "mean":
        counts = [max(sum(r), 1.0) for r in membership]
        out = out / _tensor.tensor(counts, dtype=rows.dtype).unsqueeze(1)
    return out


def _type_text(obj):
    return f"<class '{type(obj).__module__.replace('tinyddp._tensor', 'torch')}.{type(obj).__name__}'>"
