"""torch functions and Tensor methods of elementwise math, products and statistics that the engine has no kernel
for: tan, the inverse and hyperbolic trig functions, log2/log10, fmod, hypot, logaddexp, xlogy, logit, lerp,
addcmul/addcdiv, nan_to_num, median/kthvalue/quantile/mode, nansum/nanmean, std_mean/var_mean,
and the searches (searchsorted, bucketize, histc). The random forms are in _tensor_random.py.

Functions without an engine op are evaluated on the host in float64 from the detached values and rounded once
to the dtype (1.13's kernels are within an ulp of that); their gradient is attached by _host_function (an
autograd.Function whose backward is written with differentiable ops, so create_graph works). Each op is recorded as
1.13's one node (tinyddp/_node.py), so grad_fn names are 1.13's.
"""
import builtins
import math

import numpy as np

from tinyddp import _C, _tensor, _tensor_ops, return_types
from tinyddp._node import recorded
from tinyddp._tensor import Tensor, _wrap_dim
from tinyddp._tensor_forms import isnan
from tinyddp._tensor_ops import _result_type


def _tensor_of(value, like):
    return value if isinstance(value, Tensor) else _tensor.tensor(value, dtype=like.dtype)


def _float_dtype(x):
    return x.dtype if x.is_floating_point() else _tensor.float32


def _from_host(array, dtype):
    """A float64 NumPy array rounded once to dtype (a tensor without history); a 0-d array stays 0-dim."""
    shape = np.shape(array)
    return _tensor.from_numpy(np.ascontiguousarray(array, dtype=np.float64).reshape(shape)).to(dtype)


def _host(x):
    return x.detach().to(_tensor.float64).numpy()


class _HostFunction:
    """value (computed on the host) with the gradient sum_i grad * derivative_i(inputs): derivative_i written with
    engine ops, so a second derivative (create_graph) is that of the formula; one node named `name`."""

    @staticmethod
    def apply(value, inputs, derivatives, name, saves_result=False):
        from tinyddp.autograd.function import Function

        class Host(Function):
            @staticmethod
            def forward(ctx, *args):
                ctx.save_for_backward(*args)
                return value

            @staticmethod
            def backward(ctx, grad):
                args = ctx.saved_tensors
                grads = []
                for a, d in zip(args, derivatives):
                    if not a.requires_grad:
                        grads.append(None)
                        continue
                    g = grad * d(*args)
                    grads.append(_sum_to(g, a.shape))
                return tuple(grads)
        return recorded(name, inputs, lambda: Host.apply(*inputs), saved_outputs=(0,) if saves_result else ())


def _sum_to(grad, shape):
    """grad summed down to shape (a broadcast operand's gradient)."""
    shape = list(shape)
    lead = grad.dim() - len(shape)
    if lead:
        grad = grad.sum(list(range(lead)))
    dims = [d for d, s in enumerate(shape) if s == 1 and grad._shape()[d] != 1]
    return grad.sum(dims, True) if dims else grad


def _libm(name):
    """The C library's float and double `name` (glibc's asinhf/asinh, ...), or None where it cannot be loaded."""
    try:
        import ctypes
        import ctypes.util
        lib = ctypes.CDLL(ctypes.util.find_library("m"))
        single, double = getattr(lib, name + "f"), getattr(lib, name)
    except (OSError, AttributeError, TypeError):
        return None
    single.restype, single.argtypes = ctypes.c_float, [ctypes.c_float]
    double.restype, double.argtypes = ctypes.c_double, [ctypes.c_double]
    return single, double


def _elementwise_libm(name, np_fn):
    """A unary function 1.13 computes with the C library's float or double function (not a vectorized one): that
    function itself, element by element (so bitwise on the same C library); np_fn in float64 without it."""
    functions = _libm(name)

    def fn(input):
        x = input if input.is_floating_point() else input.to(_tensor.float32)
        node = name.capitalize() + "Backward0"
        if functions is None:
            return _host_function(np_fn, _DERIVATIVES[name], x, name=node)
        f = functions[0] if x.dtype is _tensor.float32 else functions[1]
        value = _tensor.tensor([f(v) for v in x.detach().reshape([-1]).tolist()], dtype=_tensor.float64)
        value = value.to(x.dtype).reshape(list(x._shape()))
        return _HostFunction.apply(value, [x], _DERIVATIVES[name], node) if x.requires_grad else value
    fn.__name__ = fn.__qualname__ = name
    return fn


