"""torch.nn.functional: the engine's activations and losses (engine/ops/ops.h), PyTorch's names and defaults."""
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
    if approximate == "none":
        raise NotImplementedError("gelu(approximate='none') needs erf, which tinyddp's engine does not have; use "
                                  "approximate='tanh' (PyTorch's tanh form, within 1e-3 of the exact one).")
    if approximate != "tanh":
        raise RuntimeError(f"approximate argument must be either none or tanh.")


def gelu(input, approximate="none"):
    """The tanh form only: 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))), composed of engine ops (the values
    within float rounding of PyTorch's fused kernel; the graph is the composition's, not GeluBackward0)."""
    _check_gelu_approximate(approximate)
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
    """mean(-(y log(x) + (1 - y) log(1 - x))), each log clamped at -100 as 1.13's kernel clamps it."""
    _check_reduction(reduction)
    _check_target_size(input, target)
    if weight is not None:
        raise NotImplementedError("binary_cross_entropy: weight is not supported by tinyddp.")
    log_x = input.log().clamp(min=-100)
    log_1mx = (1 - input).log().clamp(min=-100)
    return -(target * log_x + (1 - target) * log_1mx).mean()


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None, reduction="mean",
                                     pos_weight=None):
    """mean((1 - y) x + m + log(exp(-m) + exp(-x - m))), m = max(-x, 0): 1.13's stable formula, composed of
    engine ops (its gradient sigmoid(x) - y within float rounding; grad_fn MeanBackward0, PyTorch's
    BinaryCrossEntropyWithLogitsBackward0)."""
    _check_reduction(reduction)
    _check_target_size(input, target)
    if weight is not None or pos_weight is not None:
        raise NotImplementedError("binary_cross_entropy_with_logits: weight and pos_weight are not supported by "
                                  "tinyddp.")
    m = (-input).clamp(min=0)
    return ((1 - target) * input + m + ((-m).exp() + (-input - m).exp()).log()).mean()
