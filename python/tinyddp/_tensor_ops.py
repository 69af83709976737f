"""Tensor methods and torch functions composed of the engine's ops: permutes, splits, selection (where,
masked_fill, clamp), gathers (sort, topk), statistics (var, std, norm), comparisons of whole tensors
(equal, allclose) and the factories arange(start, end, step), linspace and eye.

Each is PyTorch 1.13's signature, values and errors over ops the engine has (permute, split, narrow, where,
expand, cat, embedding as a row gather), so values and gradients are PyTorch's; a composition is recorded as the
one node 1.13 records (tinyddp/_node.py; docs/python.md, "Composed methods' graphs"). Where the result is a selection (sort's order, topk's
indices) it is computed on the host from the detached values, and the values are gathered from the tensor, so
they carry its gradient.
"""
import builtins
import math
import numbers
import struct
from fractions import Fraction

import numpy as np

from tinyddp import _C, _runtime, _tensor, return_types
from tinyddp._node import recorded
from tinyddp._tensor import Tensor, _wrap_dim


def _dims(dims):
    """Sizes or dims as varargs (permute(2, 0, 1)) or one sequence (permute((2, 0, 1)))."""
    if len(dims) == 1 and not isinstance(dims[0], numbers.Integral):
        return [int(d) for d in dims[0]]
    return [int(d) for d in dims]


def _result_type(name):
    """torch.return_types.<name>: (values, indices), also by name, printed as PyTorch prints it."""
    return getattr(return_types, name)


_SortResult, _TopkResult = return_types.sort, return_types.topk


# ---- shape ----

def permute(self, *dims):
    """The dims reordered: dim i of the result is dim dims[i] of self (the engine's view, PermuteBackward0)."""
    dims = _dims(dims)
    n = self.dim()
    if len(dims) != n:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does not match the "
                           f"length of the desired ordering of dimensions i.e. input.dim() = {n} is not equal to "
                           f"len(dims) = {len(dims)}")
    dims = [_wrap_dim(d, n) for d in dims]
    if len(set(dims)) != n:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return _C.permute(self, dims)


def split(self, split_size_or_sections, dim=0):
    """Views of consecutive pieces along dim, outputs of one node: pieces of split_size (the last smaller;
    SplitBackward0) or of the listed sizes, which must add up to the dim's size (SplitWithSizesBackward0)."""
    if self.dim() == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    dim = _wrap_dim(dim, self.dim())
    size = self._shape()[dim]
    if isinstance(split_size_or_sections, numbers.Integral):
        step = split_size_or_sections
        if step < 0 or (step == 0 and size != 0):
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {size}")
        return tuple(_C.split(self, step, dim))
    sizes = [int(s) for s in split_size_or_sections]
    if builtins.sum(sizes) != size:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {size} (input tensor's size "
                           f"at dimension {dim}), but got split_sizes={sizes}")
    return tuple(_C.split_with_sizes(self, sizes, dim))