def _check_broadcast(*operands):
    """1.13's text when the tensors among operands do not broadcast together (checked before dtype errors)."""
    from tinyddp._tensor_forms import _broadcast_shape
    tensors = [t for t in operands if isinstance(t, Tensor)]
    shape = tensors[0]._shape() if tensors else []
    for t in tensors[1:]:
        shape = _broadcast_shape(shape, t._shape())


def _host_function(np_fn, derivatives, *inputs, name, saves_result=False):
    """np_fn over the float64 values of inputs (broadcast), in the result dtype, differentiable by derivatives
    (the node `name`; saves_result: 1.13's node saves its result, so an in-place change of it before the backward
    raises 1.13's error)."""
    tensors = [i for i in inputs if isinstance(i, Tensor)]
    _check_broadcast(*tensors)   # 1.13's text for shapes that do not broadcast (before NumPy's)
    probe = tensors[0]
    for t in tensors[1:]:
        probe = probe * 0 + t * 0 if probe.dtype is not t.dtype else probe
    dtype = _float_dtype(probe)
    inputs = [i.to(dtype) if isinstance(i, Tensor) and not i.is_floating_point() else
              (i if isinstance(i, Tensor) else _tensor.tensor(i, dtype=dtype)) for i in inputs]
    with np.errstate(all="ignore"):
        value = _from_host(np_fn(*[_host(i) for i in inputs]), dtype)
    if not builtins.any(i.requires_grad for i in inputs):
        return value
    return _HostFunction.apply(value, inputs, derivatives, name, saves_result)


# ---- elementwise ----

def tan(input):
    return _host_function(np.tan, [lambda x: 1 + x.tan() * x.tan()], input, name="TanBackward0", saves_result=True)


def asin(input):
    return _host_function(np.arcsin, [lambda x: (1 - x * x).rsqrt()], input, name="AsinBackward0")


def acos(input):
    return _host_function(np.arccos, [lambda x: -(1 - x * x).rsqrt()], input, name="AcosBackward0")


def atan(input):
    return _host_function(np.arctan, [lambda x: 1 / (1 + x * x)], input, name="AtanBackward0")


def atan2(input, other):
    return _host_function(np.arctan2, [lambda y, x: x / (x * x + y * y), lambda y, x: -y / (x * x + y * y)],
                          input, other, name="Atan2Backward0")


def sinh(input):
    return _host_function(np.sinh, [lambda x: x.cosh()], input, name="SinhBackward0")


def cosh(input):
    return _host_function(np.cosh, [lambda x: x.sinh()], input, name="CoshBackward0")


_DERIVATIVES = {"asinh": [lambda x: (x * x + 1).rsqrt()], "acosh": [lambda x: (x * x - 1).rsqrt()],
                "atanh": [lambda x: 1 / (1 - x * x)]}
asinh = _elementwise_libm("asinh", np.arcsinh)
acosh = _elementwise_libm("acosh", np.arccosh)
atanh = _elementwise_libm("atanh", np.arctanh)


def log2(input):
    return _host_function(np.log2, [lambda x: 1 / (x * math.log(2.0))], input, name="Log2Backward0")


def log10(input):
    return _host_function(np.log10, [lambda x: 1 / (x * math.log(10.0))], input, name="Log10Backward0")


def exp2(input):
    return _host_function(np.exp2, [lambda x: exp2(x) * math.log(2.0)], input, name="Exp2Backward0",
                          saves_result=True)


def hypot(input, other):
    _check_broadcast(input, other)
    if not input.is_floating_point() and not (isinstance(other, Tensor) and other.is_floating_point()):
        from tinyddp._tensor_reduce import result_type, scalar_name
        kind = result_type(input, other) if isinstance(other, Tensor) else input.dtype
        raise RuntimeError(f'"hypot_cpu" not implemented for \'{scalar_name(kind)}\'')
    return _host_function(np.hypot, [lambda a, b: a / hypot(a, b), lambda a, b: b / hypot(a, b)], input, other, name="HypotBackward0")


def _int_fmod(x, y):
    """C's % on int64 (the dividend's sign), exactly: math.fmod would round both to float64 first."""
    r = builtins.abs(x) % builtins.abs(y)
    return -r if x < 0 else r


def fmod(input, other):
    """The remainder with the dividend's sign (C's fmod); the gradient is 1 to input, as 1.13's FmodBackward0 (no
    gradient to a tensor divisor: 1.13's FmodBackward1 gives it -trunc(input / other))."""
    out = _tensor_ops._host_elementwise(input, other, "fmod", _int_fmod,
                                        lambda x, y: math.fmod(x, y) if y != 0 and math.isfinite(x) else math.nan)
    if isinstance(input, Tensor) and input.requires_grad:
        return recorded("FmodBackward0", [input], lambda: out + (input - input.detach()))
    return out


