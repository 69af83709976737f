"""1.13's other names for ops tinyddp has (torch.concat, greater, ravel, ...), its constants (torch.inf, pi),
the two memory formats that keep a tensor's layout, a few Tensor predicates, and the dtype-promotion queries
(result_type, promote_types, can_cast), by c10's rules.

Only names whose behaviour is the op's own are here: a name 1.13 would compute differently is left out (an
AttributeError tells the script so), e.g. channels_last, which would change a tensor's strides.
"""
import builtins
import math
import numbers

import numpy as np

from tinyddp import _tensor
from tinyddp._tensor import Tensor, dtype
from tinyddp._tensor_forms import dot

inf, nan, pi, e = math.inf, math.nan, math.pi, math.e


class memory_format:
    """torch.memory_format: prints as ``torch.contiguous_format``. tinyddp's tensors are laid out row-major, so
    the formats that keep or ask for that layout are accepted and change nothing."""

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return "torch." + self._name


contiguous_format = memory_format("contiguous_format")
preserve_format = memory_format("preserve_format")


def _check_memory_format(fn, memory_format_):
    if memory_format_ is not None and not isinstance(memory_format_, memory_format):
        raise TypeError(f"{fn}(): argument 'memory_format' must be torch.memory_format, not "
                        f"{type(memory_format_).__name__}")


# ---- other names ----

def detach(input):
    return input.detach()


# the functions tinyddp has under 1.13's other names
concat = _tensor.cat
greater, greater_equal, less, less_equal, not_equal = _tensor.gt, _tensor.ge, _tensor.lt, _tensor.le, _tensor.ne
vdot = dot   # the real dot product (no conjugate on real tensors)


def ravel(input):
    """1.13's: input.contiguous().view(-1) (a view of a contiguous input)."""
    return input.contiguous().view(-1)


def isposinf(input):
    return input == math.inf if input.is_floating_point() else _tensor.zeros_like(input, dtype=_tensor.bool)


def isneginf(input):
    return input == -math.inf if input.is_floating_point() else _tensor.zeros_like(input, dtype=_tensor.bool)


def isreal(input):
    return _tensor.ones_like(input, dtype=_tensor.bool)   # every dtype tinyddp holds is real


def signbit(input):
    """Whether each element's sign bit is set (-0.0 and -nan too), as a bool tensor (no gradient, as 1.13)."""
    return _tensor.from_numpy(np.asarray(np.signbit(input.detach().numpy()))).reshape(tuple(input.shape))


def deg2rad(input):
    if not input.is_floating_point():   # 1.13: an integer or bool tensor is converted to the default dtype first
        input = input.to(_tensor.float32)
    return input * (math.pi / 180)


def rad2deg(input):
    if not input.is_floating_point():
        input = input.to(_tensor.float32)
    return input * (180 / math.pi)


# ---- dtype promotion (c10/core/ScalarType.h, ATen's ResultTypeState) ----

def _category(d):
    return 3 if d.is_complex else 2 if d.is_floating_point else 0 if d is _tensor.bool else 1


