"""The spatial part of torch.nn.functional, kept apart for length (nn.functional re-exports every public name):
convolutions (conv1d, conv2d, grouped, padded, transposed), pooling (max/avg, 1-D, adaptive, LP), F.pad's modes,
interpolate, pixel_shuffle, unfold/fold, channel_shuffle. Each is composed of engine ops: windows gathered with the
engine's row gather, then a matmul or a reduction, so every one is differentiable (twice too) and its gradients
are the compositions'. Each is recorded as 1.13's node (ConvolutionBackward0, MaxPool2DWithIndicesBackward0, ...;
tinyddp/_node.py).
"""
import builtins
import itertools
import math
import warnings

from tinyddp import _C, _tensor
from tinyddp._node import recorded
from tinyddp.autograd.function import Function


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
        if mode == "circular":   # 1.13's is a composition of its own (copies into slices)
            return _pad_by_index(input, pad, mode)
        node = {"reflect": "ReflectionPad", "replicate": "ReplicationPad"}[mode] + f"{len(pad) // 2}DBackward0"
        return recorded(node, [input], lambda: _pad_by_index(input, pad, mode))
    return recorded("ConstantPadNdBackward0", [input], lambda: _constant_pad(input, pad, value))


class _ContiguousGradient(Function):
    """The identity, whose gradient arrives contiguous: 1.13's ConstantPadNdBackward0 pads the gradient back into
    a new tensor, where the cat of _constant_pad would hand back a strided slice of it (and `x.grad.view(n, -1)`,
    as WGAN-GP's penalty writes it, would fail after a padded convolution)."""
    @staticmethod
    def forward(ctx, x):
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad):
        return grad.contiguous()


def _constant_pad(input, pad, value):
    fill = 0 if value is None else value
    out = _ContiguousGradient.apply(input) if input.requires_grad and _C.is_grad_enabled() else input
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


def _batched(input, name, spatial_dims=2):
    """input with a batch dim (and whether it had none): 1.13's check for (C, *spatial) or (N, C, *spatial)."""
    unbatched, batched = spatial_dims + 1, spatial_dims + 2
    if input.dim() == unbatched:
        return input.unsqueeze(0), True
    if input.dim() != batched:
        raise RuntimeError(f"Expected {unbatched}D (unbatched) or {batched}D (batched) input to {name}, but got "
                           f"input of size: {list(input.shape)}")
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
    sizes = [_pool_output_size(size, k, s_, p, d, ceil_mode)
             for size, k, s_, p, d in zip(input.shape[-2:], kernel, stride, padding, dilation)]
    if any(out <= 0 for out in sizes):
        raise RuntimeError(f"Given input size: ({'x'.join(str(v) for v in input.shape[-3:])}). Calculated output "
                           f"size: ({input.shape[-3]}x{'x'.join(str(v) for v in sizes)}). Output size is too small")
    extra = [max((out - 1) * s_ + d * (k - 1) + 1 - (size + 2 * p), 0)
             for out, size, k, s_, p, d in zip(sizes, input.shape[-2:], kernel, stride, padding, dilation)]
    return kernel, stride, padding, dilation, sizes, extra


def _pool_output_size(size, k, stride, p, d, ceil_mode):
    """1.13's pooling_output_shape: floor (or ceil) of the window count; a last window must start inside the
    input or its left padding."""
    out = (size + 2 * p - d * (k - 1) - 1 + (stride - 1 if ceil_mode else 0)) // stride + 1
    if ceil_mode and (out - 1) * stride >= size + p:
        out -= 1
    return out


def _check_pool2d_dims(input, name):
    """1.13's texts for a 2-D pooling's input of other than 3 or 4 dims (avg_pool2d's reads size(-3) first)."""
    if input.dim() in (3, 4):
        return
    if name == "avg_pool2d" and input.dim() < 3:
        d = builtins.max(input.dim(), 1)
        raise IndexError(f"Dimension out of range (expected to be in range of [{-d}, {d - 1}], but got -3)")
    raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """The max of each window (padding never wins: it is -inf); with return_indices, also each max's position in
    its (H * W) input plane (the first of equal maxima in the window's row-major order)."""
    _check_pool2d_dims(input, "max_pool2d")
    return recorded("MaxPool2DWithIndicesBackward0", [input], lambda: _max_pool2d(
        input, kernel_size, stride, padding, dilation, ceil_mode, return_indices))


def _max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices):
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
    _check_pool2d_dims(input, "avg_pool2d")
    return recorded("AvgPool2DBackward0", [input], lambda: _avg_pool2d(
        input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override))