def chunk(self, chunks, dim=0):
    """split into pieces of ceil(size / chunks) along dim (so there may be fewer than `chunks`), as 1.13's."""
    if self.dim() == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0, got: " + str(chunks))
    size = self._shape()[_wrap_dim(dim, self.dim())]
    if size == 0:   # 1.13: `chunks` empty pieces (split_with_sizes)
        return split(self, [0] * chunks, dim)
    return split(self, -(-size // chunks), dim)


def expand(self, *sizes):
    """self broadcast to sizes (a view; ExpandBackward0 even where nothing is expanded, as 1.13's)."""
    out = _C.expand(self, _dims(sizes))
    if list(out._shape()) == list(self._shape()):   # the engine returns self; 1.13 still records a view
        return recorded("ExpandBackward0", [self], lambda: _C.alias(self))
    return out


def repeat(self, *sizes):
    """The tensor tiled sizes[i] times along dim i (leading sizes add dims), as cat of copies (RepeatBackward0)."""
    if not sizes:
        raise TypeError("repeat() missing 1 required positional arguments: \"repeats\"")
    sizes = _dims(sizes)
    if len(sizes) < self.dim():
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of "
                           "tensor")
    if builtins.any(t < 0 for t in sizes):
        raise RuntimeError(f"Trying to create tensor with negative dimension {builtins.min(sizes)}: "
                           f"{[s * t for s, t in zip([1] * (len(sizes) - self.dim()) + list(self._shape()), sizes)]}")

    def tiled():
        out = self.reshape([1] * (len(sizes) - self.dim()) + list(self._shape()))
        for d, times in enumerate(sizes):
            if times == 0:
                out = out.narrow(d, 0, 0)
            elif times != 1:
                out = _C.cat([out] * times, d)
        return out if out is not self else self.clone()
    return recorded("RepeatBackward0", [self], tiled)


# ---- selection ----

def _as_operand(value, like):
    """A Python number as a 0-dim tensor in the dtype 1.13's where promotes it with like to: like's, except an int
    with a bool tensor (int64) and a float with an integer one (float32)."""
    if isinstance(value, Tensor):
        return value
    dtype = like.dtype
    if isinstance(value, builtins.float) and not like.is_floating_point():
        dtype = _tensor.float32
    elif isinstance(value, numbers.Integral) and not isinstance(value, builtins.bool) and like.dtype is _tensor.bool:
        dtype = _tensor.int64
    return _tensor.tensor(value, dtype=dtype)


def _promoted(a, b):
    """a and b in their result type, as 1.13's where (a 0-dim tensor does not promote one with dims of its kind)."""
    if a.dtype is b.dtype:
        return a, b
    from tinyddp._tensor_reduce import result_type
    to = result_type(a, b)
    return a.to(to), b.to(to)


_NO_VALUE = object()


def where(condition, input=_NO_VALUE, other=_NO_VALUE):
    """input's element where condition is true, else other's (broadcast, promoted as 1.13's result_type: a Python
    number takes the tensor's kind, two numbers the default float32 or int64). The engine's where: WhereBackward0,
    as 1.13's. With the condition alone, condition.nonzero(as_tuple=True)."""
    if input is _NO_VALUE and other is _NO_VALUE:
        return condition.nonzero(as_tuple=True)
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        numbers = (input, other)
        dtype = (_tensor.bool if builtins.all(isinstance(v, builtins.bool) for v in numbers) else
                 _tensor.float32 if builtins.any(isinstance(v, builtins.float) for v in numbers) else _tensor.int64)
        input = _tensor.tensor(input, dtype=dtype)
    input = _as_operand(input, other if not isinstance(input, Tensor) else input)
    other = _as_operand(other, input)
    input, other = _promoted(input, other)
    return _C.where(condition, input, other)


def masked_fill(self, mask, value, _inplace=False):
    """value where mask is true (broadcast to self's shape), else self: a where (MaskedFillBackward0, and
    MaskedFillBackward1 with an edge to a tensor value, as 1.13's)."""
    if mask.dtype is not _tensor.bool:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{_C_legacy(mask.dtype)}")
    if isinstance(value, Tensor) and value.dim() != 0:
        raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                           f"{value.dim()} dimension(s).")
    node, edges = ("MaskedFillBackward1", [self, value]) if isinstance(value, Tensor) else ("MaskedFillBackward0",
                                                                                          [self])
    value = value.to(self.dtype) if isinstance(value, Tensor) else _tensor.tensor(value, dtype=self.dtype)
    if _inplace:   # in place, the mask must broadcast to self's shape
        shape = list(self._shape())
        broadcast = list(_broadcast_shape_of(mask, self))
        if broadcast != shape:
            raise RuntimeError(f"output with shape {shape} doesn't match the broadcast shape {broadcast}")
    # out of place, 1.13 broadcasts self and mask together
    return recorded(node, edges, lambda: _C.where(mask, value, self))


def _broadcast_shape_of(a, b):
    from tinyddp._tensor_forms import _broadcast_shape
    return _broadcast_shape(a._shape(), b._shape())


def _C_legacy(dt):
    return {_tensor.float32: "Float", _tensor.float64: "Double", _tensor.int64: "Long", _tensor.bool: "Bool"}[dt]


def clamp(self, min=None, max=None):  # noqa: A002  (PyTorch's keyword names)
    """Elements limited to [min, max]: the engine's clamp (ClampBackward1) for floating tensors, where for
    integers (exact). min > max gives max everywhere, as 1.13's."""
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        # 1.13's clamp.Tensor (ClampBackward0, an edge per tensor bound): self's gradient passes where
        # min <= self <= max and a bound's where it was taken (max wins over min)
        return recorded("ClampBackward0", [self, min, max], lambda: _lifted_then_capped(self, min, max))
    bounds = [b for b in (min, max) if b is not None]
    if not self.is_floating_point():   # 1.13 promotes with the bounds: a float bound gives float32, an int int64
        if builtins.any(isinstance(b, builtins.float) for b in bounds):
            self = self.to(_tensor.float32)
        elif self.dtype is _tensor.bool:
            if builtins.all(isinstance(b, builtins.bool) for b in bounds):
                kernel = "clamp_cpu" if len(bounds) == 2 else ("clamp_min_cpu" if min is not None else "clamp_max_cpu")
                raise RuntimeError(f'"{kernel}" not implemented for \'Bool\'')
            self = self.to(_tensor.int64)
    if self.is_floating_point():
        lo = -math.inf if min is None else builtins.float(min)
        hi = math.inf if max is None else builtins.float(max)
        if lo > hi:   # the engine refuses min > max; 1.13 sets every element to max
            lo = hi
        return _C._nn.clamp(self, lo, hi)
    return _lifted_then_capped(self, min, max)


def _lifted_then_capped(x, min, max):  # noqa: A002
    """x lifted to min, then capped at max (either may be None), with where: exact for any dtype."""
    if min is not None:
        x = where(x < min, min, x)
    if max is not None:
        x = where(x > max, max, x)
    return x


