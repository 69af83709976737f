"""Reductions as 1.13 parses and defines them at the edges: sum/mean with dtype= and every dim form, all/any,
count_nonzero, max/min/argmax/argmin, aminmax, and the running reductions cummax/cummin/logcumsumexp (plus msort).

The rules every reduction here follows (1.13's):
- dims wrap as usual, and a 0-dim tensor takes dim 0 or -1 (its one element): "Dimension out of range (expected to
  be in range of [-1, 0], but got 1)" otherwise (IndexError);
- over an empty dim a reduction with an identity gives it (sum 0, prod 1, all True, any False, mean NaN); one
  without (max, min, argmax, the order statistics) raises IndexError "<op>(): Expected reduction dim D to have
  non-zero size.", and over all elements of an empty tensor "...Expected reduction dim to be specified for
  input.numel() == 0..." (RuntimeError for max/min, IndexError for argmax/argmin);
- dim=() (or dim=None with keepdim=True) reduces every dim as a reduction "over dims" (SumBackward1, MeanBackward1).

The sums and means are the engine's (engine/ops/reduce.cpp); a dtype= casts first, recorded as 1.13's one node
(SumBackward0 with its edge to the input itself). The running extremes are gathers of the input (so the gradient goes
to the element each output came from); logcumsumexp's values are 1.13's kernel's (a running log-add-exp in double)
with its gradient formula written with differentiable ops (so create_graph works).
"""
import builtins
import math
import numbers

import numpy as np

from tinyddp import _C, _tensor, return_types
from tinyddp._node import recorded
from tinyddp._tensor import Tensor, _wrap_dim

_engine_sum = Tensor.sum     # the engine's sum and mean (python/src/tensor_bindings.cpp): dim None, an int or ints
_engine_mean = Tensor.mean

# 1.13's ScalarType names, as its messages print dtypes ("Got: Long")
_SCALAR_NAMES = {"float32": "Float", "float64": "Double", "int64": "Long", "bool": "Bool", "int32": "Int",
                 "int16": "Short", "int8": "Char", "uint8": "Byte", "float16": "Half", "bfloat16": "BFloat16",
                 "complex64": "ComplexFloat", "complex128": "ComplexDouble", "complex32": "ComplexHalf"}


def scalar_name(dtype):
    return _SCALAR_NAMES[repr(dtype)[len("torch."):]]


def _is_all(dim):
    """dim not given, None or an empty sequence: every dim."""
    return dim is None or dim is _NOT_GIVEN or (not isinstance(dim, numbers.Integral) and len(dim) == 0)


def _every_dim(x):
    return list(range(x.dim())) or [0]   # a 0-dim tensor's one "dim" is 0


def _engine_dims(x, dim):
    return _every_dim(x) if _is_all(dim) else dim


class _NotGiven:
    """The default of sum's and mean's dim: 1.13 picks its overload without dims (SumBackward0) only when no dim
    is passed; dim=None passed is the overload over dims (SumBackward1), reducing every dim."""
    def __repr__(self):
        return "None"


_NOT_GIVEN = _NotGiven()


def _over_all(dim, keepdim):
    """The form without dims (SumBackward0, MeanBackward0): no dim passed and no keepdim."""
    return dim is _NOT_GIVEN and not keepdim


# ---- sum and mean ----

_NOT_DIFFERENTIABLE = ('isDifferentiableType(variable.scalar_type()) INTERNAL ASSERT FAILED at '
                       '"./torch/csrc/autograd/functions/utils.h":75, please report a bug to PyTorch. ')


def _sum(x, dim, keepdim):
    return _engine_sum(x) if _over_all(dim, keepdim) else _engine_sum(x, _engine_dims(x, dim), keepdim)


def sum(input, dim=_NOT_GIVEN, keepdim=False, *, dtype=None):  # noqa: A001
    """The sum over dims (all by default); dtype= sums in that dtype (the input cast first, as 1.13's kernel reads
    it), recorded as one SumBackward0/1 with its edge to input; a bool dtype is the "or" of the elements."""
    if dtype is _tensor.bool:   # an "or" of the elements (bool arithmetic saturates)
        return _sum(input != 0, dim, keepdim) != 0
    if dtype is None or dtype is input.dtype:
        return _sum(input, dim, keepdim)
    _tensor._c_dtype(dtype)
    if not dtype.is_floating_point and input.requires_grad and _C.is_grad_enabled():
        _sum(input.detach(), dim, keepdim)   # the dims are checked first
        raise RuntimeError(_NOT_DIFFERENTIABLE)   # 1.13 records a node for an integer result, and fails doing so
    return recorded("SumBackward0" if _over_all(dim, keepdim) else "SumBackward1", [input],
                    lambda: _sum(input.to(dtype), dim, keepdim))