def _avg_pool2d(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
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


_TYPE_NAMES = {"float32": "float", "float64": "double", "int64": "long int", "bool": "bool"}   # C++'s, as 1.13 prints


def _scalar_type(t):
    from tinyddp._tensor_reduce import scalar_name   # 1.13's ScalarType names ("Float")
    return scalar_name(t.dtype)


def _check_convolution(input, weight, bias, stride, padding, dilation, groups, transposed, bias_type_first=False):
    """1.13's checks of a convolution of a batched input (N, C, *spatial), in its order and words: the bias's
    dtype (conv2d and conv3d check it first), then check_shape_forward (padding, stride, the weight's dims,
    groups, channels, the bias's size, a kernel larger than the padded input), then the kernel's dtypes."""
    if bias_type_first and bias is not None and bias.dtype is not input.dtype:
        raise RuntimeError(f"Input type ({_TYPE_NAMES[repr(input.dtype)[6:]]}) and bias type "
                           f"({_TYPE_NAMES[repr(bias.dtype)[6:]]}) should be the same")
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if any(s_ <= 0 for s_ in stride):
        raise RuntimeError("non-positive stride is not supported")
    w = list(weight.shape)
    if weight.dim() != input.dim():
        raise RuntimeError(f"Expected {weight.dim()}-dimensional input for {weight.dim()}-dimensional weight {w}, but "
                           f"got {input.dim()}-dimensional input of size {list(input.shape)} instead")
    if w[0] < groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be at least {groups} at dimension 0, but got "
                           f"weight of size {w} instead")
    if w[0] % groups != 0:   # 1.13's text has the doubled brackets
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, but "
                           f"got weight of size [{w}] instead")
    channels = input.shape[1]
    if not transposed:
        if channels != w[1] * groups:
            raise RuntimeError(f"Given groups={groups}, weight of size {w}, expected input{list(input.shape)} to "
                               f"have {w[1] * groups} channels, but got {channels} channels instead")
        if bias is not None and (bias.dim() != 1 or bias.shape[0] != w[0]):
            raise RuntimeError(f"Given weight of size {w}, expected bias to be 1-dimensional with {w[0]} elements, "
                               f"but got bias of size {list(bias.shape)} instead")
        padded = [size + 2 * p for size, p in zip(input.shape[2:], padding)]
        kernel = [d * (k - 1) + 1 for k, d in zip(w[2:], dilation)]
        if any(a < k for a, k in zip(padded, kernel)):
            raise RuntimeError(f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). Kernel "
                               f"size: ({' x '.join(map(str, kernel))}). Kernel size can't be greater than actual "
                               "input size")
    else:
        if channels != w[0]:
            raise RuntimeError(f"Given transposed=1, weight of size {w}, expected input{list(input.shape)} to have "
                               f"{w[0]} channels, but got {channels} channels instead")
        if bias is not None and (bias.dim() != 1 or bias.shape[0] != w[1] * groups):
            raise RuntimeError(f"Given transposed=1, weight of size {w}, expected bias to be 1-dimensional with "
                               f"{w[1] * groups} elements, but got bias of size {list(bias.shape)} instead")
    for other in (weight, bias):
        if other is not None and other.dtype is not input.dtype:
            raise RuntimeError(f"expected scalar type {_scalar_type(input)} but found {_scalar_type(other)}")


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """Cross-correlation of a (N, C, H, W) or (C, H, W) input with a (O, C / groups, kh, kw) weight; groups run as
    separate convolutions over their channel slices, concatenated."""
    stride, dilation = _pair(stride), _pair(dilation)
    padding, extra = _conv_padding(padding, tuple(weight.shape[2:]), stride, dilation, 2)
    if extra is not None and extra[0::2] == extra[1::2]:   # 'same' of odd kernels: 1.13 pads inside the convolution
        padding, extra = tuple(reversed(extra[0::2])), None
    if input.dim() == 3:   # unbatched: 1.13 convolves input.unsqueeze(0) and squeezes the batch dim off
        return conv2d(input.unsqueeze(0), weight, bias, stride, padding if extra is None else "same", dilation,
                      groups).squeeze(0)
    if input.dim() != 4:
        raise RuntimeError(f"Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: "
                           f"{list(input.shape)}")
    if extra is not None:
        input = pad(input, extra)
    _check_convolution(input, weight, bias, stride, padding, dilation, groups, False, bias_type_first=True)
    return recorded("ConvolutionBackward0", [input, weight, bias],
                    lambda: _grouped_conv2d(input, weight, bias, stride, padding, dilation, groups))


def _grouped_conv2d(input, weight, bias, stride, padding, dilation, groups):
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
    if input.dim() == 2:   # unbatched, as conv2d's
        return conv1d(input.unsqueeze(0), weight, bias, stride, padding, dilation, groups).squeeze(0)
    if not isinstance(padding, str):   # 'same' pads as conv2d's; its kernel then fits
        _check_convolution(input, weight, bias, _ntuple(stride, 1), _ntuple(padding, 1), _ntuple(dilation, 1),
                           groups, False)
    return recorded("ConvolutionBackward0", [input, weight, bias], lambda: conv2d(
        input.unsqueeze(-2), weight.unsqueeze(2), bias, (1, _ntuple(stride, 1)[0]), padding_2d,
        (1, _ntuple(dilation, 1)[0]), groups).squeeze(-2))


def _pool1d_stride(stride, kernel):
    """A 1-D pool's stride: the kernel's when none is given (None or an empty list), as 1.13's."""
    if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0):
        return kernel
    return _ntuple(stride, 1)[0]