def clamp_(self, min=None, max=None):  # noqa: A002
    if not self.is_floating_point() and any(isinstance(b, float) for b in (min, max)):
        # 1.13's clamp_(Scalar) names the C++ type it cannot write a float into
        raise RuntimeError("result type Float can't be cast to the desired output type " +
                           ("bool" if self.dtype is _tensor.bool else "long int"))
    return self._apply_inplace(lambda current: clamp(current, min, max),
                               [b for b in (min, max) if isinstance(b, Tensor)])


def _triangle(self, diagonal, lower):
    """The elements on and below (tril) or above (triu) the diagonal-th diagonal of the last two dims, the rest 0:
    where over a mask of column - row (TrilBackward0/TriuBackward0)."""
    name = "TrilBackward0" if lower else "TriuBackward0"
    if self.numel() == 0:   # 1.13 returns before checking the dims
        return recorded(name, [self], lambda: self.clone())
    if self.dim() < 2:   # 1.13 reads size(-2)
        if self.dim() == 0:
            raise IndexError("Dimension specified as -2 but tensor has no dimensions")
        _wrap_dim(-2, self.dim())
    rows, cols = self._shape()[-2:]
    offset = _tensor.arange(cols).reshape([1, cols]) - _tensor.arange(rows).reshape([rows, 1])
    keep = offset <= diagonal if lower else offset >= diagonal
    return recorded(name, [self], lambda: _C.where(keep, self, _tensor.zeros([], dtype=self.dtype)))


def tril(input, diagonal=0):
    return _triangle(input, diagonal, True)


def triu(input, diagonal=0):
    return _triangle(input, diagonal, False)


def _host_elementwise(self, other, name, int_fn, float_fn, reverse=False):
    """An integer-exact op the engine has no kernel for (floor division, remainder), computed on the host from
    the promoted, broadcast operands; the result has no history (use it under no_grad or on data)."""
    from tinyddp.autograd.grad_mode import no_grad
    if self.dtype is _tensor.bool and (isinstance(other, builtins.bool) or
                                       (isinstance(other, Tensor) and other.dtype is _tensor.bool)):
        if isinstance(other, Tensor):
            _broadcast_shape_of(self, other)
        kernel = {"floor_divide": "div_floor_cpu", "remainder": "remainder_cpu", "fmod": "fmod_cpu",
                  "div": "div_trunc_cpu"}[name]
        raise RuntimeError(f'"{kernel}" not implemented for \'Bool\'')   # 1.13 has no bool kernel
    with no_grad():
        a = self.detach()
        b = other.detach() if isinstance(other, Tensor) else other
        probe = a * 0 + b * 0   # the engine's promotion and broadcasting decide the dtype and the shape
        shape = list(probe._shape())
        flat_a = _C.expand(a.to(probe.dtype), shape).reshape([-1]).tolist()
        if not isinstance(b, Tensor) and probe.is_floating_point():   # a number divides in the tensor's dtype
            b = _tensor.tensor(b, dtype=probe.dtype).item()
        flat_b = (_C.expand(b.to(probe.dtype), shape).reshape([-1]).tolist() if isinstance(b, Tensor)
                  else [b] * len(flat_a))
    if reverse:
        flat_a, flat_b = flat_b, flat_a
    if probe.is_floating_point():
        values = [float_fn(x, y) for x, y in zip(flat_a, flat_b)]
    else:
        if builtins.any(y == 0 for y in flat_b):
            raise RuntimeError("ZeroDivisionError")
        values = [int_fn(int(x), int(y)) for x, y in zip(flat_a, flat_b)]
    return _tensor.tensor(values, dtype=probe.dtype if probe.dtype is not _tensor.bool else _tensor.int64) \
        .reshape(shape)


def _float_floordiv(x, y):
    if y == 0:
        return math.nan if x == 0 or math.isnan(x) else math.copysign(math.inf, x) * math.copysign(1.0, y)
    return x // y


def _float_mod(x, y):
    """1.13's remainder: fmod, moved into the divisor's sign (a zero keeps the dividend's sign, unlike Python's %).
    C's fmod of an infinite or NaN dividend is NaN (Python's math.fmod raises there)."""
    if y == 0 or not math.isfinite(x) or math.isnan(y):
        return math.nan
    m = math.fmod(x, y)
    return m + y if m != 0 and (y < 0) != (m < 0) else m


def _dividend(input, divisor):
    """A Python number as the dividend (torch.remainder(2, t), floor_divide(7, t)): a 0-dim tensor, which promotes
    as 1.13's wrapped number does (its category only: a float with an integral divisor gives the default
    float; with a floating one, the divisor's dtype, from the exact double)."""
    if isinstance(input, Tensor):
        return input
    floating_divisor = isinstance(divisor, Tensor) and divisor.is_floating_point()
    return _tensor.tensor(input, dtype=_tensor.float64 if isinstance(input, float) and floating_divisor else None)