def _mean(x, dim, keepdim):
    return _engine_mean(x) if _over_all(dim, keepdim) else _engine_mean(x, _engine_dims(x, dim), keepdim)


def mean(input, dim=_NOT_GIVEN, keepdim=False, *, dtype=None):
    """sum / count over dims (all by default; NaN over no elements); dtype= (a floating dtype) computes in it."""
    if dtype is not None and not dtype.is_floating_point:
        raise RuntimeError("mean(): could not infer output dtype. Optional dtype must be either a floating point or "
                           f"complex dtype. Got: {scalar_name(dtype)}")
    if dtype is None or dtype is input.dtype:
        return _mean(input, dim, keepdim)
    _tensor._c_dtype(dtype)
    return recorded("MeanBackward0" if _over_all(dim, keepdim) else "MeanBackward1", [input],
                    lambda: _mean(input.to(dtype), dim, keepdim))


# ---- ops whose gradient is 1.13's formula ----

def op_with_backward(name, inputs, value, backward, saved_outputs=(), saved_inputs=()):
    """`value` (a tensor or a tuple, computed without history) recorded as one node named `name` with edges to
    `inputs`, its gradient backward(grad, *inputs): 1.13's formula written with differentiable ops, so the op
    differentiates again (create_graph). For ops whose values tinyddp computes apart from their gradient (on the
    host, or exactly where a composition would round or meet inf * 0). saved_outputs, saved_inputs: what 1.13's
    node saves, as for `recorded`."""
    from tinyddp.autograd.function import Function

    class Op(Function):   # one engine node: its outputs are value itself (signed zeros kept)
        @staticmethod
        def forward(ctx, *xs):
            ctx.save_for_backward(*xs)
            return value

        @staticmethod
        def backward(ctx, *grads):
            return backward(*grads, *ctx.saved_tensors)

    return recorded(name, inputs, lambda: Op.apply(*inputs), saved_outputs=saved_outputs, saved_inputs=saved_inputs)


def result_type(a, b):
    """1.13's result type of two tensors (a tensor with dims decides over a 0-dim one of the same kind): the
    engine's promotion, read off one-element stand-ins of their dims."""
    if a.dtype is b.dtype:
        return a.dtype
    stand_in = [_tensor.zeros([1] * t.dim(), dtype=t.dtype if t.dtype is not _tensor.bool else _tensor.int64)
                for t in (a, b)]
    if _tensor.bool in (a.dtype, b.dtype) and not (a.is_floating_point() or b.is_floating_point()):
        return _tensor.int64
    if _tensor.bool in (a.dtype, b.dtype):   # bool against a float: that float
        return a.dtype if a.is_floating_point() else b.dtype
    return (stand_in[0] + stand_in[1]).dtype


def _binary_extremum(input, other, largest):
    """maximum / minimum: elementwise, broadcast, promoted; NaN where either is NaN; 1.13's gradient: all of it to
    the larger (smaller) element, half to each at a tie, all to both where one is NaN (MaximumBackward0,
    MinimumBackward0)."""
    name = "maximum" if largest else "minimum"
    if not isinstance(other, Tensor):
        raise TypeError(f"{name}(): argument 'other' (position 2) must be Tensor, not {type(other).__name__}")
    dtype = result_type(input, other)
    a = input if input.dtype is dtype else input.to(dtype)
    b = other if other.dtype is dtype else other.to(dtype)
    with _no_grad():
        x, y = a.detach(), b.detach()
        value = _C.where(x < y if largest else x > y, y, x)   # x first: 1.13's broadcast error names it a
        if value.is_floating_point():
            value = _C.where(y != y, y, value)   # a NaN in x is already picked (its comparisons are false)
    if not (_C.is_grad_enabled() and (a.requires_grad or b.requires_grad)):
        return value

    def backward(g, x, y):
        from tinyddp._tensor_math import _sum_to
        zero = _tensor.zeros([], dtype=g.dtype)
        x_wins, y_wins = (x > y, y > x) if largest else (x < y, y < x)
        split = _C.where(x == y, g / 2, g)
        return (_sum_to(_C.where(y_wins, zero, split), x.shape), _sum_to(_C.where(x_wins, zero, split), y.shape))
    return op_with_backward("MaximumBackward0" if largest else "MinimumBackward0", [a, b], value, backward)