def promote_types(type1, type2):
    """The smallest dtype both convert to without losing their category: bool < integers < floats < complex;
    within integers and floats the larger (uint8 with int8 is int16; float16 with bfloat16 is float32); a
    complex dtype with a float one is the complex of the larger precision."""
    for position, d in enumerate((type1, type2), 1):
        if not isinstance(d, dtype):
            raise TypeError(f"promote_types(): argument 'type{position}' (position {position}) must be torch.dtype, "
                            f"not {type(d).__name__}")
    a, b = type1, type2
    if a is b:
        return a
    ca, cb = _category(a), _category(b)
    if ca != cb:
        high, low = (a, b) if ca > cb else (b, a)
        if builtins.max(ca, cb) == 3 and builtins.min(ca, cb) == 2:   # complex with float
            component = builtins.max(high.itemsize // 2, low.itemsize)
            return {2: _tensor.complex32, 4: _tensor.complex64, 8: _tensor.complex128}[component]
        return high
    if ca == 1:   # two integers: uint8 is the only unsigned one
        if a.is_signed != b.is_signed:
            signed = a if a.is_signed else b
            return signed if signed.itemsize > 1 else _tensor.int16
        return a if a.itemsize >= b.itemsize else b
    if {a, b} == {_tensor.float16, _tensor.bfloat16}:
        return _tensor.float32
    return a if a.itemsize >= b.itemsize else b


def _combine_categories(higher, lower):
    """ATen's combine_categories: a higher-priority result keeps its dtype unless the lower one is of a higher
    category (then both promote)."""
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher.is_complex or (not lower.is_complex and higher.is_floating_point):
        return higher
    if higher is _tensor.bool or lower.is_floating_point or lower.is_complex:
        return promote_types(higher, lower)
    return higher


def result_type(tensor, other):
    """The dtype an arithmetic op of the two gives: tensors with dims first, then 0-dim tensors, then Python
    numbers (a float number counts as the default dtype, float32), a later kind only raising the category."""
    results = {"dim": None, "zero": None, "number": None}
    for operand in (tensor, other):
        if isinstance(operand, Tensor):
            kind, d = ("dim" if operand.dim() > 0 else "zero"), operand.dtype
        elif isinstance(operand, builtins.bool):
            kind, d = "number", _tensor.bool
        elif isinstance(operand, numbers.Integral):
            kind, d = "number", _tensor.int64
        elif isinstance(operand, numbers.Real):
            kind, d = "number", _tensor.float32
        elif isinstance(operand, numbers.Complex):
            kind, d = "number", _tensor.complex64
        else:
            raise TypeError(f"result_type() received an invalid combination of arguments - got "
                            f"({type(tensor).__name__}, {type(other).__name__})")
        results[kind] = d if results[kind] is None else promote_types(results[kind], d)
    return _combine_categories(results["dim"], _combine_categories(results["zero"], results["number"]))


def can_cast(from_, to):
    """Whether an in-place op may write a `from_` result into a `to` tensor: never complex to real, floating to
    integral, or anything but bool to bool."""
    if from_.is_complex and not to.is_complex:
        return False
    if from_.is_floating_point and not to.is_floating_point and not to.is_complex:
        return False
    return not (from_ is not _tensor.bool and to is _tensor.bool)


def check_cast(from_, to):
    """1.13's refusal to write a `from_` result into a `to` tensor (in-place ops, out=)."""
    if not can_cast(from_, to):
        from tinyddp._tensor_reduce import scalar_name
        raise RuntimeError(f"result type {scalar_name(from_)} can't be cast to the desired output type "
                           f"{scalar_name(to)}")


# ---- the torch.* spellings of nn.functional's ops ----
# 1.13 exposes the native ops under torch.* with their ATen schemas: the same op as F's where the arguments agree
# (F.conv2d is torch.conv2d there), else a different order or spelling (`train` for `training`, reduction as
# at::Reduction's integer, batch_norm's weight before its running stats), mapped here onto F's.

_SAME_AS_FUNCTIONAL = (
    "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "avg_pool1d", "adaptive_avg_pool1d",
    "pixel_shuffle", "pixel_unshuffle", "channel_shuffle", "selu", "celu", "threshold", "hardshrink", "prelu", "rrelu",
    "pairwise_distance", "pdist", "bilinear")


def _functional():
    from tinyddp.nn import functional
    return functional


def max_pool1d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return _functional().max_pool1d(input, kernel_size, stride or None, padding, dilation, ceil_mode)


def max_pool2d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return _functional().max_pool2d(input, kernel_size, stride or None, padding, dilation, ceil_mode)


def adaptive_max_pool1d(input, output_size):
    """(values, indices), as 1.13's native op returns them."""
    return _functional().adaptive_max_pool1d(input, output_size, return_indices=True)


def dropout(input, p, train):
    return _functional().dropout(input, p, train)


def alpha_dropout(input, p, train):
    return _functional().alpha_dropout(input, p, train)


def feature_alpha_dropout(input, p, train):
    return _functional().feature_alpha_dropout(input, p, train)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05, cudnn_enable=True):
    return _functional().layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05, cudnn_enabled=True):
    return _functional().group_norm(input, num_groups, weight, bias, eps)