def floor_divide(input, other):
    """input // other rounded down (1.13's floor_divide): exact for int64 ("ZeroDivisionError" for a zero
    divisor, as 1.13's RuntimeError), float results as Python's float //; no gradient (1.13 has none either)."""
    return _host_elementwise(_dividend(input, other), other, "floor_divide", lambda x, y: x // y, _float_floordiv)


def remainder(input, other):
    """input % other with the divisor's sign (1.13's remainder, Python's %), computed on the host; the gradient is
    1.13's: 1 to input (RemainderBackward0), and -floor(input / other) to a tensor divisor (RemainderBackward1)."""
    input = _dividend(input, other)
    out = _host_elementwise(input, other, "remainder", lambda x, y: x % y, _float_mod)
    tensor_other = isinstance(other, Tensor) and other.is_floating_point()
    if not input.is_floating_point() or not (input.requires_grad or (tensor_other and other.requires_grad)):
        return out

    def linked():   # out plus terms that are exactly 0 and carry the gradients
        linked = out + (input - input.detach())
        if tensor_other and other.requires_grad:
            linked = linked - (other - other.detach()) * (input / other).detach().floor()
        return linked
    if tensor_other:
        return recorded("RemainderBackward1", [input, other], linked)
    return recorded("RemainderBackward0", [input], linked)


# ---- gathers ----

def _gather_last(x, index):
    """x[..., index[..., j]] along the last dim, index's leading sizes at most x's: rows of one element picked by
    the engine's embedding (a row gather, EmbeddingBackward0), so it carries x's gradient."""
    if index.numel() == 0:   # nothing to pick: an empty result still linked to x
        return x.reshape([-1]).narrow(0, 0, 0).reshape(list(index._shape()))
    n = x._shape()[-1] if x.dim() else 1
    lead = list(index._shape()[:-1]) if index.dim() else []
    x_lead = list(x._shape()[:-1]) if x.dim() else []
    k = index._shape()[-1] if index.dim() else 1
    rows = np.arange(builtins.max(1, math.prod(lead)), dtype=np.int64)
    if lead != x_lead:   # index's row r is x's row at the same coordinates
        rows = np.ravel_multi_index(np.unravel_index(rows, lead), x_lead)
    flat = np.array(index.detach().reshape([-1]).tolist(), dtype=np.int64).reshape(rows.size, k)
    offsets = (rows[:, None] * n + flat).reshape(-1).tolist()
    picked = _C._nn.embedding(x.reshape([-1, 1]), _tensor.tensor(offsets, dtype=_tensor.int64))
    return picked.reshape(list(index._shape()))


def _check_gather(input, dim, index, name="gather"):
    """1.13's checks of gather (and take_along_dim, which gathers): an int64 index of input's number of dims (a
    0-dim tensor counts as one), no larger than input but along dim, its values in [0, input.size(dim))."""
    if index.dtype is not _tensor.int64:
        raise RuntimeError(f"{name}(): Expected dtype int64 for index")
    if index.numel() == 0:
        return
    if builtins.max(input.dim(), 1) != builtins.max(index.dim(), 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    sizes, isizes = list(input._shape()) or [1], list(index._shape()) or [1]
    for d in range(len(sizes)):
        if d != dim and isizes[d] > sizes[d]:
            raise RuntimeError(f"Size does not match at dimension {d} expected index {list(index._shape())} to be "
                               f"smaller than self {list(input._shape())} apart from dimension {dim}")
    values = np.array(index.reshape([-1]).tolist(), dtype=np.int64)
    bad = (values < 0) | (values >= sizes[dim])
    if bad.any():
        raise RuntimeError(f"index {values[bad][0]} is out of bounds for dimension {dim} with size {sizes[dim]}")


def gather(input, dim, index, *, sparse_grad=False):
    """torch.gather: out[i][j] = input[index[i][j]][j] (dim 0) and so on, index of input's dims and no larger
    but along dim (GatherBackward0)."""
    dim = _wrap_dim(dim, input.dim())
    _check_gather(input, dim, index)
    last = input.dim() - 1
    if dim == last or input.dim() == 0:
        return recorded("GatherBackward0", [input], lambda: _gather_last(input, index))
    return recorded("GatherBackward0", [input], lambda: _gather_last(input.transpose(dim, last),
                                                                     index.transpose(dim, last)).transpose(dim, last))


def _order(values, descending):
    """The stable argsort of each row of a list of rows (NaN last ascending, first descending, as 1.13's)."""
    def key(v):
        return (math.isnan(v), v) if not descending else (not math.isnan(v), -v if not math.isnan(v) else 0)
    return [sorted(range(len(row)), key=lambda i, row=row: key(row[i])) for row in values]


def _take_along(self, dim, index):
    """(values, index): self's elements at `index` (int64, self's shape but for dim's size) along dim, gathered so
    that they carry self's gradient. A 0-dim self is one line of one element; without elements, empty results."""
    if self.dim() == 0:
        return _gather_last(self.reshape([1]), index.reshape([1])).reshape([]), index.reshape([])
    d = _wrap_dim(dim, self.dim())
    last = self.dim() - 1
    if index.numel() == 0:
        return self.narrow(d, 0, index._shape()[d]).clone(), index
    x = self.transpose(d, last) if d != last else self
    ix = index.transpose(d, last) if d != last else index
    values = _gather_last(x, ix)
    return (values.transpose(d, last) if d != last else values), index


def _select_along(self, dim, k, order):
    """(values, indices) of the k first elements of each line along dim in the order `order(row)` (a list of
    indices, from the row's Python numbers) gives."""
    dim = _wrap_dim(dim, self.dim())
    last = builtins.max(self.dim() - 1, 0)
    x = self.detach().transpose(dim, last) if dim != last else self.detach()
    shape = list(x._shape()) or [1]
    if x.numel() == 0 or k == 0:
        index = _tensor.zeros(shape[:-1] + [k], dtype=_tensor.int64)
    else:
        rows = x.reshape([math.prod(shape[:-1]), shape[-1]]).tolist()
        index = _tensor.tensor([order(row) for row in rows], dtype=_tensor.int64).reshape(shape[:-1] + [k])
    if self.dim() and dim != last:
        index = index.transpose(dim, last)
    return _take_along(self, dim, index)


def sort(self, dim=-1, descending=False, stable=None):
    """(values, indices) sorted along dim (NaN the largest), equal values in the order 1.13's std::sort leaves them
    (std::stable_sort with stable=True; engine/ops/order.cpp). Given stable= (1.13's sort.stable overload) the node
    is SortBackward1."""
    _wrap_dim(dim, self.dim())
    node = "SortBackward0" if stable is None else "SortBackward1"
    return _SortResult(recorded(node, [self], lambda: _take_along(
        self, dim, self.detach()._sort_indices(dim, descending, builtins.bool(stable)))))


def argsort(self, dim=-1, descending=False, stable=False):
    return sort(self, dim, descending, stable)[1]


def topk(self, k, dim=-1, largest=True, sorted=True):  # noqa: A002
    """The k largest (or smallest) elements along dim and their indices, largest first (NaN the largest), equal
    values in the order 1.13's kernel leaves them (engine/ops/order.cpp)."""
    d = _wrap_dim(dim, self.dim())
    size = self._shape()[d] if self.dim() else 1
    if not 0 <= k <= size:
        raise RuntimeError("selected index k out of range")
    if self.dim() == 0:   # 1.13 runs no kernel: the element itself, for k 0 or 1
        return _TopkResult(recorded("TopkBackward0", [self], lambda: (self.clone(), _tensor.zeros(
            [], dtype=_tensor.int64))))
    if self.dtype is _tensor.bool:
        raise RuntimeError('"topk_cpu" not implemented for \'Bool\'')
    return _TopkResult(recorded("TopkBackward0", [self], lambda: _take_along(
        self, d, self.detach()._topk_indices(k, d, largest, sorted))))


def minimum(self, other):
    """torch.minimum: tinyddp/_tensor_reduce.py."""
    from tinyddp._tensor_reduce import minimum as _minimum
    return _minimum(self, other)


# ---- statistics ----

def _var_args(dim, unbiased):
    """1.13's var(unbiased) overload: a bool first argument is `unbiased`, over all elements."""
    if isinstance(dim, builtins.bool):
        return None, dim
    return dim, unbiased


def _check_var_dtype(self, name="std and var"):
    if not self.is_floating_point():
        raise RuntimeError(f"{name} only support floating point and complex dtypes")


def var(self, dim=None, unbiased=True, keepdim=False, *, correction=None):
    """The variance: sum((x - mean)^2) / max(n - correction, 0), correction 1 unless unbiased=False (or given);
    NaN over fewer elements than that (VarBackward0; 1.13 saves self, so an in-place change of it is caught at
    the backward)."""
    dim, unbiased = _var_args(dim, unbiased)
    _check_var_dtype(self)
    return recorded("VarBackward0", [self], lambda: _var(self, dim, unbiased, keepdim, correction),
                    saved_inputs=(0,))


def _var(self, dim, unbiased, keepdim, correction):
    if correction is None:
        correction = 1 if unbiased else 0
    every = dim is None or (not isinstance(dim, numbers.Integral) and len(dim) == 0)
    dims = list(range(self.dim())) if every else ([dim] if isinstance(dim, numbers.Integral) else list(dim))
    centered = self - self.mean(None if every else dims, True)
    n = math.prod(self._shape()[_wrap_dim(d, self.dim())] for d in dims) if self.dim() else 1
    return (centered * centered).sum(None if every else dims, keepdim) / builtins.max(n - correction, 0)


def _sqrt_of_variance(v):
    """sqrt(v) with 1.13's std gradient: 0 where the deviation is 0 (its std_backward masks the division by 0),
    where sqrt's own would be NaN."""
    zero = v == 0
    inside = _C.where(zero, _tensor.ones([], dtype=v.dtype), v)
    return _C.where(zero, _tensor.zeros([], dtype=v.dtype), inside.sqrt())


def std(self, dim=None, unbiased=True, keepdim=False, *, correction=None):
    """The standard deviation, sqrt of var (StdBackward0; its gradient 0 where it is 0, as 1.13's)."""
    dim, unbiased = _var_args(dim, unbiased)
    _check_var_dtype(self)
    return recorded("StdBackward0", [self], lambda: _sqrt_of_variance(_var(self, dim, unbiased, keepdim, correction)),
                    saved_outputs=(0,), saved_inputs=(0,))


def norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    """torch.norm as 1.13's torch/functional.py routes it: a number p (or 'fro' over all dims or one dim) is the
    engine's vector norm recorded as NormBackward1 (engine/ops/norm.cpp: 1.13's gradient, 0 at a zero norm);
    'fro' over two dims is sqrt(sum(x * x)), as 1.13's frobenius_norm computes it (SqrtBackward0); 'nuc' needs
    singular values, which tinyddp does not compute."""
    if out is not None:
        raise NotImplementedError("tinyddp: torch.norm(out=...) is not supported; use the returned tensor")
    ndim = input.dim()
    if isinstance(dim, builtins.bool):
        raise TypeError("norm() received an invalid combination of arguments - got (bool), but expected one of:\n"
                        " * (Tensor input, Number p, int dim, bool keepdim, *, torch.dtype dtype)\n")
    c_dtype = None if dtype is None else _tensor._c_dtype(dtype)
    if dim is None and dtype is None and p is not None:
        if isinstance(p, str) and p == "fro":
            return _C._norm(input, 2.0, [], keepdim, None)
        if not isinstance(p, str):
            return _C._norm(input, builtins.float(p), [], keepdim, None)
    dims = None if dim is None else ([dim] if isinstance(dim, numbers.Integral) else list(dim))
    if isinstance(p, str):
        if p == "fro":
            if dtype is not None:
                raise ValueError("dtype argument is not supported in frobenius norm")
            dims = list(range(ndim)) if dims is None else dims
            if len(dims) > 2:
                raise RuntimeError(f"Expected at most 2 dimensions, but got {len(dims)} dimensions instead.")
            if len(dims) <= 1:
                return _C._norm(input, 2.0, dims, keepdim, None)
            wrapped = [_wrap_dim(d, ndim) for d in dims]
            if wrapped[0] == wrapped[1]:
                raise RuntimeError(f"Expected dims to be different, got {dims} instead")
            if not input.is_floating_point():   # 1.13's frobenius_norm fails on an integer result
                raise RuntimeError('result.scalar_type() == toRealValueType(self.scalar_type()) INTERNAL ASSERT '
                                   'FAILED at "./aten/src/ATen/native/LinearAlgebra.cpp":2694, please report a bug '
                                   'to PyTorch. ')
            return (input * input).sum(wrapped, keepdim).sqrt()
        if p == "nuc":
            if dtype is not None:
                raise ValueError("dtype argument is not supported in nuclear norm")
            raise NotImplementedError("tinyddp: the nuclear norm needs singular values, which tinyddp does not "
                                      "compute; p='fro' and numbers are supported")
        raise RuntimeError(f"only valid string values are 'fro' and 'nuc', found {p}")
    dims = list(range(ndim)) if dims is None else dims
    return _C._norm(input, 2.0 if p is None else builtins.float(p), dims, keepdim, c_dtype)


def _tensor_norm(self, p="fro", dim=None, keepdim=False, dtype=None):
    return norm(self, p, dim, keepdim, dtype=dtype)


# ---- whole-tensor comparisons ----

def equal(input, other):
    """True when both have one shape and equal elements (as 1.13's, False for NaNs)."""
    if list(input._shape()) != list(other._shape()):
        return False
    return builtins.bool((input == other).all())


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """1.13's: equal, or finite |input - other| <= atol + |rtol * other| (so an infinity is close only to itself),
    of two tensors of one dtype (bool compared as the default float)."""
    from tinyddp._tensor_reduce import scalar_name
    if not isinstance(other, Tensor):
        raise TypeError(f"isclose(): argument 'other' (position 2) must be Tensor, not {type(other).__name__}")
    if input.dtype is not other.dtype:
        raise RuntimeError(f"{scalar_name(input.dtype)} did not match {scalar_name(other.dtype)}")
    for name, tolerance in (("rtol", rtol), ("atol", atol)):
        if tolerance < 0:
            raise RuntimeError(f"{name} must be greater than or equal to zero, but got {tolerance}")
    close = input == other
    if equal_nan and input.is_floating_point():
        close = close | ((input != input) & (other != other))
    if rtol == 0 and atol == 0:
        return close
    if input.dtype is _tensor.bool:
        input, other = input.to(_tensor.float32), other.to(_tensor.float32)
    actual = (input - other).abs()
    return close | (actual.isfinite() & (actual <= atol + (rtol * other).abs()))


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return builtins.bool(isclose(input, other, rtol, atol, equal_nan).all())


# ---- factories ----

def _arange_number(value, position, name):
    """A bound or step as 1.13's parser reads a Number: a Python or NumPy number, or a 0-dim tensor's value;
    (value, whether it is an integer). bool reads as an integer."""
    if isinstance(value, Tensor) and value.dim() == 0:
        value = value.item()
    if isinstance(value, numbers.Integral):
        return builtins.int(value), True
    if isinstance(value, numbers.Real):
        return builtins.float(value), False
    raise TypeError(f"arange(): argument '{name}' (position {position}) must be Number, not {type(value).__name__}")


def arange(start=None, end=None, step=1, *, dtype=None, device=None, requires_grad=False):
    """arange(end), arange(start, end), arange(start, end, step), as 1.13's: int64 when all three are integers,
    else float32 (the default dtype). The bounds and step are first converted to the dtype's accumulation type
    (int64 truncates 2.5 to 2, double for floating), the size is ceil((end - start) / step), and floating values
    are rounded as 1.13's CPU kernel rounds them (Note [arange's rounding] in engine/core/tensor.cpp)."""
    _tensor._check_device(device)
    if start is None and end is None:
        raise TypeError("arange() received an invalid combination of arguments - got (), but expected one of:\n"
                        " * (Number end, *, Tensor out, torch.dtype dtype, torch.layout layout, torch.device device, "
                        "bool pin_memory, bool requires_grad)\n"
                        " * (Number start, Number end, *, torch.dtype dtype, torch.layout layout, torch.device "
                        "device, bool pin_memory, bool requires_grad)\n"
                        " * (Number start, Number end, Number step, *, Tensor out, torch.dtype dtype, torch.layout "
                        "layout, torch.device device, bool pin_memory, bool requires_grad)\n")
    if end is None:
        start, end = 0, _arange_number(start, 1, "end")[0]   # arange(end): the only positional is `end`
    elif start is None:
        start = 0                                            # arange(end=5)
    numbers_ = [_arange_number(v, i + 1, n) for i, (v, n) in enumerate(((start, "start"), (end, "end"),
                                                                       (step, "step")))]
    (start, _), (end, _), (step, _) = numbers_
    if dtype is None:
        dtype = _tensor.int64 if builtins.all(is_int for _, is_int in numbers_) else _tensor.float32
    dtype = _tensor.dtype._read(dtype)
    if dtype is _tensor.bool:
        raise RuntimeError("\"arange_cpu\" not implemented for 'Bool'")
    integral = not dtype.is_floating_point
    if integral:   # Scalar::to<int64_t>: toward zero
        start, end, step = builtins.int(start), builtins.int(end), builtins.int(step)
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(start) and math.isfinite(end)):
        raise RuntimeError(f"unsupported range: {start:g} -> {end:g}")
    if not ((step > 0 and end >= start) or (step < 0 and end <= start)):
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    size = math.ceil(builtins.float(end - start) / step)
    if size > 2 ** 63 - 1:
        raise RuntimeError("invalid size, possible overflow?")
    if integral:
        out = _tensor.arange(size, dtype)
        if (start, step) != (0, 1):
            out = out * step + start
    else:
        out = _C._arange_floating(builtins.float(start), builtins.float(step), size, _tensor._c_dtype(dtype),
                                  _runtime.get_num_threads())   # the threads 1.13 splits a long range over
    return _tensor._finish(out, requires_grad)


def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False):
    """steps values from start to end, both included, computed as 1.13's CPU kernel computes them in the
    dtype: step = (end - start) / (steps - 1) rounded, then start + step * i for the first half and
    end - step * (steps - 1 - i) for the second, each one fused multiply-add (one rounding)."""
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    if steps == 1:   # 1.13: the start alone
        end = start
    dtype = dtype or _tensor.float32
    single = dtype is _tensor.float32

    def rounded(x):   # to the dtype's precision (float32: one rounding from the double, as struct packs it)
        return struct.unpack("f", struct.pack("f", builtins.float(x)))[0] if single else builtins.float(x)

    start_r, end_r = rounded(start), rounded(end)
    step = rounded(rounded(end_r - start_r) / (steps - 1)) if steps > 1 else 0.0
    half = steps // 2
    exact = [Fraction(start_r) + Fraction(step) * i if i < half else Fraction(end_r) - Fraction(step) * (steps - 1 - i)
             for i in range(steps)]
    out = _tensor.tensor([rounded(v) for v in exact], dtype=_tensor.float64).to(dtype)
    return _tensor._finish(out, requires_grad)