def maximum(input, other):
    return _binary_extremum(input, other, True)


def minimum(input, other):
    return _binary_extremum(input, other, False)


def _no_grad():
    from tinyddp.autograd.grad_mode import no_grad
    return no_grad()


# ---- all, any, count_nonzero ----

def _truth_count(x, dim, keepdim, name):
    if dim is not None and (isinstance(dim, builtins.bool) or not isinstance(dim, numbers.Integral)):
        raise TypeError(f"{name}() received an invalid combination of arguments - got (dim={type(dim).__name__}, "
                        "), but expected one of:\n * (int dim, bool keepdim)\n * (name dim, bool keepdim)\n * ()\n")
    nonzero = x if x.dtype is _tensor.bool else x != 0
    if dim is None:
        return _engine_sum(nonzero), x.numel()
    d = _wrap_dim(dim, x.dim())
    return _engine_sum(nonzero, [d], keepdim), (x._shape()[d] if x.dim() else 1)


def all(input, dim=None, keepdim=False):  # noqa: A001
    """Whether every element (along dim, or of all) is nonzero: a bool tensor, True over no elements."""
    count, size = _truth_count(input, dim, keepdim, "all")
    return count == size


def any(input, dim=None, keepdim=False):  # noqa: A001
    """Whether some element (along dim, or of all) is nonzero: a bool tensor, False over no elements."""
    count, _ = _truth_count(input, dim, keepdim, "any")
    return count > 0


def count_nonzero(input, dim=None):
    """The number of nonzero elements over dim (an int or a sequence of ints; all by default), int64."""
    return _count_nonzero(input, dim=dim)


def _count_nonzero(input, *dims, dim=None):
    """The number of nonzero elements over dim (an int or a sequence of ints, or the dims as arguments, as 1.13's
    parser reads count_nonzero(0, 1); all by default), int64."""
    if dims:
        dim = dims[0] if len(dims) == 1 else [int(d) for d in dims]
    nonzero = input if input.dtype is _tensor.bool else input != 0
    if _is_all(dim):
        return _engine_sum(nonzero)
    return _engine_sum(nonzero, dim, False)


# ---- max, min, argmax, argmin, aminmax ----

def _empty_dim_error(name, d):
    return IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


def _check_reducible(x, dim, name):
    """dim wrapped; 1.13's IndexError when the dim it names is empty."""
    d = _wrap_dim(dim, x.dim())
    if x.dim() and x._shape()[d] == 0:
        raise _empty_dim_error(name, d)
    return d


def min(input, dim=None, keepdim=False):  # noqa: A001
    """min() (0-dim; MinBackward1), min(dim, keepdim) (values, indices; MinBackward0) and min(other)
    (elementwise; MinimumBackward0), as max of the negated input (bool: of its complement)."""
    if isinstance(dim, Tensor):
        return minimum(input, dim)
    if dim is None:
        if input.numel() == 0:
            raise RuntimeError("min(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
                               "reduction dim with the 'dim' argument.")
        if input.dtype is _tensor.bool:
            return ~(~input).max()
        with _no_grad():
            value = -(-input.detach())._max()
        if not (input.requires_grad and _C.is_grad_enabled()):
            return value
        return op_with_backward("MinBackward1", [input], value, lambda g, x: _evenly_distributed_grad(g, x, value),
                                saved_outputs=(0,), saved_inputs=(0,))
    d = _check_reducible(input, dim, "min")
    if input.dtype is _tensor.bool:
        values, indices = (~input)._max_dim(d, keepdim)
        return return_types.min((~values, indices))
    index = (-input.detach())._max_dim(d, True)[1]   # the first smallest (a NaN first), as 1.13's

    def smallest():
        from tinyddp._tensor_math import _squeezed
        from tinyddp._tensor_ops import _take_along
        return _squeezed(_take_along(input, d, index), input, d, keepdim)
    return return_types.min(recorded("MinBackward0", [input], smallest))