def _pool1d(pool2d, input, kernel_size, stride, padding, **kwargs):
    if input.dim() not in (2, 3):   # 1.13's texts
        if pool2d is max_pool2d:
            raise RuntimeError(f"max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size "
                               f"for input, but got:{list(input.shape)}")
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.dim()}-dimensional tensor for argument #1 "
                           "'self' (while checking arguments for avg_pool1d)")
    k = _ntuple(kernel_size, 1)[0]
    s = _pool1d_stride(stride, k)
    out = pool2d(input.unsqueeze(-2), (1, k), (1, s), (0, _ntuple(padding, 1)[0]), **kwargs)
    return tuple(t.squeeze(-2) for t in out) if isinstance(out, tuple) else out.squeeze(-2)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    if input.dim() in (2, 3) and not return_indices and not (input.requires_grad and _C.is_grad_enabled()):
        # 1.13's max_pool1d without indices or gradient has a kernel of its own: an empty output is no error there
        k, p, d = _ntuple(kernel_size, 1)[0], _ntuple(padding, 1)[0], _ntuple(dilation, 1)[0]
        s_ = _pool1d_stride(stride, k)
        out = _pool_output_size(input.shape[-1], k, s_, p, d, ceil_mode)
        if out < 0:
            raise RuntimeError(f"max_pool1d() Invalid computed output size: {out}")
        if out == 0 and p <= k // 2:
            return _tensor.empty(*input.shape[:-1], 0, dtype=input.dtype)
    return _pool1d(max_pool2d, input, kernel_size, stride, padding, dilation=(1, _ntuple(dilation, 1)[0]),
                   ceil_mode=ceil_mode, return_indices=return_indices)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    return _pool1d(avg_pool2d, input, kernel_size, stride, padding, ceil_mode=ceil_mode,
                   count_include_pad=count_include_pad)


# ---- adaptive pooling: output cell i of n over an input of size L covers [floor(i L / n), ceil((i + 1) L / n)) ----