def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled):
    return _functional().batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, cudnn_enabled):
    return _functional().instance_norm(input, running_mean, running_var, weight, bias, use_input_stats, momentum,
                                       eps)


def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """The native op's order (weight first); its padding_idx -1 means none."""
    return _functional().embedding(indices, weight, None if padding_idx == -1 else padding_idx,
                                   scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


def _reduction(op, reduction):
    """at::Reduction's integer as F's name: 1 mean, 2 sum, any other integer none, as 1.13's loss kernels read
    it (whose Python binding also defaults it to 0, not to the schema's Mean)."""
    if isinstance(reduction, builtins.bool) or not isinstance(reduction, numbers.Integral):
        raise TypeError(f"{op}(): argument 'reduction' must be int, not {type(reduction).__name__}")
    return {1: "mean", 2: "sum"}.get(builtins.int(reduction), "none")


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction=0):
    return _functional().binary_cross_entropy_with_logits(
        input, target, weight, reduction=_reduction("binary_cross_entropy_with_logits", reduction),
        pos_weight=pos_weight)


def kl_div(input, target, reduction=0, *, log_target=False):
    return _functional().kl_div(input, target, reduction=_reduction("kl_div", reduction), log_target=log_target)


def is_same_size(input, other):
    return input.shape == other.shape


def is_signed(input):
    return input.dtype.is_signed


def rsub(input, other, alpha=1):
    """other - alpha * input."""
    return other.sub(input, alpha=alpha) if isinstance(other, Tensor) else -alpha * input + other


def install(module):
    """Adds the functions to `module` (torch) and the methods to Tensor."""
    for name in _SAME_AS_FUNCTIONAL:
        setattr(module, name, getattr(_functional(), name))
    for name in ("max_pool1d", "max_pool2d", "adaptive_max_pool1d", "dropout", "alpha_dropout",
                 "feature_alpha_dropout", "layer_norm", "group_norm", "batch_norm", "instance_norm", "embedding",
                 "binary_cross_entropy_with_logits", "kl_div", "is_same_size", "is_signed", "rsub"):
        setattr(module, name, globals()[name])
    for name in ("inf", "nan", "pi", "e", "memory_format", "contiguous_format", "preserve_format", "concat",
                 "ravel", "detach", "greater", "greater_equal", "less", "less_equal", "not_equal", "vdot",
                 "isposinf", "isneginf", "isreal", "signbit", "deg2rad", "rad2deg", "promote_types", "result_type",
                 "can_cast"):
        setattr(module, name, globals()[name])
    module.absolute = module.abs
    for name in ("ravel", "greater", "greater_equal", "less", "less_equal", "not_equal", "vdot", "isposinf",
                 "isneginf", "isreal", "signbit", "deg2rad", "rad2deg"):
        setattr(Tensor, name, globals()[name])
    Tensor.absolute_ = Tensor.abs_
    Tensor.deg2rad_ = lambda self: self.mul_(math.pi / 180)
    Tensor.rad2deg_ = lambda self: self.mul_(180 / math.pi)
    Tensor.arctanh = Tensor.atanh
    Tensor.is_cpu = property(lambda self: True)
    Tensor.is_signed = lambda self: self.dtype.is_signed
    Tensor.is_same_size = lambda self, other: self.shape == other.shape

    engine_clone, engine_contiguous = Tensor.clone, Tensor.contiguous

    def clone(self, *, memory_format=None):
        _check_memory_format("clone", memory_format)
        return engine_clone(self)

    def contiguous(self, memory_format=None):
        _check_memory_format("contiguous", memory_format)
        return engine_contiguous(self)

    Tensor.clone, Tensor.contiguous = clone, contiguous