def _evenly_distributed_grad(g, x, value):
    """1.13's evenly_distribute_backward: g / k at the k elements equal to value (the NaNs when it is NaN), +0
    elsewhere."""
    x = x.detach()
    mask = (x != x) if builtins.bool(value != value) else x == value
    return _C.where(mask, g / mask.sum().to(g.dtype), _tensor.zeros([], dtype=g.dtype))


def _arg_extremum(x, dim, keepdim, name):
    """The index of the first largest (argmax) or smallest (argmin) element, NaN counting as the largest and the
    smallest, over all elements (of the flattened tensor) or along dim. 1.13 has no kernel for bool: its error,
    except where no kernel runs (a dim of size 1, or an empty result, of a tensor with dims)."""
    if dim is None:
        if x.numel() == 0:
            raise IndexError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0.")
        if x.dtype is _tensor.bool:
            raise RuntimeError(f'"{name}_cpu" not implemented for \'Bool\'')
        flat = x.detach().reshape([-1])
        index = (flat if name == "argmax" else -flat)._max_dim(0, False)[1]
        return index.reshape([1] * x.dim()) if keepdim else index
    d = _check_reducible(x, dim, name)
    src = x.detach()
    if src.dtype is _tensor.bool:
        trivial = x.dim() and (x._shape()[d] == 1 or x.numel() == 0)
        if not trivial:
            raise RuntimeError(f'"{name}_cpu" not implemented for \'Bool\'')
        src = src.to(_tensor.int64)
    return (src if name == "argmax" else -src)._max_dim(d, keepdim)[1]


def argmax(input, dim=None, keepdim=False):
    return _arg_extremum(input, dim, keepdim, "argmax")


def argmin(input, dim=None, keepdim=False):
    return _arg_extremum(input, dim, keepdim, "argmin")


def aminmax(input, *, dim=None, keepdim=False):
    """(min, max) over all elements or along dim (an int), as amin and amax compute them; 1.13 has no derivative
    for it: the results carry a NotImplemented node whose backward raises 1.13's error."""
    from tinyddp._tensor_forms import amax, amin
    if dim is None:
        if input.numel() == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
                               "identity.")
        dims = ()
    else:
        if isinstance(dim, builtins.bool) or not isinstance(dim, numbers.Integral):
            raise TypeError(f"aminmax(): argument 'dim' must be int, not {type(dim).__name__}")
        d = _wrap_dim(dim, input.dim())
        if input.dim() and input._shape()[d] == 0:
            raise IndexError(f"aminmax: Expected reduction dim {d} to have non-zero size.")
        dims = (d,)
    from tinyddp.autograd.grad_mode import no_grad
    with no_grad():
        low = amin(input, dims, keepdim) if dims or input.dim() else input.clone()
        high = amax(input, dims, keepdim) if dims or input.dim() else input.clone()
        if keepdim and (dim is None or not input.dim()):   # 1.13 keeps a 0-dim tensor's "dim" as size 1
            ones = [1] * builtins.max(input.dim(), 0 if dim is None else 1)
            low, high = low.reshape(ones), high.reshape(ones)
    if keepdim and dim is not None and not input.dim():   # 1.13 resizes its two 0-dim outputs, and says so
        import warnings
        for _ in range(2):
            warnings.warn(resized_warning([], [1]), UserWarning, stacklevel=2)
    if not (input.requires_grad and _C.is_grad_enabled()):
        return return_types.aminmax((low, high))
    return return_types.aminmax(recorded("NotImplemented", [input], lambda: _failing_backward(
        input, (low, high), RuntimeError("derivative for aten::aminmax is not implemented"))))


def resized_warning(shape, required):
    """1.13's warning for an output (out=) of another shape than its result, resized."""
    return (f"An output with one or more elements was resized since it had shape {shape}, which does not match the "
            f"required output shape {required}. This behavior is deprecated, and in a future PyTorch release outputs "
            f"will not be resized unless they have zero elements. You can explicitly reuse an out tensor t by "
            f"resizing it, inplace, to zero elements with t.resize_(0). (Triggered internally at  "
            f"./aten/src/ATen/native/Resize.cpp:17.)")


def _failing_backward(input, values, error):
    """values, linked to input by a node whose backward raises `error` (1.13's, for an op without a derivative or
    whose backward formula fails)."""
    from tinyddp.autograd.function import Function

    class FailingBackward(Function):
        @staticmethod
        def forward(ctx, x):
            return tuple(v.clone() for v in values)

        @staticmethod
        def backward(ctx, *grads):
            raise error
    return FailingBackward.apply(input)


