"""torch functions and Tensor methods that write into a tensor at indices: scatter, scatter_add, index_add,
index_fill, index_copy, masked_scatter, put/take, renorm, and the host callbacks apply_ and map_ (index_put is the
engine's, bound in _indexing.py).

Writes are the engine's `where` over a host-built mask, the values picked by its embedding (a row gather); the
accumulating ones (scatter_add, index_add, put with accumulate) sum on the host in the order 1.13's CPU
kernel does (index order) and get their gradient from an autograd.Function (_LinearHost), so values and gradients
are 1.13's; each op is recorded as 1.13's node (tinyddp/_node.py).
"""
import builtins
import itertools
import math

import numpy as np

from tinyddp import _C, _tensor
from tinyddp._indexing import _take
from tinyddp._node import recorded
from tinyddp._tensor import Tensor, _wrap_dim
from tinyddp._tensor_forms import _broadcast_shape


def _target_positions(shape, dim, index):
    """For each element of index (row-major), the flat position in a tensor of `shape` that it names along dim."""
    ishape = list(index._shape())
    values = np.array(index.reshape([-1]).tolist(), dtype=np.int64)
    size = shape[dim] if shape else 1
    bad = (values < 0) | (values >= size)   # 1.13's scatter kernels take no negative index
    if bad.any():
        raise RuntimeError(f"index {values[bad][0]} is out of bounds for dimension {dim} with size {size}")
    coords = list(np.unravel_index(np.arange(values.size), ishape)) if ishape else []
    if coords:
        coords[dim] = values
    strides = [math.prod(shape[d + 1:]) for d in range(len(shape))]
    positions = np.zeros(values.size, dtype=np.int64)
    for c, stride in zip(coords, strides):
        positions += c * stride
    return positions.tolist()


def _source_positions(src_shape, ishape):
    """The flat positions in src of the elements at index's coordinates (index may be smaller than src)."""
    if not ishape:
        return [0]
    strides = [math.prod(src_shape[d + 1:]) for d in range(len(src_shape))]
    coords = np.unravel_index(np.arange(math.prod(ishape)), ishape)
    positions = np.zeros(math.prod(ishape), dtype=np.int64)
    for c, stride in zip(coords, strides):
        positions += c * stride
    return positions.tolist()


def _check_scatter(self, dim, index, src, name):
    if index.dtype is not _tensor.int64:
        raise RuntimeError(f"{name}(): Expected dtype int64 for index")
    if isinstance(src, Tensor) and src.dtype is not self.dtype:
        raise RuntimeError(f"{name}(): Expected self.dtype to be equal to src.dtype")
    if index.dim() != self.dim() and index.numel() != 0:
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")


def scatter(input, dim, index, src=None, *, value=None, reduce=None):
    """out = input with out[... index[i][j] ...] = src[i][j] along dim (a later duplicate wins, as 1.13's CPU
    loop); src a tensor or a number (value)."""
    if src is None:
        src = value
    dim = _wrap_dim(dim, input.dim())
    _check_scatter(input, dim, index, src, "scatter")
    if reduce is not None:
        if reduce not in ("add", "multiply"):
            raise RuntimeError("reduce argument must be either add or multiply.")
        if reduce == "add":
            return scatter_add(input, dim, index, src if isinstance(src, Tensor) else
                               _tensor.full(list(index._shape()), src, dtype=input.dtype))
        raise NotImplementedError("tinyddp: scatter(reduce='multiply') is not supported")
    if isinstance(src, Tensor):
        return recorded("ScatterBackward0", [input, src], lambda: _scatter(input, dim, index, src))
    return recorded("ScatterBackward1", [input], lambda: _scatter(input, dim, index, src))


def _scatter(input, dim, index, src):
    shape = list(input._shape())
    targets = _target_positions(shape, dim, index)
    numel = math.prod(shape)
    if isinstance(src, Tensor):
        sources = _source_positions(list(src._shape()), list(index._shape()))
        order = [0] * numel
        flags = [False] * numel
        for t, s in zip(targets, sources):
            order[t], flags[t] = s, True
        flat_src = src.reshape([-1, 1]) if src.numel() else src
        placed = _C._nn.embedding(flat_src, _tensor.tensor(order, dtype=_tensor.int64)).reshape(shape)
    else:
        flags = [False] * numel
        for t in targets:
            flags[t] = True
        placed = _tensor.tensor(src, dtype=input.dtype)
    mask = _tensor.tensor(flags, dtype=_tensor.bool).reshape(shape)
    return _C.where(mask, placed, input)