def logaddexp(input, other):
    """log(exp(a) + exp(b)) as max(a, b) + log1p(exp(-|a - b|)); equal infinities give themselves
    (LogaddexpBackward0)."""
    from tinyddp._tensor_reduce import result_type, scalar_name
    dtype = result_type(input, other)   # a bool operand is computed in the other's float
    if not dtype.is_floating_point:
        raise RuntimeError(f"\"logaddexp_cpu\" not implemented for '{scalar_name(dtype)}'")
    a, b = input.to(dtype), other.to(dtype)
    return recorded("LogaddexpBackward0", [input, other], lambda: _logaddexp(a, b))


def _logaddexp(input, other):
    m = input.maximum(other) if not _has_inf(input, other) else _where_max(input, other)
    out = m + (-(input - other).abs()).exp().log1p()
    same_inf = (input == other) & (input.abs() == math.inf)
    return _C.where(same_inf, input, out) if builtins.bool(same_inf.any()) else out


def _has_inf(*tensors):
    return builtins.any(builtins.bool((t.detach().abs() == math.inf).any()) for t in tensors)


def _where_max(a, b):
    return _C.where(a >= b, a, b)


def logaddexp2(input, other):
    return recorded("Logaddexp2Backward0", [input, other],
                    lambda: _logaddexp(input * math.log(2.0), other * math.log(2.0)) / math.log(2.0))


def xlogy(input, other):
    """input * log(other), 0 where input is 0 (unless other is NaN): XlogyBackward0, and XlogyBackward1 or 2 with
    a number for input or other, as 1.13's."""
    node, edges = "XlogyBackward0", [input, other]
    if not isinstance(input, Tensor):
        node, edges = "XlogyBackward1", [other]
        input = _tensor.tensor(input, dtype=_float_dtype(other))
    if not isinstance(other, Tensor):
        node, edges = "XlogyBackward2", [input]
        other = _tensor.tensor(other, dtype=_float_dtype(input))
    return recorded(node, edges, lambda: _xlogy(input, other))


def _xlogy(input, other):
    product = input * other.log()
    zero = (input == 0) & (other == other)
    return _C.where(zero, _tensor.zeros([], dtype=product.dtype), product)


def logit(input, eps=None):
    """log(x / (1 - x)), x clamped to [eps, 1 - eps] first when eps is given (LogitBackward0)."""
    def composed():
        x = input if eps is None else input.clamp(eps, 1 - eps)
        return (x / (1 - x)).log()
    return recorded("LogitBackward0", [input], composed)


def heaviside(input, values):
    """0 below zero, 1 above, values' element at zero (no gradient, as 1.13's)."""
    if input.dtype is not values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes")
    positive = (input > 0).to(input.dtype)
    return _C.where(input == 0, values.detach(), positive)


def _fused(x, y, z, composed):
    """x * y + z rounded once, as 1.13's vectorized kernels (one fused multiply-add) give it: for float32 the
    product is exact in float64, so the float64 sum rounded to float32 is the fused result (barring a double
    rounding); float64 operands are left to the composed form. Differentiable as `composed` (the same formula)."""
    if composed.dtype is not _tensor.float32:
        return composed
    xs, ys, zs = (_host(t) if isinstance(t, Tensor) else np.float64(np.float32(t)) for t in (x, y, z))
    exact = _tensor.from_numpy(np.ascontiguousarray(xs * ys + zs).astype(np.float32)).reshape(list(composed.shape))
    return composed + (exact - composed).detach() if composed.requires_grad else exact


def lerp(input, end, weight):
    """input + weight * (end - input), written from the end for weight >= 0.5 as 1.13's kernel (so that
    lerp(a, b, 1) is b exactly), each one fused multiply-add (LerpBackward0, LerpBackward1 for a tensor weight)."""
    names = {"float32": "float", "float64": "double", "int64": "long int", "bool": "bool"}
    for what, t in (("end", end), ("weight", weight)):   # 1.13 wants one dtype, and says so before broadcasting
        if isinstance(t, Tensor) and t.dtype is not input.dtype:
            raise RuntimeError(f"expected dtype {names[repr(input.dtype)[6:]]} for `{what}` but got dtype "
                               f"{names[repr(t.dtype)[6:]]}")
    _check_broadcast(input, end, weight)
    if not input.is_floating_point():
        from tinyddp._tensor_reduce import scalar_name
        kernel = "lerp_kernel_tensor" if isinstance(weight, Tensor) else "lerp_kernel_scalar"
        raise RuntimeError(f'"{kernel}" not implemented for \'{scalar_name(input.dtype)}\'')
    node, edges = ("LerpBackward1", [input, end, weight]) if isinstance(weight, Tensor) else ("LerpBackward0",
                                                                                            [input, end])
    return recorded(node, edges, lambda: _lerp(input, end, _tensor_of(weight, input)))