def logspace(start, end, steps, base=10.0, *, dtype=None, device=None, requires_grad=False):
    """steps values base ** e, e from start to end, computed as 1.13's CPU kernel: start and end in the dtype,
    step = (end - start) / (steps - 1) in double, base ** (start + step * i) for the first half and
    base ** (end - step * (steps - 1 - i)) for the second, each a double pow rounded once into the dtype (an
    integer dtype: float32 arithmetic, truncated)."""
    import numpy as np
    _tensor._check_device(device)
    start, end = (v.item() if isinstance(v, Tensor) else v for v in (start, end))
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    dtype = dtype or _tensor.float32
    if steps == 1:
        values = [builtins.float(base) ** builtins.float(start)]
    elif dtype.is_floating_point:
        np_type = np.float32 if dtype is _tensor.float32 else np.float64
        start_r, end_r = np_type(start), np_type(end)
        step = builtins.float(end_r - start_r) / (steps - 1)   # the difference rounded in the dtype, as the kernel
        half = steps // 2
        values = [builtins.float(base) ** (builtins.float(start_r) + step * i) if i < half else
                  builtins.float(base) ** (builtins.float(end_r) - step * (steps - i - 1)) for i in range(steps)]
    else:
        base_f, start_i, end_i = np.float32(base), builtins.int(start), builtins.int(end)
        step = np.float32(end_i - start_i) / np.float32(steps - 1)
        half = steps // 2
        values = [builtins.int(np.power(base_f, np.float32(start_i) + step * np.float32(i))) if i < half else
                  builtins.int(np.power(base_f, np.float32(end_i) - step * np.float32(steps - i - 1)))
                  for i in range(steps)]
    out = _tensor.tensor(values, dtype=_tensor.float64 if dtype.is_floating_point else _tensor.int64)
    out = out.to(dtype) if out.dtype is not dtype else out
    return _tensor._finish(out, requires_grad)


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False):
    m = n if m is None else m
    for name, v in (("n", n), ("m", m)):
        if v < 0:
            raise RuntimeError(f"{name} must be greater or equal to 0, got {v}")
    out = _tensor.tensor([[1 if i == j else 0 for j in range(m)] for i in range(n)],
                         dtype=dtype or _tensor.float32).reshape([n, m])
    return _tensor._finish(out, requires_grad)