# ---- running reductions ----

def _moved(x, d):
    """x with dim d last (a 0-dim tensor as one element)."""
    return x.movedim(d, -1) if x.dim() else x.reshape([1])


def _rows(x, d):
    """The lines of x along dim d, as a (lines, size) NumPy array (bools as int64)."""
    host = _moved(x.detach(), d)
    if host.dtype is _tensor.bool:
        host = host.to(_tensor.int64)
    shape = list(host._shape())
    return host.numpy().reshape(math.prod(shape[:-1]), shape[-1]), shape


def _back(t, x, d):
    """A result over x's lines (dim last) put back in x's layout."""
    return t.movedim(-1, d) if x.dim() else t.reshape([])


def _running_dim(x, dim, check=False):
    """The dim of a running reduction, None for a 0-dim or empty x (nothing to run along). 1.13's cummax/cummin
    wrap it only for a tensor with dims and elements (of a 0-dim or an empty tensor they take any dim); with
    `check` it is always wrapped (cumsum, logcumsumexp)."""
    if check:
        _wrap_dim(dim, x.dim())
    return _wrap_dim(dim, x.dim()) if x.dim() and x.numel() else None


def _running_index(rows, shape, largest):
    """For each position the index of the running maximum (minimum), ties to the later element, and NaN the
    extreme from its first occurrence on, each later NaN taking the index: 1.13's cummax/cummin kernel."""
    out = np.zeros(shape, dtype=np.int64)
    for r, row in enumerate(rows):
        best, best_i = None, 0
        for i, v in enumerate(row):
            if best is None or v != v or (best == best and (v >= best if largest else v <= best)):
                best, best_i = v, i   # 1.13: a NaN always takes over (a later NaN too), else ties to the later
            out[r, i] = best_i
    return out


def _cum_extremum(input, dim, largest):
    name = "cummax" if largest else "cummin"
    result_type = getattr(return_types, name)
    d = _running_dim(input, dim)
    if d is None:   # 0-dim: the element and index 0; empty: empty results (1.13 checks no dim)
        index = _tensor.zeros(list(input._shape()), dtype=_tensor.int64)
        if input.dim() == 0 and dim not in (0, -1):   # 1.13's backward wraps the dim, and fails
            return result_type(recorded(name.capitalize() + "Backward0", [input], lambda: (_failing_backward(
                input, (input.detach(),), IndexError(f"Dimension out of range (expected to be in range of [-1, 0], "
                                                     f"but got {dim})"))[0], index)))
        return result_type(recorded(name.capitalize() + "Backward0", [input], lambda: (input.clone(), index)))
    rows, shape = _rows(input, d)
    index = _tensor.from_numpy(_running_index(rows.tolist(), rows.shape, largest)).reshape(shape)

    def picked():
        from tinyddp._tensor_ops import _gather_last
        return _back(_gather_last(_moved(input, d), index), input, d), _back(index, input, d)
    return result_type(recorded(name.capitalize() + "Backward0", [input], picked))


def cummax(input, dim):
    """(values, indices): the running maximum along dim and where it came from (CummaxBackward0: the gradient goes
    to that element)."""
    return _cum_extremum(input, dim, True)


def cummin(input, dim):
    return _cum_extremum(input, dim, False)


def _log_add_exp(x, y):
    """1.13's _log_add_exp_helper, elementwise over float64 arrays (NaN propagated; equal infinities kept)."""
    with np.errstate(all="ignore"):
        low = np.where(np.isnan(y), y, np.minimum(x, y))
        high = np.where(np.isnan(y), y, np.maximum(x, y))
        general = np.log1p(np.exp(low - high)) + high
        return np.where((low != high) | np.isfinite(low), general, x)


def _logcumsumexp_values(input, d):
    if d is None:   # 0-dim: the element; empty: empty
        return input.detach().clone()
    rows, shape = _rows(input, d)
    out = np.empty(rows.shape, dtype=np.float64)
    running = np.full(rows.shape[0], -np.inf)
    for i in range(rows.shape[1]):
        running = _log_add_exp(rows[:, i].astype(np.float64), running)
        out[:, i] = running
    return _back(_tensor.from_numpy(out).to(input.dtype).reshape(shape), input, d)