def _lerp(input, end, weight):
    span = end - input
    low = _fused(weight, span, input, input + weight * span)
    rest = 1 - weight
    high = _fused(-span, rest, end, end - span * rest)
    return _C.where(weight.abs() < 0.5, low, high)


def addcmul(input, tensor1, tensor2, *, value=1):
    """input + value * tensor1 * tensor2 as 1.13's kernel: (value * t1) * t2 + input, one fused multiply-add."""
    if builtins.all(t.dtype is _tensor.bool for t in (input, tensor1, tensor2)):
        _check_broadcast(input, tensor1, tensor2)
        raise RuntimeError('"addcmul_cpu_out" not implemented for \'Bool\'')
    def composed():
        scaled = tensor1 * value if value != 1 else tensor1
        return _fused(scaled, tensor2, input, input + scaled * tensor2)
    return recorded("AddcmulBackward0", [input, tensor1, tensor2], composed)


def addcdiv(input, tensor1, tensor2, *, value=1):
    """input + value * tensor1 / tensor2, in 1.13's order: (value * t1) / t2."""
    if not input.is_floating_point() and not tensor1.is_floating_point() and not tensor2.is_floating_point():
        raise RuntimeError("Integer division with addcdiv is no longer supported, and in a future  release addcdiv "
                           "will perform a true division of tensor1 and tensor2. The historic addcdiv behavior can "
                           "be implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for "
                           "integer inputs and as (input + value * tensor1 / tensor2) for float inputs. The future "
                           "addcdiv behavior is just the latter implementation: (input + value * tensor1 / "
                           "tensor2), for all dtypes.")
    return recorded("AddcdivBackward0", [input, tensor1, tensor2],
                    lambda: input + (tensor1 * value if value != 1 else tensor1) / tensor2)


def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    """NaN, +inf and -inf replaced (by 0 and the dtype's largest and lowest finite values by default)."""
    if not input.is_floating_point():
        return input.clone()
    return recorded("NanToNumBackward0", [input], lambda: _nan_to_num(input, nan, posinf, neginf))


def _nan_to_num(input, nan, posinf, neginf):
    big = 3.4028234663852886e38 if input.dtype is _tensor.float32 else 1.7976931348623157e308
    posinf = big if posinf is None else posinf
    neginf = -big if neginf is None else neginf
    out = _C.where(input != input, _tensor.tensor(nan, dtype=input.dtype), input)
    out = _C.where(input == math.inf, _tensor.tensor(posinf, dtype=input.dtype), out)
    return _C.where(input == -math.inf, _tensor.tensor(neginf, dtype=input.dtype), out)


_bool_and, _bool_or, _bool_xor = Tensor.logical_and, Tensor.logical_or, Tensor.logical_xor   # the engine's, bool only


def logical_and(input, other):
    return _bool_and(_as_bool(input), _as_bool(other))


def logical_or(input, other):
    return _bool_or(_as_bool(input), _as_bool(other))


def logical_xor(input, other):
    return _bool_xor(_as_bool(input), _as_bool(other))


def _as_bool(t):
    return t if t.dtype is _tensor.bool else t != 0


# ---- products ----

# ---- order statistics ----

_MedianResult, _KthvalueResult, _ModeResult, _NanmedianResult = (
    return_types.median, return_types.kthvalue, return_types.mode, return_types.nanmedian)


def _reduced_dim(input, dim, name):
    """dim wrapped, and 1.13's IndexError when it is empty (the order statistics have no identity)."""
    d = _wrap_dim(dim, input.dim())
    if input.dim() and input._shape()[d] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
    return d


def _not_for_bool(input, kernel, runs=True):
    """1.13's error for a kernel without a bool version, where that kernel runs (`runs`)."""
    if input.dtype is _tensor.bool and runs:
        raise RuntimeError(f'"{kernel}" not implemented for \'Bool\'')