def softmax(input, dim, dtype=None):
    from tinyddp.nn import functional
    return functional.softmax(input, dim, dtype=dtype)


def log_softmax(input, dim, dtype=None):
    from tinyddp.nn import functional
    return functional.log_softmax(input, dim, dtype=dtype)


Tensor.tril = tril
Tensor.triu = triu
Tensor.floor_divide = floor_divide
Tensor.remainder = remainder
Tensor.__floordiv__ = floor_divide
Tensor.__mod__ = remainder
Tensor.__rfloordiv__ = lambda self, other: _host_elementwise(self, other, "floor_divide", lambda x, y: x // y,
                                                             _float_floordiv, reverse=True)
Tensor.__rmod__ = lambda self, other: _host_elementwise(self, other, "remainder", lambda x, y: x % y, _float_mod,
                                                        reverse=True)
Tensor.softmax = softmax
Tensor.log_softmax = log_softmax
Tensor.permute = permute
Tensor.split = split
Tensor.chunk = chunk
Tensor.expand = expand
Tensor.expand_as = lambda self, other: expand(self, other.shape)
Tensor.repeat = repeat
Tensor.masked_fill = masked_fill
Tensor.masked_fill_ = lambda self, mask, value: self._apply_inplace(   # 1.13 reads the value as a number: no overlap
    lambda current: masked_fill(current, mask, value, _inplace=True), [value] if isinstance(value, Tensor) else [],
    False)