def logcumsumexp(input, dim):
    """log(cumsum(exp(input))) along dim, as 1.13's kernel computes it (a running log-add-exp in double, each
    output rounded once); integers and bools give float32. Its gradient is 1.13's formula (reverse logcumsumexps
    of the gradient's positive and negative parts in log space), written with this op, so it differentiates again
    (LogcumsumexpBackward0)."""
    d = _running_dim(input, dim, check=True)
    if not input.is_floating_point():
        raise RuntimeError(f'"logcumsumexp_out_cpu" not implemented for \'{scalar_name(input.dtype)}\'')
    if not (input.requires_grad and _C.is_grad_enabled()):
        return _logcumsumexp_values(input, d)
    return _running("LogcumsumexpBackward0", input, d, lambda x: _logcumsumexp_values(x, d),
                    lambda g, x: _logcumsumexp_backward(g, x, logcumsumexp(x, d), d))


def _reverse_logcumsumexp(x, d):
    from tinyddp._tensor_forms import flip
    return flip(logcumsumexp(flip(x, [d]), d), [d])


def _logcumsumexp_backward(grad, input, result, d):
    lowest = _tensor.tensor(np.finfo(np.float32 if grad.dtype is _tensor.float32 else np.float64).min,
                            dtype=grad.dtype)
    log_abs_grad = grad.abs().log()
    positive = _C.where(grad > 0, log_abs_grad, lowest)
    negative = _C.where(grad < 0, log_abs_grad, lowest)
    return (_reverse_logcumsumexp(positive - result, d) + input).exp() - \
        (_reverse_logcumsumexp(negative - result, d) + input).exp()


# ---- products and running sums and products ----

_NUMPY = {"float32": np.float32, "float64": np.float64, "int64": np.int64, "bool": np.int64}


def _sum_or_prod_dtype(input, dtype):
    """The dtype a sum-like reduction computes and returns in: dtype, else input's, integers and bools as int64."""
    if dtype is not None:
        _tensor._c_dtype(dtype)
        return dtype
    return input.dtype if input.is_floating_point() else _tensor.int64


def _check_differentiable_dtype(input, dtype, check_dim=lambda: None):
    """1.13's INTERNAL ASSERT for an integer result under autograd, after check_dim() (its dim checks come first)."""
    if dtype is not None and not dtype.is_floating_point and input.requires_grad and _C.is_grad_enabled():
        check_dim()
        raise RuntimeError(_NOT_DIFFERENTIABLE)


def _running(name, input, d, values, backward, saved=False):
    """A running reduction along dim d (None: 0-dim or empty, the identity): values(x) computed on the host,
    its gradient backward(grad, x); saved: 1.13's node saves its input and result (CumprodBackward0)."""
    both = (0,) if saved else ()
    return op_with_backward(name, [input], values(input),
                            lambda g, x: g.to(x.dtype) if d is None else backward(g, x), both, both)


def _host_running(input, d, dtype, op):
    """op (np.cumsum or np.cumprod) along d, accumulated as 1.13's CPU kernel accumulates (double for floating
    dtypes, int64 wrapping for integers), each output rounded once to dtype."""
    x = input.detach()
    if d is None:
        return x.to(dtype).clone() if x.dtype is dtype else x.to(dtype)
    rows, shape = _rows(x.to(dtype) if dtype.is_floating_point else x.to(_tensor.int64), d)
    acc = np.float64 if dtype.is_floating_point else np.int64
    with np.errstate(all="ignore"):
        out = op(rows.astype(acc), axis=1)
    return _back(_tensor.from_numpy(np.ascontiguousarray(out)).to(dtype).reshape(shape), x, d)


def _reverse_cumsum(g, d):
    from tinyddp._tensor_forms import flip
    return flip(cumsum(flip(g, [d]), d), [d])


def cumsum(input, dim, *, dtype=None):
    """Running sums along dim, accumulated as 1.13's kernel does (double for floating inputs, int64 with
    wrap-around for integers and bools, which give int64) and rounded once; the gradient is the reversed running
    sum of the incoming one (CumsumBackward0, its edge to input itself, a dtype= included)."""
    _check_differentiable_dtype(input, dtype, lambda: _wrap_dim(dim, input.dim()))
    d = _running_dim(input, dim, check=True)
    out_dtype = _sum_or_prod_dtype(input, dtype)
    if out_dtype is _tensor.bool:
        raise RuntimeError('"cumsum_out_cpu" not implemented for \'Bool\'')
    if not (input.requires_grad and _C.is_grad_enabled()):
        return _host_running(input, d, out_dtype, np.cumsum)
    return _running("CumsumBackward0", input, d, lambda x: _host_running(x, d, out_dtype, np.cumsum),
                    lambda g, x: _reverse_cumsum(g, d).to(x.dtype))