def _squeezed(result, input, d, keepdim):
    """(values, indices) without dim d unless keepdim (a 0-dim input's stay 0-dim)."""
    values, indices = result
    if input.dim() and not keepdim:
        values, indices = values.squeeze(d), indices.squeeze(d)
    return values, indices


def _pick_along(input, d, keepdim, pick):
    """(values, indices): in each line along d the element at index pick(line) (a list of Python numbers); the
    values gathered from input, so the gradient goes to that element."""
    return _squeezed(_tensor_ops._select_along(input, d, 1, lambda row: [pick(row)]), input, d, keepdim)


def kthvalue(input, k, dim=-1, keepdim=False):
    """The k-th smallest element along dim (k from 1) and its index, which among equal values is the one 1.13's
    partial quicksort leaves there (engine/ops/order.cpp; KthvalueBackward0)."""
    d = _reduced_dim(input, dim, "kthvalue")
    size = input._shape()[d] if input.dim() else 1
    if not 1 <= k <= size:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    _not_for_bool(input, "kthvalue_cpu", runs=input.dim() > 0)
    return _KthvalueResult(recorded("KthvalueBackward0", [input], lambda: _squeezed(_tensor_ops._take_along(
        input, d, input.detach()._kthvalue_indices(k, d)), input, d, keepdim)))


def _stable_rank(row, rank):
    return sorted(range(len(row)), key=row.__getitem__)[rank]