def _accumulate(input, targets, src, sources):
    """input with src's elements at sources added at targets, in index order (1.13's CPU order), differentiable
    in both: the input's gradient passes, src's is the gradient gathered at the targets."""
    shape = list(input._shape())
    out = input.detach().reshape([-1]).numpy().copy()
    if input.dtype is _tensor.bool:
        out = out.astype(np.int64)
    values = src.detach().reshape([-1]).numpy()[np.array(sources, dtype=np.int64)] if sources else \
        np.zeros([0], dtype=out.dtype)
    np.add.at(out, np.array(targets, dtype=np.int64), values.astype(out.dtype))
    value = _tensor.from_numpy(out).reshape(shape).to(input.dtype)
    if not (input.requires_grad or src.requires_grad):
        return value
    target_index = _tensor.tensor(targets, dtype=_tensor.int64)
    src_shape = list(src._shape())
    source_index = sources

    def src_grad(grad):
        picked = _C._nn.embedding(grad.reshape([-1, 1]), target_index).reshape([-1])
        full = _tensor.zeros([math.prod(src_shape)], dtype=grad.dtype)
        flags = [False] * len(full.tolist())
        order = [0] * len(flags)
        for k, s in enumerate(source_index):
            flags[s], order[s] = True, k
        spread = _C._nn.embedding(picked.reshape([-1, 1]), _tensor.tensor(order, dtype=_tensor.int64)).reshape([-1])
        return _C.where(_tensor.tensor(flags, dtype=_tensor.bool), spread, full).reshape(src_shape)
    return _LinearHost.apply(value, input, src, src_grad)


class _LinearHost:
    @staticmethod
    def apply(value, input, src, src_grad):
        from tinyddp.autograd.function import Function

        class Accumulate(Function):
            @staticmethod
            def forward(ctx, a, b):
                return value

            @staticmethod
            def backward(ctx, grad):
                return (grad if input.requires_grad else None, src_grad(grad) if src.requires_grad else None)
        return Accumulate.apply(input, src)


def scatter_add(input, dim, index, src):
    """out = input with src[i][j] added at out[... index[i][j] ...] along dim (duplicates accumulate)."""
    dim = _wrap_dim(dim, input.dim())
    _check_scatter(input, dim, index, src, "scatter_add")
    targets = _target_positions(list(input._shape()), dim, index)
    sources = _source_positions(list(src._shape()), list(index._shape()))
    return recorded("ScatterAddBackward0", [input, src], lambda: _accumulate(input, targets, src, sources))


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    if reduce == "sum" and include_self:
        return recorded("ScatterReduceBackward0", [input, src], lambda: scatter_add(input, dim, index, src))
    raise NotImplementedError("tinyddp: scatter_reduce supports reduce='sum' with include_self=True")


def _slice_positions(shape, dim, index_values):
    """For each index value (in order) and each position of a slice along dim, its flat position."""
    strides = [math.prod(shape[d + 1:]) for d in range(len(shape))]
    other = [range(s) if d != dim else [0] for d, s in enumerate(shape)]
    slice_offsets = [builtins.sum(c * strides[d] for d, c in enumerate(coords)) for coords in itertools.product(*other)]
    return [[v * strides[dim] + off for off in slice_offsets] for v in index_values]


def _index_values(index, size, dim, bounds_text=False):
    values = index.reshape([-1]).tolist()
    for v in values:
        if not -size <= v < size:
            raise IndexError(f"index {v} is out of bounds for dimension {dim} with size {size}" if bounds_text
                             else "index out of range in self")
    return [v % size for v in values]


def index_add(input, dim, index, source, *, alpha=1):
    """out = input with source's slice k added to input's slice index[k] along dim (duplicates accumulate)."""
    dim = _wrap_dim(dim, input.dim())
    if index.dim() > 1:
        raise IndexError("index_add_(): Index is supposed to be a vector")
    if source.dtype is not input.dtype:
        from tinyddp._tensor_reduce import scalar_name
        raise RuntimeError(f"index_add_(): self ({scalar_name(input.dtype)}) and source ({scalar_name(source.dtype)}) "
                           "must have the same scalar type")
    return recorded("IndexAddBackward0", [input, source], lambda: _index_add(input, dim, index, source, alpha))


def _index_add(input, dim, index, source, alpha):
    shape = list(input._shape()) or [1]
    values = _index_values(index, shape[dim], dim)
    if alpha != 1:
        source = source * alpha
    slices = _slice_positions(shape, dim, values)
    src_shape = list(source._shape()) or [1]
    src_slices = _slice_positions(src_shape, dim, list(range(len(values))))
    targets = [t for s in slices for t in s]
    sources = [t for s in src_slices for t in s]
    # index order within each slice position, as the CPU loop: the slices one after another
    return _accumulate(input, targets, source, sources)


def index_fill(input, dim, index, value):
    dim = _wrap_dim(dim, input.dim())
    shape = list(input._shape()) or [1]
    values = _index_values(index, shape[dim], dim, bounds_text=True)
    flags = [False] * math.prod(shape)
    for s in _slice_positions(shape, dim, values):
        for t in s:
            flags[t] = True
    mask = _tensor.tensor(flags, dtype=_tensor.bool).reshape(list(input._shape()))
    fill = value.to(input.dtype) if isinstance(value, Tensor) else _tensor.tensor(value, dtype=input.dtype)
    if isinstance(value, Tensor):
        return recorded("IndexFillBackward1", [input, value], lambda: _C.where(mask, fill, input))
    return recorded("IndexFillBackward0", [input], lambda: _C.where(mask, fill, input))