def _adaptive_bounds(in_size, out_size):
    return [((i * in_size) // out_size, -((-(i + 1) * in_size) // out_size)) for i in range(out_size)]


def _check_adaptive_input(input, name, n_spatial):
    """1.13's checks of an adaptive pool's input: its rank, and no empty spatial dim."""
    if input.dim() not in (n_spatial + 1, n_spatial + 2):
        raise RuntimeError(f"{name}(): Expected {n_spatial + 1}D or {n_spatial + 2}D tensor, but got "
                           f"{list(input.shape)}")
    for dim in range(input.dim() - n_spatial, input.dim()):
        if input.shape[dim] == 0:
            raise RuntimeError(f"{name}(): Expected input to have non-zero size for non-batch dimensions, but input "
                               f"has sizes {list(input.shape)} with dimension {dim} being empty")


def _adaptive_pool(input, output_size, reduce, name, n_spatial):
    _check_adaptive_input(input, name, n_spatial)
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


def _mean_over(t, d):
    return t.mean(d)


def _adaptive_node(kind, input, output_size, n_spatial):
    """1.13's node of an adaptive pool: a mean over the spatial dims (MeanBackward1) for an average to size 1."""
    sizes = _ntuple(output_size, n_spatial)
    if kind == "Avg" and all(s == 1 for s in sizes):
        return "MeanBackward1"
    return f"Adaptive{kind}Pool{n_spatial}DBackward0"


def _adaptive_pool1d(kind, reduce, input, output_size, name):
    """1.13's 1-D adaptive pools: the 2-D one over input.unsqueeze(-2), squeezed back (the same windows)."""
    if input.dim() not in (2, 3):
        return _adaptive_pool(input, output_size, reduce, name, 1)   # its error
    x = input.unsqueeze(-2)
    size = _ntuple(output_size, 1)[0]
    out = recorded(_adaptive_node(kind, x, (1, size), 2), [x],
                   lambda: _adaptive_pool(x.squeeze(-2), output_size, reduce, name, 1).unsqueeze(-2))
    return out.squeeze(-2)


def adaptive_avg_pool1d(input, output_size):
    return _adaptive_pool1d("Avg", _mean_over, input, output_size, "adaptive_avg_pool1d")


def adaptive_avg_pool2d(input, output_size):
    """Means over 1.13's adaptive windows, per spatial dim in turn (a mean of means of equal-sized rows is the
    window's mean; the sums run in another order than 1.13's kernel)."""
    return recorded(_adaptive_node("Avg", input, output_size, 2), [input],
                    lambda: _adaptive_pool(input, output_size, _mean_over, "adaptive_avg_pool2d", 2))


def _max_over(t, d):
    return t.max(d)[0]


def _adaptive_max_with_indices(input, sizes, name):
    """(values, indices) of 1.13's adaptive max pooling over the last len(sizes) dims: each window's first
    maximum in row-major order (its last NaN, as 1.13's `val > max || isnan(val)` scan), indexed in the flattened
    spatial plane; the values gathered there, so the gradient goes to those elements (duplicates accumulate)."""
    import numpy as np
    n_spatial = len(sizes)
    _check_adaptive_input(input, name, n_spatial)
    spatial = list(input.shape[input.dim() - n_spatial:])
    sizes = [s_ if s_ is not None else in_size for s_, in_size in zip(sizes, spatial)]
    lead = list(input.shape[:input.dim() - n_spatial])
    planes = np.array(input.detach().reshape([-1] + spatial).tolist(), dtype=np.float64).reshape([-1] + spatial)
    bounds = [_adaptive_bounds(in_size, out_size) for in_size, out_size in zip(spatial, sizes)]
    index = np.zeros([planes.shape[0]] + sizes, dtype=np.int64)
    for cell in np.ndindex(*sizes):
        ranges = [range(*bounds[k][c]) for k, c in enumerate(cell)]
        for p in range(planes.shape[0]):
            best, where = -math.inf, -1
            for position in itertools.product(*ranges):
                v = planes[(p,) + position]
                if where < 0 or v > best or math.isnan(v):
                    best, where = v, int(np.ravel_multi_index(position, spatial))
            index[(p,) + cell] = where
    indices = _tensor.tensor(index.tolist(), dtype=_tensor.int64).reshape(lead + sizes)
    flat = input.reshape(lead + [-1])
    values = flat.gather(flat.dim() - 1, indices.reshape(lead + [-1])).reshape(lead + sizes)
    return values, indices


def adaptive_max_pool1d(input, output_size, return_indices=False):
    if return_indices:
        if input.dim() not in (2, 3):
            raise RuntimeError(f"adaptive_max_pool1d(): Expected 2D or 3D tensor, but got {list(input.shape)}")
        return recorded("AdaptiveMaxPool2DBackward0", [input], lambda: _adaptive_max_with_indices(
            input, _ntuple(output_size, 1), "adaptive_max_pool1d"))
    return _adaptive_pool1d("Max", _max_over, input, output_size, "adaptive_max_pool1d")


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    return adaptive_max_pool1d(input, output_size, True)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    return adaptive_max_pool2d(input, output_size, True)


def adaptive_max_pool2d(input, output_size, return_indices=False):
    if return_indices:
        return recorded("AdaptiveMaxPool2DBackward0", [input], lambda: _adaptive_max_with_indices(
            input, _ntuple(output_size, 2), "adaptive_max_pool2d"))
    return recorded("AdaptiveMaxPool2DBackward0", [input],
                    lambda: _adaptive_pool(input, output_size, _max_over, "adaptive_max_pool2d", 2))


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
        raise NotImplementedError("Only 2D, 3D, 4D, 5D padding with non-constant padding are supported for now")
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


def _cubic_weights(in_size, out_size, align_corners, scale):
    """The four source indices (clamped to the input) and Keys-cubic weights (A = -0.75) of each output position,
    from 1.13's bicubic source index (not clamped at 0: a negative one reads the first element), in float32."""
    if align_corners:
        s = _f32(_f32(in_size - 1) / (out_size - 1)) if out_size > 1 else 0.0
    else:
        s = _scale_value(in_size, out_size, scale)
    a = -0.75

    def near(x):   # |x| <= 1
        return _f32(_f32(_f32(_f32(_f32((a + 2) * x) - (a + 3)) * x) * x) + 1)

    def far(x):    # 1 < |x| < 2
        return _f32(_f32(_f32(_f32(_f32(_f32(a * x) - 5 * a) * x) + 8 * a) * x) - 4 * a)

    indices, weights = [[], [], [], []], [[], [], [], []]
    for i in range(out_size):
        src = _f32(s * i) if align_corners else _f32(_f32(s * _f32(i + 0.5)) - 0.5)
        low = int(math.floor(src))
        t = _f32(src - low)
        for k, (offset, w) in enumerate(((-1, far(_f32(t + 1))), (0, near(t)), (1, near(_f32(1 - t))),
                                         (2, far(_f32(_f32(1 - t) + 1))))):
            indices[k].append(min(max(low + offset, 0), in_size - 1))
            weights[k].append(w)
    return indices, weights


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resamples the last 1-3 dims: mode 'nearest' picks 1.13's source element, 'area' averages (adaptive pooling),
    'linear', 'bilinear' and 'trilinear' mix the two neighbours of each dim in turn, 'bicubic' the four (Keys,
    A = -0.75); values within float rounding of 1.13's fused kernels."""
    n_spatial = input.dim() - 2
    if antialias:
        if mode not in ("bilinear", "bicubic") or n_spatial != 2:
            raise ValueError("Anti-alias option is only supported for bilinear and bicubic modes")
        raise NotImplementedError("tinyddp: interpolate(antialias=True) is not supported")
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
    if mode == "bicubic" and n_spatial != 2:
        raise NotImplementedError(f"Got {input.dim()}D input, but bicubic mode needs 4D input")
    if mode not in ("nearest", "nearest-exact", "bicubic") + tuple(linear_modes):
        raise NotImplementedError(f"tinyddp: interpolate mode '{mode}'; nearest, nearest-exact, area, linear, "
                                  "bilinear, bicubic and trilinear are supported")
    kind = {"nearest": "Nearest", "nearest-exact": "NearestExact", "bicubic": "Bicubic", "linear": "Linear",
            "bilinear": "Bilinear", "trilinear": "Trilinear"}[mode]
    return recorded(f"Upsample{kind}{n_spatial}DBackward1", [input],
                    lambda: _resample(input, mode, n_spatial, sizes, scales, align_corners))


def _resample(input, mode, n_spatial, sizes, scales, align_corners):
    out = input
    # the last dim first: 1.13's kernels mix along the width inside the mix along the height
    for k in reversed(range(n_spatial)):
        dim = 2 + k
        in_size, out_size = input.shape[dim], sizes[k]
        shape = [1] * input.dim()
        shape[dim] = out_size
        if mode == "bicubic":
            indices, weights = _cubic_weights(in_size, out_size, align_corners, scales[k])
            terms = [out.index_select(dim, _tensor.tensor(ix, dtype=_tensor.int64))
                     * _tensor.tensor(w, dtype=input.dtype).reshape(shape) for ix, w in zip(indices, weights)]
            out = terms[0] + terms[1] + terms[2] + terms[3]
            continue
        if mode in ("nearest", "nearest-exact"):
            index = (_nearest_index if mode == "nearest" else _nearest_exact_index)(in_size, out_size, scales[k])
            out = out.index_select(dim, _tensor.tensor(index, dtype=_tensor.int64))
            continue
        i0, i1, w0, w1 = _linear_weights(in_size, out_size, align_corners, scales[k])
        a = out.index_select(dim, _tensor.tensor(i0, dtype=_tensor.int64))
        b = out.index_select(dim, _tensor.tensor(i1, dtype=_tensor.int64))
        out = (a * _tensor.tensor(w0, dtype=input.dtype).reshape(shape)
               + b * _tensor.tensor(w1, dtype=input.dtype).reshape(shape))
    return out


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    warnings.warn("nn.functional.upsample is deprecated. Use nn.functional.interpolate instead.")
    return interpolate(input, size, scale_factor, mode, align_corners)


def pixel_shuffle(input, upscale_factor):
    """(*, C r^2, H, W) -> (*, C, H r, W r)."""
    r = upscale_factor
    *lead, c, h, w = input.shape
    if c % (r * r) != 0:
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                           f"upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    n = len(lead)

    def shuffled():
        x = input.reshape(lead + [c // (r * r), r, r, h, w])
        x = x.permute(list(range(n)) + [n, n + 3, n + 1, n + 4, n + 2])
        return x.reshape(lead + [c // (r * r), h * r, w * r])
    return recorded("PixelShuffleBackward0", [input], shuffled)


def pixel_unshuffle(input, downscale_factor):
    """(*, C, H r, W r) -> (*, C r^2, H, W)."""
    r = downscale_factor
    *lead, c, h, w = input.shape
    n = len(lead)

    def unshuffled():
        x = input.reshape(lead + [c, h // r, r, w // r, r])
        x = x.permute(list(range(n)) + [n, n + 2, n + 4, n + 1, n + 3])
        return x.reshape(lead + [c * r * r, h // r, w // r])
    return recorded("PixelUnshuffleBackward0", [input], unshuffled)


# ---- sliding blocks ----

def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """(N, C, H, W) -> (N, C kh kw, L): each column one block, in conv2d's (c, i, j) order."""
    if input.dim() not in (3, 4):
        raise RuntimeError(f"Input Error: Only 3D or 4D input Tensors are supported (got {input.dim()}D)")
    return recorded("Im2ColBackward0", [input], lambda: _im2col(input, kernel_size, dilation, padding, stride))


def _im2col(input, kernel_size, dilation, padding, stride):
    batched, unbatched = _batched(input, "unfold")
    kernel = _pair(kernel_size)
    cols, (out_h, out_w) = _unfold(batched, kernel, _pair(stride), _pair(padding), _pair(dilation))
    n, c = batched.shape[:2]
    out = cols.reshape([n, c * kernel[0] * kernel[1], out_h * out_w])
    return out.squeeze(0) if unbatched else out


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """The adjoint of unfold: (N, C kh kw, L) columns summed back into (N, C, H, W) (overlaps add), as the
    gradient of unfold, which it is here (Col2ImBackward0)."""
    return recorded("Col2ImBackward0", [input], lambda: _col2im(input, output_size, kernel_size, dilation, padding,
                                                                stride))


def _col2im(input, output_size, kernel_size, dilation, padding, stride):
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
        unfolded = _im2col(probe, (kh, kw), dilation, padding, stride)
    out = _grad(unfolded, probe, cols, create_graph=True)[0]
    return out.squeeze(0) if unbatched else out


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
    return _col2im(cols, (out_h, out_w), (kh, kw), dilation, padding, stride)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """The adjoint of conv2d (its gradient wrt the input): weight (C, O / groups, kh, kw)."""
    if input.dim() not in (3, 4):
        raise RuntimeError(f"Expected 3D (unbatched) or 4D (batched) input to conv_transpose2d, but got input of "
                           f"size: {list(input.shape)}")
    if input.dim() == 3:   # unbatched, as conv2d's
        return conv_transpose2d(input.unsqueeze(0), weight, bias, stride, padding, output_padding, groups,
                                dilation).squeeze(0)
    stride, padding, output_padding, dilation = _pair(stride), _pair(padding), _pair(output_padding), _pair(dilation)
    if any(o >= s and o >= d for o, s, d in zip(output_padding, stride, dilation)):
        raise RuntimeError("output padding must be smaller than either stride or dilation")
    _check_convolution(input, weight, bias, stride, padding, dilation, groups, True)
    return recorded("ConvolutionBackward0", [input, weight, bias], lambda: _grouped_conv_transpose2d(
        input, weight, bias, stride, padding, output_padding, groups, dilation))


def _grouped_conv_transpose2d(input, weight, bias, stride, padding, output_padding, groups, dilation):
    x = input
    in_per_group = weight.shape[0] // groups
    outs = [_conv_transpose2d(x.narrow(1, g * in_per_group, in_per_group),
                              weight.narrow(0, g * in_per_group, in_per_group), stride, padding, output_padding,
                              dilation) for g in range(groups)]
    out = outs[0] if groups == 1 else _C.cat(outs, 1)
    if bias is not None:
        out = out + bias.reshape([1, -1, 1, 1])
    return out


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    if input.dim() not in (2, 3):
        raise RuntimeError(f"Expected 2D (unbatched) or 3D (batched) input to conv_transpose1d, but got input of "
                           f"size: {list(input.shape)}")
    if input.dim() == 2:   # unbatched, as conv2d's
        return conv_transpose1d(input.unsqueeze(0), weight, bias, stride, padding, output_padding, groups,
                                dilation).squeeze(0)
    one = lambda v: _ntuple(v, 1)[0]   # noqa: E731
    _check_convolution(input, weight, bias, (one(stride),), (one(padding),), (one(dilation),), groups, True)
    return recorded("ConvolutionBackward0", [input, weight, bias], lambda: conv_transpose2d(
        input.unsqueeze(-2), weight.unsqueeze(2), bias, (1, one(stride)), (0, one(padding)), (0, one(output_padding)),
        groups, (1, one(dilation))).squeeze(-2))


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
    return recorded(_adaptive_node("Avg", input, output_size, 3), [input],
                    lambda: _adaptive_pool(input, output_size, _mean_over, "adaptive_avg_pool3d", 3))


def channel_shuffle(input, groups):
    """(N, g * c, *) -> channels regrouped: the c channels of each group interleaved."""
    n, channels = input.shape[:2]
    rest = list(input.shape[2:])
    return input.reshape([n, groups, channels // groups] + rest).transpose(1, 2).reshape([n, channels] + rest)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """(sum of x^p over each window)^(1/p), 1.13's form: the window's mean times its size."""
    kw, kh = _pair(kernel_size)
    out = avg_pool2d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return (out.sign() * out.abs().clamp_min(0)).mul(kw * kh).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    out = avg_pool1d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return (out.sign() * out.abs().clamp_min(0)).mul(kernel_size).pow(1.0 / norm_type)


# ---- sampling grids (spatial transformers) ----

_ALIGN_CORNERS_WARNING = ("Default grid_sample and affine_grid behavior has changed to align_corners=False since "
                          "1.3.0. Please specify align_corners=True if the old behavior is desired. See the "
                          "documentation of grid_sample for details.")


def _base_coordinates(size, align_corners):
    """The normalized [-1, 1] coordinates of `size` pixel centres (or of the corner pixels, align_corners)."""
    if size == 1:
        return [0.0]
    if align_corners:
        return [-1.0 + 2.0 * i / (size - 1) for i in range(size)]
    return [(2.0 * i + 1.0) / size - 1.0 for i in range(size)]


def affine_grid(theta, size, align_corners=None):
    """The (N, H, W, 2) grid of theta (N, 2, 3) applied to the output pixels' normalized (x, y, 1)."""
    if align_corners is None:
        warnings.warn(_ALIGN_CORNERS_WARNING, stacklevel=2)
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    if len(size) != 4:
        raise NotImplementedError(f"affine_grid only supports 4D sizes, for 2D affine transforms. Got size {size}.")
    if theta.dim() != 3 or list(theta.shape[-2:]) != [2, 3]:
        raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {size}. Got "
                         f"{theta.shape}.")
    n, _, h, w = size
    if align_corners and min(h, w) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size grids when align_corners="
                      "True. This is not an intended use case of affine_grid. See the documentation of affine_grid "
                      "for details.", stacklevel=2)
    xs, ys = _base_coordinates(w, align_corners), _base_coordinates(h, align_corners)
    base = _tensor.tensor([[x, y, 1.0] for y in ys for x in xs], dtype=theta.dtype)   # (H W, 3)
    return recorded("AffineGridGeneratorBackward0", [theta], lambda: base.unsqueeze(0).matmul(   # (N, H W, 2)
        theta.transpose(1, 2)).reshape([n, h, w, 2]))


def _unnormalize(coord, size, align_corners):
    return (coord + 1) / 2 * (size - 1) if align_corners else ((coord + 1) * size - 1) / 2


def _reflect(coord, low, high):
    """coord folded into [low, high] by reflections at both ends (1.13's reflect_coordinates)."""
    if low == high:
        return coord * 0
    span = high - low
    x = (coord - low).abs()
    flips = (x / span).floor()
    extra = x - flips * span
    even = flips.remainder(2) == 0
    return _C.where(even, extra + low, span - extra + low)


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """input (N, C, H, W) sampled at grid (N, Ho, Wo, 2) normalized (x, y): bilinear mixes the four neighbours,
    nearest picks the closest (ties to even); padding_mode 'zeros' reads 0 outside, 'border' clamps and
    'reflection' reflects the coordinates. Differentiable in input and grid."""
    if mode not in ("bilinear", "nearest"):
        if mode == "bicubic":
            raise NotImplementedError("tinyddp: grid_sample mode 'bicubic'; bilinear and nearest are supported")
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', but "
                         f"got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn(_ALIGN_CORNERS_WARNING, stacklevel=2)
        align_corners = False
    if input.dim() != 4:
        raise NotImplementedError("tinyddp: grid_sample on 4-D inputs only")
    return recorded("GridSampler2DBackward0", [input, grid],
                    lambda: _grid_sample(input, grid, mode, padding_mode, align_corners))


def _grid_sample(input, grid, mode, padding_mode, align_corners):
    n, c, h, w = input.shape
    _, out_h, out_w, _ = grid.shape
    ix = _unnormalize(grid.narrow(3, 0, 1).squeeze(3), w, align_corners)   # (N, Ho, Wo)
    iy = _unnormalize(grid.narrow(3, 1, 1).squeeze(3), h, align_corners)
    if padding_mode == "border":
        ix, iy = ix.clamp(0, w - 1), iy.clamp(0, h - 1)
    elif padding_mode == "reflection":
        if align_corners:
            ix, iy = _reflect(ix, 0, w - 1), _reflect(iy, 0, h - 1)
        else:
            ix, iy = _reflect(ix, -0.5, w - 0.5).clamp(0, w - 1), _reflect(iy, -0.5, h - 0.5).clamp(0, h - 1)
    flat = input.reshape([n, c, h * w])

    def read(x, y):
        """input at integer (x, y) per output point, 0 outside: (N, C, Ho, Wo)."""
        inside = (x >= 0).logical_and(x <= w - 1).logical_and(y >= 0).logical_and(y <= h - 1)
        index = (y.clamp(0, h - 1) * w + x.clamp(0, w - 1)).to(_tensor.int64).reshape([n, 1, out_h * out_w])
        values = flat.gather(2, index.expand([n, c, out_h * out_w])).reshape([n, c, out_h, out_w])
        return values * inside.to(input.dtype).unsqueeze(1)

    if mode == "nearest":
        return read(ix.detach().round(), iy.detach().round())
    x0, y0 = ix.detach().floor(), iy.detach().floor()
    x1, y1 = x0 + 1, y0 + 1
    wx1, wy1 = ix - x0, iy - y0
    wx0, wy0 = x1 - ix, y1 - iy
    return (read(x0, y0) * (wx0 * wy0).unsqueeze(1) + read(x1, y0) * (wx1 * wy0).unsqueeze(1)
            + read(x0, y1) * (wx0 * wy1).unsqueeze(1) + read(x1, y1) * (wx1 * wy1).unsqueeze(1))


# ---- volumes: each depth tap a 2-D convolution or pool over the selected slices ----
# Legend: D = depth, Do = output depth. A (N, C, D, H, W) volume's slices od * stride + kd * dilation of each
# kernel tap kd are gathered as (N Do, C, H, W) images, handed to the 2-D op, and combined over the taps.

def _triple(v):
    return _ntuple(v, 3)


def _depth_taps(input, kernel_d, stride_d, padding_d, dilation_d, fill):
    """Per depth tap, the (N Do, C, H, W) images it reads, and Do."""
    n, c, depth, h, w = input.shape
    if padding_d:
        input = pad(input, (0, 0, 0, 0, padding_d, padding_d), value=fill)
        depth += 2 * padding_d
    out_d = (depth - dilation_d * (kernel_d - 1) - 1) // stride_d + 1
    if out_d <= 0:
        raise RuntimeError(f"Calculated output depth ({out_d}) is too small")
    taps = []
    for kd in range(kernel_d):
        index = _tensor.tensor([od * stride_d + kd * dilation_d for od in range(out_d)], dtype=_tensor.int64)
        picked = input.index_select(2, index)                                   # (N, C, Do, H, W)
        taps.append(picked.permute([0, 2, 1, 3, 4]).reshape([n * out_d, c, h, w]))
    return taps, out_d


def _volumes(images, n, out_d):
    """(N Do, O, Ho, Wo) back to (N, O, Do, Ho, Wo)."""
    _, o, ho, wo = images.shape
    return images.reshape([n, out_d, o, ho, wo]).permute([0, 2, 1, 3, 4])


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """Cross-correlation of (N, C, D, H, W) with (O, C / groups, kd, kh, kw): the sum over depth taps of 2-D
    convolutions."""
    stride, dilation = _triple(stride), _triple(dilation)
    padding, extra = _conv_padding(padding, tuple(weight.shape[2:]), stride, dilation, 3)
    if input.dim() == 4:   # unbatched, as conv2d's
        return conv3d(input.unsqueeze(0), weight, bias, stride, padding if extra is None else "same", dilation,
                      groups).squeeze(0)
    x, _ = _batched(input, "conv3d", 3)
    if extra is not None:
        x = pad(x, extra)
    _check_convolution(x, weight, bias, stride, padding, dilation, groups, False, bias_type_first=True)
    return recorded("ConvolutionBackward0", [x, weight, bias],
                    lambda: _conv3d(x, weight, bias, stride, padding, dilation, groups))


def _conv3d(x, weight, bias, stride, padding, dilation, groups):
    n = x.shape[0]
    taps, out_d = _depth_taps(x, weight.shape[2], stride[0], padding[0], dilation[0], 0.0)
    out = None
    for kd, images in enumerate(taps):
        part = conv2d(images, weight.select(2, kd), None, stride[1:], padding[1:], dilation[1:], groups)
        out = part if out is None else out + part
    out = _volumes(out, n, out_d)
    if bias is not None:
        out = out + bias.reshape([1, -1, 1, 1, 1])
    return out


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    if ceil_mode or return_indices:
        raise NotImplementedError("tinyddp: max_pool3d without ceil_mode and return_indices only")
    return recorded("MaxPool3DWithIndicesBackward0", [input],
                    lambda: _max_pool3d(input, kernel_size, stride, padding, dilation))


def _max_pool3d(input, kernel_size, stride, padding, dilation):
    kernel = _triple(kernel_size)
    stride = _triple(stride if stride is not None and stride != [] else kernel_size)
    padding, dilation = _triple(padding), _triple(dilation)
    x, unbatched = _batched(input, "max_pool3d", 3)
    taps, out_d = _depth_taps(x, kernel[0], stride[0], padding[0], dilation[0], -math.inf)
    out = None
    for images in taps:
        part = max_pool2d(images, kernel[1:], stride[1:], padding[1:], dilation[1:])
        out = part if out is None else _C.where(part > out, part, out)
    out = _volumes(out, x.shape[0], out_d)
    return out.squeeze(0) if unbatched else out


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    if ceil_mode or not count_include_pad or divisor_override is not None:
        raise NotImplementedError("tinyddp: avg_pool3d without ceil_mode, count_include_pad=False and "
                                  "divisor_override only")
    return recorded("AvgPool3DBackward0", [input], lambda: _avg_pool3d(input, kernel_size, stride, padding))


def _avg_pool3d(input, kernel_size, stride, padding):
    kernel = _triple(kernel_size)
    stride = _triple(stride if stride is not None and stride != [] else kernel_size)
    padding = _triple(padding)
    x, unbatched = _batched(input, "avg_pool3d", 3)
    taps, out_d = _depth_taps(x, kernel[0], stride[0], padding[0], 1, 0.0)
    out = None
    for images in taps:
        part = avg_pool2d(images, kernel[1:], stride[1:], padding[1:])
        out = part if out is None else out + part
    out = _volumes(out / kernel[0], x.shape[0], out_d)
    return out.squeeze(0) if unbatched else out


def adaptive_max_pool3d(input, output_size, return_indices=False):
    if return_indices:
        raise NotImplementedError("tinyddp: adaptive_max_pool3d without return_indices only")
    return recorded("AdaptiveMaxPool3DBackward0", [input],
                    lambda: _adaptive_pool(input, output_size, _max_over, "adaptive_max_pool3d", 3))


# ---- unpooling: each value back at the position max_pool recorded ----

def _max_unpool(input, indices, spatial, kernel_size, stride, padding, output_size, name):
    kernel = _ntuple(kernel_size, spatial)
    stride = _ntuple(stride if stride is not None else kernel_size, spatial)
    padding = _ntuple(padding, spatial)
    in_sizes = list(input.shape[-spatial:])
    default = [(in_sizes[d] - 1) * stride[d] - 2 * padding[d] + kernel[d] for d in range(spatial)]
    sizes = default if output_size is None else list(output_size)[-spatial:]
    lead = list(input.shape[:-spatial])
    plane = 1
    for s in sizes:
        plane *= s
    values = input.reshape(lead + [-1])
    where = indices.reshape(lead + [-1])
    # (..., L, plane) one-hot of each value's position. 1.13 writes the values in order (a position that
    # overlapping windows picked twice holds its last write) and its gradient reads every value's position, so
    # the values come from the last writes and the gradient flows through the sum of all of them.
    positions = _tensor.arange(plane).reshape([1] * len(lead) + [1, plane])
    hits = (where.unsqueeze(-1) == positions).to(input.dtype)
    length = where.shape[-1]
    order = _tensor.arange(length)
    later = order.reshape([1, -1]) > order.reshape([-1, 1])                         # (L, L'): l' after l
    overwritten = ((where.unsqueeze(-1) == where.unsqueeze(-2)).logical_and(later)).any(-1)
    summed = (hits * values.unsqueeze(-1)).sum(-2)
    written = (hits * (values * (~overwritten).to(input.dtype)).unsqueeze(-1)).sum(-2).detach()
    out = written + (summed - summed.detach())
    return out.reshape(lead + sizes)


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return _max_unpool(input, indices, 1, kernel_size, stride, padding, output_size, "max_unpool1d")


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return recorded("MaxUnpool2DBackward0", [input], lambda: _max_unpool(input, indices, 2, kernel_size, stride,
                                                                          padding, output_size, "max_unpool2d"))