def _median_index(row):
    """1.13's median along a dim: the first NaN if any, else the ((n - 1) // 2)-th smallest, equal values ranked
    by index (its nth_element compares indices at ties)."""
    for j, v in enumerate(row):
        if v != v:
            return j
    return _stable_rank(row, (len(row) - 1) // 2)


def _nanmedian_index(row):
    """The median of the non-NaN values (ranked as median's); index 0 for a line of NaNs."""
    kept = [j for j, v in enumerate(row) if v == v]
    if not kept:
        return 0
    return kept[_stable_rank([row[j] for j in kept], (len(kept) - 1) // 2)]


def _evenly_distributed(input, value, name):
    """value (0-dim, exact) recorded as the node `name`, with 1.13's evenly_distribute_backward as its gradient:
    the gradient shared by every element equal to value (every NaN when value is NaN). 1.13's node saves the input
    and the result."""
    if not (input.requires_grad and _C.is_grad_enabled()):
        return value
    from tinyddp._tensor_reduce import _evenly_distributed_grad, op_with_backward
    return op_with_backward(name, [input], value, lambda g, x: _evenly_distributed_grad(g, x, value), (0,), (0,))


def _whole_median(input, skip_nan):
    """The lower median of all elements (NaN if one is NaN, unless skip_nan; NaN cast to the dtype when there are
    none, as 1.13's: INT64_MIN for int64, True for bool)."""
    flat = input.detach().reshape([-1]).tolist()
    if skip_nan:
        flat = [v for v in flat if v == v]
    if not flat:
        return _tensor.tensor(math.nan, dtype=_tensor.float64).to(input.dtype)
    if builtins.any(v != v for v in flat):
        return _tensor.tensor(math.nan, dtype=input.dtype)
    return _tensor.tensor(sorted(flat)[(len(flat) - 1) // 2], dtype=input.dtype)


def median(input, dim=None, keepdim=False):
    """The lower median (the ((n - 1) // 2)-th smallest): of all elements (0-dim; MedianBackward0, its gradient
    shared by the elements equal to it), or along dim with its index (MedianBackward1); NaN wins, as 1.13's."""
    return _median(input, dim, keepdim, skip_nan=False)


def nanmedian(input, dim=None, keepdim=False):
    """median ignoring NaN (NaN for a line of NaNs): NanmedianBackward0 over all elements, NanmedianBackward1
    along dim."""
    return _median(input, dim, keepdim, skip_nan=True)


def _median(input, dim, keepdim, skip_nan):
    node = "NanmedianBackward" if skip_nan else "MedianBackward"
    if dim is None:
        _not_for_bool(input, "median_cpu", runs=input.numel() > 0)
        return _evenly_distributed(input, _whole_median(input, skip_nan), node + "0")
    d = _reduced_dim(input, dim, "median")
    _not_for_bool(input, "median_out")
    result_type, index = (_NanmedianResult, _nanmedian_index) if skip_nan else (_MedianResult, _median_index)
    return result_type(recorded(node + "1", [input], lambda: _pick_along(input, d, keepdim, index)))


def mode(input, dim=-1, keepdim=False):
    """The most frequent value along dim (the smallest of equally frequent ones) and an index of it, the one
    1.13's CPU kernel reports (engine/ops/order.cpp; ModeBackward0)."""
    d = _reduced_dim(input, dim, "mode")
    return _ModeResult(recorded("ModeBackward0", [input], lambda: _squeezed(_tensor_ops._take_along(
        input, d, input.detach()._mode_indices(d)), input, d, keepdim)))


def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """The q-quantiles (q a number or a 1-D tensor, in [0, 1]) of all elements or along dim: the sorted values
    at rank q * (n - 1), interpolated as 1.13 (lerp of the neighbours for 'linear')."""
    if input.numel() == 0:
        raise RuntimeError("quantile() input tensor must be non-empty")
    if not input.is_floating_point():
        raise RuntimeError("quantile() input tensor must be either float or double dtype")
    if input.dim() == 0:   # one element: as a vector of one, over all elements
        if dim is not None:
            _wrap_dim(dim, 0)
        return quantile(input.reshape([1]), q, None, False, interpolation=interpolation)
    scalar_q = not isinstance(q, Tensor)
    qs = [builtins.float(q)] if scalar_q else q.reshape([-1]).tolist()
    for v in qs:
        if not 0 <= v <= 1:
            raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {v}")
    if dim is None:
        x, d = input.reshape([-1]), 0
    else:
        x, d = input, _wrap_dim(dim, input.dim())
    values = _tensor_ops.sort(x, d)[0]
    n = x._shape()[d] if x.dim() else 1
    outs = []
    for v in qs:
        rank = _tensor.tensor(v * (n - 1), dtype=input.dtype).item() if input.dtype is _tensor.float32 else v * (n - 1)
        below, above = math.floor(rank), math.ceil(rank)
        if interpolation == "lower":
            above = below
        elif interpolation == "higher":
            below = above
        elif interpolation == "nearest":
            below = above = builtins.round(rank)
        lo, hi = values.narrow(d, below, 1), values.narrow(d, above, 1)
        if interpolation == "midpoint":
            out = lerp(lo, hi, 0.5)
        elif interpolation == "linear":
            out = lerp(lo, hi, rank - below)
        else:
            out = lo
        outs.append(out)
    out = _C.cat(outs, d) if len(outs) > 1 else outs[0]
    if keepdim:
        if dim is None:
            out = out.reshape([len(qs)] + [1] * input.dim()) if not scalar_q else out.reshape([1] * input.dim())
        elif not scalar_q:   # (q, ...) with dim kept as 1
            kept = list(input._shape())
            kept[d] = 1
            out = out.movedim(d, 0).reshape([len(qs)] + kept)
        return out
    if dim is None:
        return out.reshape([]) if scalar_q else out.reshape([len(qs)])
    out = out if not scalar_q else out.squeeze(d)
    return out.movedim(d, 0) if not scalar_q else out


def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    if dim is None and not builtins.bool(isnan(input).any()):
        return quantile(input, q, dim, keepdim, interpolation=interpolation)
    if dim is None:
        flat = input.reshape([-1])
        return quantile(flat[flat == flat], q, None, False, interpolation=interpolation)
    raise NotImplementedError("tinyddp: nanquantile along a dim of a tensor holding NaN is not supported")


# ---- reductions skipping NaN ----

def nansum(input, dim=None, keepdim=False, *, dtype=None):
    return recorded("NansumBackward0", [input], lambda: _nansum(input, dim, keepdim, dtype))


def _nansum(input, dim, keepdim, dtype):
    if dtype is not None:
        input = input.to(dtype)
    if input.is_floating_point():
        input = _C.where(input != input, _tensor.zeros([], dtype=input.dtype), input)
    return input.sum(dim, keepdim)


def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    if not input.is_floating_point():
        raise RuntimeError(f"nanmean(): expected input to have floating point dtype but got "
                           f"{_tensor_ops._C_legacy(input.dtype)}")
    count = (input == input).sum(dim, keepdim)
    return nansum(input, dim, keepdim, dtype=dtype) / count


def _check_cov_weights(w, name, observations, floating):
    if w.dim() > 1:
        raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got {name} with {w.dim()} "
                           "dimensions")
    if w.is_floating_point() != floating:
        from tinyddp._tensor_reduce import scalar_name
        kind = "floating point" if floating else "integral"
        raise RuntimeError(f"cov(): expected {name} to have {kind} dtype but got {name} with "
                           f"{scalar_name(w.dtype)} dtype")
    if w.numel() != observations:
        raise RuntimeError(f"cov(): expected {name} to have the same numel as there are observations in the input but "
                           f"got {w.numel()} != {observations}")
    if builtins.bool((w < 0).any()):
        raise RuntimeError(f"cov(): {name} cannot be negative")


def cov(input, *, correction=1, fweights=None, aweights=None):
    """The covariance of the variables (rows) over the observations (columns), as 1.13's: the (frequency times
    analytic) weighted mean removed, in @ (w in)^T over the weights' sum less `correction` (times sum(w aw) /
    sum(w) with analytic weights), squeezed (SqueezeBackward0); a 1-D input is one variable."""
    if input.dim() > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an input with "
                           f"{input.dim()} dimensions")
    if input.dtype is _tensor.bool:
        raise RuntimeError("cov(): bool dtype is not supported for input")
    x = input.view([1, -1]) if input.dim() < 2 else input
    observations = x.shape[1]
    w = None
    if fweights is not None:
        _check_cov_weights(fweights, "fweights", observations, False)
        w = fweights
    if aweights is not None:
        _check_cov_weights(aweights, "aweights", observations, True)
        w = aweights if w is None else w * aweights
    w_sum = w.sum() if w is not None else _tensor.tensor(observations)
    if w is not None and not builtins.bool(w_sum != 0):
        raise RuntimeError("cov(): weights sum to zero, can't be normalized")
    mean = (x * w if w is not None else x).sum(1) / w_sum
    if w is not None and aweights is not None and correction != 0:
        norm = w_sum - correction * (w * aweights).sum() / w_sum
    else:
        norm = w_sum - correction
    if builtins.bool(norm <= 0):
        import warnings
        warnings.warn("cov(): degrees of freedom is <= 0 (Triggered internally at  ./aten/src/ATen/native/"
                      "Correlation.cpp:100.)", stacklevel=2)
        norm = norm * 0
    centered = x - mean.unsqueeze(1)
    return (centered.mm((centered * w if w is not None else centered).t()) / norm).squeeze()


def corrcoef(input):
    """cov(input) normalized by the standard deviations on its diagonal, clipped to [-1, 1] (ClampBackward1); a
    single variable's is c / c (1, or NaN for a zero, infinite or NaN variance)."""
    if input.dim() > 2:
        raise RuntimeError(f"corrcoef(): expected input to have two or fewer dimensions but got an input with "
                           f"{input.dim()} dimensions")
    c = cov(input)
    if c.dim() == 0:
        return c / c
    stddev = c.diag().sqrt()
    c = c / stddev.view([-1, 1])
    c = c / stddev.view([1, -1])
    return c.clip(-1, 1)


def std_mean(input, dim=None, unbiased=True, keepdim=False, *, correction=None):
    """(std, mean) over dims (StdMeanBackward0, the std's gradient 0 where it is 0 as std's)."""
    dim, unbiased = _tensor_ops._var_args(dim, unbiased)
    _tensor_ops._check_var_dtype(input, "std_mean")
    return recorded("StdMeanBackward0", [input], lambda: (
        _tensor_ops._sqrt_of_variance(_tensor_ops._var(input, dim, unbiased, keepdim, correction)),
        input.mean(dim, keepdim)))


def var_mean(input, dim=None, unbiased=True, keepdim=False, *, correction=None):
    dim, unbiased = _tensor_ops._var_args(dim, unbiased)
    _tensor_ops._check_var_dtype(input, "var_mean")
    return recorded("VarMeanBackward0", [input], lambda: (
        _tensor_ops._var(input, dim, unbiased, keepdim, correction), input.mean(dim, keepdim)))


# ---- searches and histograms (host, int64, no gradient) ----

def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None):
    """For each value, the index where it would be inserted into the (innermost) sorted rows to keep them sorted:
    the first such place, or the last when right=True (side='right')."""
    import bisect
    if side is not None:
        right = side == "right"
    scalar = not isinstance(input, Tensor)
    values = _tensor.tensor([input]) if scalar else input
    seq = sorted_sequence
    if sorter is not None:
        seq = _tensor_ops.gather(seq, -1, sorter)
    find = bisect.bisect_right if right else bisect.bisect_left
    if seq.dim() <= 1:
        row = seq.reshape([-1]).tolist()
        out = [find(row, v) for v in values.reshape([-1]).tolist()]
        result = _tensor.tensor(out, dtype=_tensor.int64).reshape(list(values._shape()))
    else:
        rows = seq.reshape([-1, seq._shape()[-1]]).tolist()
        vals = values.reshape([len(rows), -1]).tolist()
        result = _tensor.tensor([[find(r, v) for v in vs] for r, vs in zip(rows, vals)],
                                dtype=_tensor.int64).reshape(list(values._shape()))
    return result.reshape([]) if scalar else result


def bucketize(input, boundaries, *, out_int32=False, right=False):
    return searchsorted(boundaries, input, right=right)


def histc(input, bins=100, min=0, max=0):  # noqa: A002
    """Counts of the elements in bins equal-width bins over [min, max] (the data's range when both are 0),
    elements outside ignored, max in the last bin; input's dtype."""
    if input.dtype is _tensor.bool:   # 1.13 fails computing the bin edges first
        raise RuntimeError("\"linspace_cpu\" not implemented for 'Bool'")
    if not input.is_floating_point():
        raise RuntimeError(f"\"histogram_cpu\" not implemented for '{_tensor_ops._C_legacy(input.dtype)}'")
    values = [v for v in input.reshape([-1]).tolist()]
    lo, hi = builtins.float(min), builtins.float(max)
    if lo == hi and values:
        lo, hi = builtins.min(values), builtins.max(values)
        if builtins.any(v != v for v in values):
            lo = hi = math.nan
    if not (math.isfinite(lo) and math.isfinite(hi)):
        def text(v):   # as C++ streams a double ("-nan" for the NaN 1.13's min/max give)
            return "-nan" if v != v else ("inf" if v == math.inf else "-inf" if v == -math.inf else f"{v:g}")
        raise RuntimeError(f"torch.histc: range of [{text(lo)}, {text(hi)}] is not finite")
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    counts = [0] * bins
    for v in values:
        if lo <= v <= hi:
            k = int((v - lo) * bins / (hi - lo))
            counts[builtins.min(k, bins - 1)] += 1
    return _tensor.tensor(counts, dtype=_tensor.float64).to(input.dtype)


def _install():
    for name, fn in {"tan": tan, "asin": asin, "acos": acos, "atan": atan, "atan2": atan2, "arctan2": atan2,
                     "arcsin": asin, "arccos": acos, "arctan": atan, "sinh": sinh, "cosh": cosh, "asinh": asinh,
                     "acosh": acosh, "atanh": atanh, "log2": log2, "log10": log10, "exp2": exp2, "hypot": hypot,
                     "fmod": fmod, "logaddexp": logaddexp, "logaddexp2": logaddexp2, "xlogy": xlogy, "logit": logit,
                     "heaviside": heaviside, "lerp": lerp, "addcmul": addcmul, "addcdiv": addcdiv,
                     "nan_to_num": nan_to_num, "logical_and": logical_and, "logical_or": logical_or,
                     "logical_xor": logical_xor, "kthvalue": kthvalue,
                     "median": median, "nanmedian": nanmedian, "mode": mode, "quantile": quantile,
                     "nanquantile": nanquantile, "nansum": nansum, "nanmean": nanmean, "histc": histc, "cov": cov,
                     "corrcoef": corrcoef}.items():
        setattr(Tensor, name, fn)
    inplace = _tensor_ops_inplace()
    for name in ("tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "asinh", "acosh", "atanh", "log2", "log10",
                 "exp2", "hypot", "fmod", "xlogy", "logit", "lerp", "addcmul", "addcdiv", "nan_to_num",
                 "logical_and", "logical_or", "logical_xor", "cumprod", "heaviside"):
        setattr(Tensor, name + "_", inplace(getattr(Tensor, name)))


def _install_spellings():
    inplace = _tensor_ops_inplace()
    for name in ("cumsum", "divide", "multiply", "subtract", "true_divide", "negative", "logical_not", "arccos",
                 "arcsin", "arctan", "arctan2"):
        setattr(Tensor, name + "_", inplace(getattr(Tensor, name)))
    for name in ("eq", "ne", "lt", "le", "gt", "ge"):   # the comparison as 0/1 in self's dtype
        setattr(Tensor, name + "_", inplace(lambda self, other, _op=getattr(Tensor, name): _op(self, other)
                                            .to(self.dtype)))
    # squeeze_, unsqueeze_, t_ and transpose_ are the engine's (tensor_bindings.cpp: TBackward1 ... under autograd)
    Tensor.swapaxes_ = Tensor.swapdims_ = Tensor.transpose_


def _tensor_ops_inplace():
    from tinyddp._tensor_forms import _inplace
    return _inplace


arcsin, arccos, arctan, arctan2 = asin, acos, atan, atan2

_install()
_install_spellings()