def _cumprod_backward(g, x, d):
    """1.13's cumprod_backward, grad_i = sum over j >= i of g_j * prod_{k <= j, k != i} x_k, as it computes it:
    revcumsum(g * out) / x without zeros; with zeros, when no graph is recorded, that before a line's first zero,
    revcumsum(g * out') at it (the zero taken as 1 in out') and 0 after it; under create_graph, the products
    written out for every i (O(n^2), as 1.13's), so second derivatives through the zeros are right too."""
    out = cumprod(x, d)
    zero = x == 0
    if not builtins.bool(zero.any()):
        return _reverse_cumsum(g * out, d) / x
    one = _tensor.ones([], dtype=x.dtype)
    if not _C.is_grad_enabled():
        seen = cumsum(zero.to(_tensor.int64), d)
        first_zero = zero & (seen == 1)
        before = _reverse_cumsum(g * out, d) / _C.where(zero, one, x)
        at_zero = _reverse_cumsum(g * cumprod(_C.where(first_zero, one, x), d), d)
        return _C.where(seen == 0, before, _C.where(first_zero, at_zero, _tensor.zeros([], dtype=x.dtype)))
    n = x._shape()[d]
    ones = _tensor.ones([1 if k == d else s for k, s in enumerate(x._shape())], dtype=x.dtype)
    columns = []
    for k in range(n):
        if k == 0:
            omitted = _C.cat([ones, cumprod(x.narrow(d, 1, n - 1), d)], d)
        elif k == n - 1:
            omitted = prod(x.narrow(d, 0, k), d, True)
        else:
            until = prod(x.narrow(d, 0, k), d, True)
            after = cumprod(x.narrow(d, k + 1, n - k - 1), d)
            omitted = _C.cat([until, until.expand(list(after._shape())) * after], d)
        columns.append((g.narrow(d, k, n - k) * omitted).sum(d, True))
    return _C.cat(columns, d)


def cumprod(input, dim, *, dtype=None):
    """Running products along dim, accumulated as 1.13's kernel does (double for floating inputs, wrapping int64
    for integers and bools) and rounded once; 1.13's gradient, zeros included (CumprodBackward0)."""
    _check_differentiable_dtype(input, dtype, lambda: _wrap_dim(dim, input.dim()))
    d = _running_dim(input, dim, check=True)
    out_dtype = _sum_or_prod_dtype(input, dtype)
    if not (input.requires_grad and _C.is_grad_enabled()):
        return _host_running(input, d, out_dtype, np.cumprod)
    cast = (lambda x: x.to(out_dtype)) if out_dtype is not input.dtype else (lambda x: x)
    return _running("CumprodBackward0", input, d, lambda x: _host_running(x, d, out_dtype, np.cumprod),
                    lambda g, x: _cumprod_backward(g, cast(x), d).to(x.dtype), saved=True)


def _host_product(x, dims, keepdim, dtype):
    """The product over dims as 1.13's CPU kernel multiplies (one multiplication after another in dtype, int64
    wrapping), for the values; wide lines are multiplied by NumPy's reduction (1.13 vectorizes those too, in its
    own order)."""
    x = x.detach().to(dtype) if dtype.is_floating_point else x.detach().to(_tensor.int64)
    moved = x.permute([k for k in range(x.dim()) if k not in dims] + list(dims)) if x.dim() else x.reshape([1])
    kept = [x._shape()[k] for k in range(x.dim()) if k not in dims]
    n = math.prod(moved._shape()[len(kept):]) if x.dim() else 1
    rows = moved.contiguous().numpy().reshape(math.prod(kept), n)
    with np.errstate(all="ignore"):
        if n <= 64:
            out = np.ones(rows.shape[0], dtype=rows.dtype)
            for j in range(n):
                out = out * rows[:, j] if j else rows[:, 0].copy()
        else:
            out = np.multiply.reduce(rows, axis=1)
    shape = [1 if k in dims else s for k, s in enumerate(x._shape())] if keepdim else kept
    return _tensor.from_numpy(np.ascontiguousarray(out)).to(dtype).reshape(shape)