Tensor.where = lambda self, condition, other: where(condition, self, other)


def _div_(self, other, *, rounding_mode=None):
    """self /= other; with a rounding_mode, recorded as 1.13's DivBackward2, whose gradients are zeros."""
    if rounding_mode is None:
        return _engine_div_(self, other)
    from tinyddp._tensor_forms import div
    operand = other.detach() if isinstance(other, Tensor) else other
    return self._overwrite_("DivBackward2", lambda: div(self.detach(), operand, rounding_mode=rounding_mode),
                            [other if isinstance(other, Tensor) else None])   # a number: 1.13's edge of None


def _floor_divide_(self, other):
    """1.13 has no derivative for floor_divide_: its node is NotImplemented, whose backward raises."""
    from tinyddp._aliases import check_cast
    operand = other.detach() if isinstance(other, Tensor) else other

    def quotient():
        result = floor_divide(self.detach(), operand)
        check_cast(result.dtype, self.dtype)
        return result
    return self._overwrite_("NotImplemented", quotient, [other] if isinstance(other, Tensor) else [],
                            "aten::floor_divide_")


_engine_div_ = Tensor.div_
Tensor.div_ = _div_
Tensor.floor_divide_ = _floor_divide_
Tensor.clamp = clamp
Tensor.clip = clamp
Tensor.clamp_ = clamp_
Tensor.clip_ = clamp_
Tensor.gather = lambda self, dim, index: gather(self, dim, index)
Tensor.sort = sort
Tensor.argsort = argsort
Tensor.topk = topk
Tensor.minimum = minimum
Tensor.var = var
Tensor.std = std
Tensor.norm = _tensor_norm
Tensor.equal = equal
Tensor.isclose = isclose
Tensor.allclose = allclose
