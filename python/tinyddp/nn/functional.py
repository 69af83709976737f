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