def _prod_safe_zeros_backward(g, x, d):
    """1.13's prod_safe_zeros_backward: g times the product of the other elements of each line along d, as the
    product of the exclusive running products from either end (right with zeros)."""
    from tinyddp._tensor_forms import flip
    size = x._shape()[d]
    if x.numel() == 0:
        return g.expand(list(x._shape()))
    ones = _tensor.ones([1 if k == d else s for k, s in enumerate(x._shape())], dtype=g.dtype)
    before = cumprod(_C.cat([ones, x.narrow(d, 0, size - 1)], d), d)
    after = flip(cumprod(_C.cat([ones, flip(x.narrow(d, 1, size - 1), [d])], d), d), [d])
    return g * (before * after)


def _prod_backward(g, x, result, d, keepdim):
    """1.13's prod_backward: g * result / x without zeros, else prod_safe_zeros_backward (over the flattened input
    for the product of all elements)."""
    if x.dim() == 0:
        return g
    if d is None:
        zeros = builtins.int((x == 0).sum())
        if zeros > 1 and not _C.is_grad_enabled():   # 1.13's shortcut: every product of the others is 0
            return _tensor.zeros(list(x._shape()), dtype=g.dtype)
        if zeros:
            return _prod_safe_zeros_backward(g, x.reshape([-1]), 0).reshape(list(x._shape()))
        return g * (result / x)
    if not keepdim and x.dim() != 1:
        g, result = g.unsqueeze(d), result.unsqueeze(d)
    if builtins.bool((x == 0).any()):
        return _prod_safe_zeros_backward(g, x, d)
    return g * (result / x)


def prod(input, dim=None, keepdim=False, *, dtype=None):
    """The product of all elements (ProdBackward0) or along dim (ProdBackward1): 1.13's values (1 over no
    elements; bool and int64 give int64, wrapping) and gradient formula, zeros and infinities included."""
    _check_differentiable_dtype(input, dtype, lambda: dim is not None and _wrap_dim(dim, input.dim()))
    out_dtype = _sum_or_prod_dtype(input, dtype)
    if dim is not None and (isinstance(dim, builtins.bool) or not isinstance(dim, numbers.Integral)):
        raise TypeError(f"prod() received an invalid combination of arguments - got ({type(dim).__name__}), but "
                        "expected one of:\n * (*, torch.dtype dtype)\n * (int dim, bool keepdim, *, torch.dtype "
                        "dtype)\n * (name dim, bool keepdim, *, torch.dtype dtype)\n")
    if out_dtype is _tensor.bool:
        return prod(input, dim, keepdim, dtype=_tensor.int64) != 0
    if dim is None:
        dims, keep, d = list(range(input.dim())), False, None
    else:
        d = _wrap_dim(dim, input.dim())
        dims, keep = ([d] if input.dim() else []), keepdim
    value = _host_product(input, dims, keep, out_dtype)
    if not (input.is_floating_point() and input.requires_grad and _C.is_grad_enabled()):
        return value

    def backward(g, x):
        xd = x.to(out_dtype) if out_dtype is not x.dtype else x
        result = prod(xd, dim, keepdim)   # recomputed, so a second derivative sees it depend on x
        return _prod_backward(g, xd, result, d, keepdim).to(x.dtype)
    return op_with_backward("ProdBackward0" if dim is None else "ProdBackward1", [input], value, backward,
                            saved_outputs=(0,), saved_inputs=(0,))   # 1.13's node saves both


def msort(input):
    """The elements sorted along the first dim (SortBackward0), as 1.13's sort(input, 0).values."""
    from tinyddp._tensor_ops import sort
    return sort(input, 0)[0]


def _install():
    for name, fn in {"sum": sum, "mean": mean, "all": all, "any": any, "count_nonzero": _count_nonzero, "min": min,
                     "argmax": argmax, "argmin": argmin, "aminmax": aminmax, "cummax": cummax, "cummin": cummin,
                     "logcumsumexp": logcumsumexp, "msort": msort, "cumsum": cumsum, "cumprod": cumprod,
                     "prod": prod, "maximum": maximum, "minimum": minimum}.items():
        setattr(Tensor, name, fn)


_install()
