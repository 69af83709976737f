"""torch.nn.init: in-place initializers, as 1.13's torch/nn/init.py. The random ones are the tensor's own
uniform_/normal_ on the calling thread's default generator, so a seed gives PyTorch's values. Each writes under
no_grad in place, so a tensor's version goes up by one, as with 1.13's uniform_/normal_/fill_."""
import math
import warnings

from tinyddp import _C, _tensor
from tinyddp._tensor_special import _erfinv_values
from tinyddp.autograd.grad_mode import no_grad


def calculate_gain(nonlinearity, param=None):
    linear_fns = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d"]
    if nonlinearity in linear_fns or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, int) or isinstance(param, float):
            negative_slope = param   # bools are ints: refused above
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _write(tensor, values):
    with no_grad():
        tensor.copy_(values)
    return tensor


def uniform_(tensor, a=0.0, b=1.0):
    with no_grad():
        return tensor.uniform_(a, b)


def normal_(tensor, mean=0.0, std=1.0):
    with no_grad():
        return tensor.normal_(mean, std)


def constant_(tensor, val):
    with no_grad():
        tensor.fill_(val)
    return tensor


def ones_(tensor):
    return constant_(tensor, 1.0)


def zeros_(tensor):
    with no_grad():
        tensor.zero_()
    return tensor


def eye_(tensor):
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    if rows == 0 or cols == 0:
        return tensor
    return _write(tensor, _tensor.tensor([[1.0 if i == j else 0.0 for j in range(cols)] for i in range(rows)],
                                         dtype=tensor.dtype))


def _calculate_fan_in_and_fan_out(tensor):
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    receptive_field_size = 1
    for s in tensor.shape[2:]:
        receptive_field_size *= s
    return tensor.size(1) * receptive_field_size, tensor.size(0) * receptive_field_size


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    valid_modes = ["fan_in", "fan_out"]
    if mode not in valid_modes:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid_modes}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def xavier_uniform_(tensor, gain=1.0):
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    a = math.sqrt(3.0) * gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return uniform_(tensor, -a, a)


def xavier_normal_(tensor, gain=1.0):
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)))


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu"):
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op")
        return tensor
    std = calculate_gain(nonlinearity, a) / math.sqrt(_calculate_correct_fan(tensor, mode))
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu"):
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op")
        return tensor
    std = calculate_gain(nonlinearity, a) / math.sqrt(_calculate_correct_fan(tensor, mode))
    return normal_(tensor, 0.0, std)


def trunc_normal_(tensor, mean=0., std=1., a=-2., b=2.):
    """Normal(mean, std) truncated to [a, b], by 1.13's inverse-CDF method on the same uniform draws: u in
    [2 cdf(a) - 1, 2 cdf(b) - 1), then mean + std sqrt(2) erfinv(u), clamped. The erfinv is computed in float64
    and rounded (1.13's float32 kernel may differ in the last bit)."""
    def norm_cdf(x):
        return (1. + math.erf(x / math.sqrt(2.))) / 2.

    if (mean < a - 2 * std) or (mean > b + 2 * std):
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The distribution of values may "
                      "be incorrect.", stacklevel=2)
    with no_grad():
        low, high = norm_cdf((a - mean) / std), norm_cdf((b - mean) / std)
        tensor.uniform_(2 * low - 1, 2 * high - 1)
        tensor.copy_(_erfinv_values(tensor.double()).to(tensor.dtype))
        tensor.mul_(std * math.sqrt(2.))
        tensor.add_(_tensor.full(tuple(tensor.shape), float(mean), dtype=tensor.dtype))
        tensor.clamp_(min=a, max=b)
    return tensor


def orthogonal_(tensor, gain=1):
    """A (semi-)orthogonal matrix from the QR of a standard normal draw (1.13's: Q with the signs of R's diagonal,
    transposed for wide matrices), times gain. The QR is numpy's (LAPACK in float64), so values match 1.13's
    float32 LAPACK to rounding."""
    if tensor.dim() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    import numpy
    rows = tensor.size(0)
    cols = tensor.numel() // rows
    with no_grad():
        flattened = _tensor.empty(rows, cols, dtype=tensor.dtype).normal_(0, 1)
        m = numpy.array(flattened.tolist(), dtype=numpy.float64)
        if rows < cols:
            m = m.T
        q, r = numpy.linalg.qr(m)
        q = q * numpy.sign(numpy.diag(r))
        if rows < cols:
            q = q.T
        tensor.copy_(_tensor.tensor(q.tolist(), dtype=tensor.dtype).reshape(tuple(tensor.shape)))
        tensor.mul_(gain)
    return tensor


def dirac_(tensor, groups=1):
    """The identity of a convolution: weight[g * out_per_group + d, d, centre] = 1 for each group g."""
    dimensions = tensor.dim()
    if dimensions not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tensor.size()
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_chans_per_grp = sizes[0] // groups
    min_dim = min(out_chans_per_grp, sizes[1])
    with no_grad():
        tensor.zero_()
        values = [[0.0] * (tensor.numel() // (sizes[0] * sizes[1])) for _ in range(sizes[0] * sizes[1])]
        centre = 0
        stride = 1
        for s in reversed(list(sizes[2:])):
            centre += (s // 2) * stride
            stride *= s
        for g in range(groups):
            for d in range(min_dim):
                values[(g * out_chans_per_grp + d) * sizes[1] + d][centre] = 1.0
        tensor.copy_(_tensor.tensor(values, dtype=tensor.dtype).reshape(tuple(sizes)))
    return tensor


def sparse_(tensor, sparsity, std=0.01):
    """Normal(0, std) with ceil(sparsity * rows) zeros per column, chosen by one randperm per column (1.13's
    draws in 1.13's order)."""
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    num_zeros = int(math.ceil(sparsity * rows))
    with no_grad():
        tensor.normal_(0, std)
        zero = [[False] * cols for _ in range(rows)]
        for col in range(cols):
            for row in _tensor.randperm(rows).tolist()[:num_zeros]:
                zero[row][col] = True
        tensor.masked_fill_(_tensor.tensor(zero), 0.0)   # written as +0 (1.13 assigns 0; a product gives -0)
    return tensor


def _deprecated(meth):
    new_name = meth.__name__
    old_name = new_name[:-1]

    def deprecated_init(*args, **kwargs):
        warnings.warn(f"nn.init.{old_name} is now deprecated in favor of nn.init.{new_name}.", stacklevel=2)
        return meth(*args, **kwargs)
    deprecated_init.__name__ = old_name
    return deprecated_init


uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
constant = _deprecated(constant_)
eye = _deprecated(eye_)
dirac = _deprecated(dirac_)
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
sparse = _deprecated(sparse_)