def index_copy(input, dim, index, source):
    dim = _wrap_dim(dim, input.dim())
    shape = list(input._shape()) or [1]
    values = _index_values(index, shape[dim], dim)
    targets = [t for s in _slice_positions(shape, dim, values) for t in s]
    sources = [t for s in _slice_positions(list(source._shape()) or [1], dim, list(range(len(values)))) for t in s]
    flags, order = [False] * math.prod(shape), [0] * math.prod(shape)
    for t, s in zip(targets, sources):
        flags[t], order[t] = True, s

    def copied():
        placed = _C._nn.embedding(source.reshape([-1, 1]), _tensor.tensor(order, dtype=_tensor.int64))
        return _C.where(_tensor.tensor(flags, dtype=_tensor.bool).reshape(list(input._shape())),
                        placed.reshape(list(input._shape())), input)
    return recorded("IndexCopyBackward0", [input, source], copied)


def take(input, index):
    return recorded("TakeBackward0", [input], lambda: _take(input.reshape([-1]), 0, index))


def put(input, index, source, accumulate=False):
    return recorded("PutBackward0", [input, source], lambda: _put(input, index, source, accumulate))


def _put(input, index, source, accumulate):
    flat = input.reshape([-1])
    size = flat._shape()[0]
    targets = [v % size for v in _index_values(index, size, 0)]
    if accumulate:
        return _accumulate(input, targets, source, list(range(len(targets))))
    flags, order = [False] * size, [0] * size
    for k, t in enumerate(targets):
        flags[t], order[t] = True, k
    placed = _C._nn.embedding(source.reshape([-1, 1]), _tensor.tensor(order, dtype=_tensor.int64))
    return _C.where(_tensor.tensor(flags, dtype=_tensor.bool), placed.reshape([-1]), flat) \
        .reshape(list(input._shape()))


def masked_scatter(input, mask, source):
    """input with its masked elements (mask broadcast) replaced by source's first elements, in order."""
    shape = _broadcast_shape(input._shape(), mask._shape())
    flags = _C.expand(mask, shape).reshape([-1]).tolist()
    order, k = [], 0
    for f in flags:
        order.append(k if f else 0)
        k += 1 if f else 0
    if k > source.numel():
        raise RuntimeError("masked_scatter: expected source to have at least as many elements as ones in mask")
    def scattered():
        placed = _C._nn.embedding(source.reshape([-1, 1]), _tensor.tensor(order, dtype=_tensor.int64)).reshape(shape)
        return _C.where(_C.expand(mask, shape), placed, input)
    return recorded("MaskedScatterBackward0", [input, source], scattered)


def renorm(input, p, dim, maxnorm):
    """Each slice along dim scaled down to norm maxnorm when its p-norm is larger (by maxnorm / (norm + 1e-7))."""
    if input.dim() < 2:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.dim()} dimensions")
    dim = _wrap_dim(dim, input.dim())
    if not input.is_floating_point():
        from tinyddp._tensor_reduce import scalar_name
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                           f"{scalar_name(input.dtype)}")
    others = [d for d in range(input.dim()) if d != dim]

    def scaled():
        norms = _C._norm(input, float(p), others, True, None)
        scale = _C.where(norms > maxnorm, maxnorm / (norms + 1e-7), _tensor.ones([], dtype=norms.dtype))
        return input * scale
    return recorded("RenormBackward0", [input], scaled)


# ---- host callbacks ----

def apply_(self, callable):
    values = [callable(v) for v in self.reshape([-1]).tolist()]
    return self.copy_(_tensor.tensor(values, dtype=self.dtype).reshape(list(self._shape())))


def map_(self, tensor, callable):
    other = _C.expand(tensor, list(self._shape())).reshape([-1]).tolist()
    values = [callable(a, b) for a, b in zip(self.reshape([-1]).tolist(), other)]
    return self.copy_(_tensor.tensor(values, dtype=self.dtype).reshape(list(self._shape())))


def _install():
    from tinyddp._tensor_forms import _inplace
    methods = {"scatter": scatter, "scatter_add": scatter_add, "scatter_reduce": scatter_reduce,
               "index_add": index_add, "index_fill": index_fill, "index_copy": index_copy, "take": take,
               "put": put, "masked_scatter": masked_scatter, "renorm": renorm,
               "apply_": apply_, "map_": map_}
    for name, fn in methods.items():
        setattr(Tensor, name, fn)
    for name in ("scatter", "scatter_add", "scatter_reduce", "index_add", "index_fill", "index_copy", "put",
                 "masked_scatter", "renorm"):
        setattr(Tensor, name + "_", _inplace(methods[name]))
    recorded_scatter_ = Tensor.scatter_

    def scatter_(self, dim, index, src=None, *, value=None, reduce=None):
        """1.13 has no derivative for scatter_ with reduce: under autograd its node is NotImplemented, whose
        backward raises."""
        if reduce is None:
            return recorded_scatter_(self, dim, index, src, value=value)
        source = src.detach() if isinstance(src, Tensor) else src
        return self._overwrite_("NotImplemented",
                                lambda: scatter(self.detach(), dim, index, source, value=value, reduce=reduce),
                                [src] if isinstance(src, Tensor) else [], "aten::scatter_")
    Tensor.scatter_ = scatter_


_install()
