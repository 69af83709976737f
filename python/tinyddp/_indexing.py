"""Tensor.__getitem__ and __setitem__: PyTorch's indexing over the engine's narrow, reshape and a row gather.

Basic indices (integers, slices with step 1, None, Ellipsis) give views: narrow, then a reshape that drops
the integer-indexed dims or adds the None ones. A slice with another positive step, a list, an int64 tensor or
a bool mask (one advanced index per call) picks rows with the engine's embedding (a row gather; its backward
is a scatter-add), so the result is a copy, as PyTorch's advanced indexing is, carrying the gradient. The
grad_fn names of basic indexing are 1.13's (select, slice and unsqueeze applied index by index, _basic_view);
with an advanced index they are those of the ops composed: EmbeddingBackward0 for t[mask] or t[::2]
(IndexBackward0, SliceBackward0).

Assignment writes through the same views (copy_ or fill_, PyTorch's broadcasting of the value); with an
advanced index it writes the picked elements through `where`, so it is for tensors the engine lets change in
place (no history), as every in-place op here.
"""
import builtins
import math

from tinyddp import _C, _tensor
from tinyddp._tensor import Tensor

_ZERO_DIM_TEXT = ("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in C++ to "
                  "convert a 0-dim tensor to a number")


def _items(self, index):
    """The index as a list over self's dims: lists made int64 (or bool) tensors, the Ellipsis expanded."""
    items = list(index) if isinstance(index, tuple) else [index]
    for k, item in enumerate(items):
        if isinstance(item, (list, range)):
            items[k] = _tensor.tensor(list(item))
        elif isinstance(item, builtins.bool) or not (item is None or item is Ellipsis or
                                                      isinstance(item, (int, slice, Tensor))):
            raise TypeError("tinyddp: a tensor is indexed by integers, slices, None, Ellipsis, lists and int64 or "
                            f"bool tensors (got {type(item).__name__})")
    ndim = self.dim()
    consumed = builtins.sum(0 if i is None or i is Ellipsis else i.dim() if _is_mask(i) else 1 for i in items)
    if items.count(Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if ndim == 0 and builtins.any(isinstance(i, (int, slice, Tensor)) for i in items):
        raise IndexError(_ZERO_DIM_TEXT)
    if consumed > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    if Ellipsis in items:
        at = items.index(Ellipsis)
        items[at:at + 1] = [_ELLIPSIS_DIM] * (ndim - consumed)
    return items


# A dim the Ellipsis stands for: a full slice that, unlike a written `:`, applies no op (1.13's x[0, ...] ends
# in SelectBackward0, x[0, :] in SliceBackward0). Compared by identity.
_ELLIPSIS_DIM = slice(None)


def _is_mask(item):
    return isinstance(item, Tensor) and item.dtype is _tensor.bool


def _check_slice(item, size):
    if item.step is not None and item.step <= 0:
        raise ValueError("step must be greater than zero")
    return item.indices(size)


def _take(out, dim, index):
    """out indexed along dim by the int64 tensor index (any shape, negative entries from the end): the dims of
    index replace dim. A row gather of the dim moved to the front (the engine's embedding)."""
    size = out._shape()[dim]
    flat = index.reshape([-1]).tolist()
    for v in flat:
        if not -size <= v < size:
            raise IndexError(f"index {v} is out of bounds for dimension {dim} with size {size}")
    wrapped = _tensor.tensor([v % size for v in flat], dtype=_tensor.int64).reshape(list(index._shape()))
    n = out.dim()
    moved = out.permute([dim] + [d for d in range(n) if d != dim]) if dim else out
    rest = list(moved._shape()[1:])
    picked = _C._nn.embedding(moved.reshape([size, math.prod(rest)]), wrapped).reshape(list(index._shape()) + rest)
    k = index.dim()
    if dim == 0:
        return picked
    return picked.permute(list(range(k, k + dim)) + list(range(k)) + list(range(k + dim, k + n - 1)))


def _basic(self, items):
    """Applies the basic indices (keeping every dim, so the result is a view to write through) and returns
    (view, the result's shape, [(dim in view, int64 tensor)] for the advanced indices)."""
    out, shape, advanced, dim = self, [], [], 0
    for item in items:
        if item is None:
            shape.append(1)
            continue
        if isinstance(item, Tensor):
            if _is_mask(item):
                k = item.dim()
                have = list(out._shape()[dim:dim + k])
                if list(item._shape()) != have:
                    bad = next(j for j in range(k) if item._shape()[j] != have[j])
                    raise IndexError(f"The shape of the mask {list(item._shape())} at index {bad} does not match "
                                     f"the shape of the indexed tensor {list(self._shape())} at index {dim + bad}")
                if k != 1:   # the mask's dims become one
                    sizes = list(out._shape())
                    out = out.reshape(sizes[:dim] + [math.prod(have)] + sizes[dim + k:])
                flags = item.reshape([-1]).tolist()
                item = _tensor.tensor([j for j, f in enumerate(flags) if f], dtype=_tensor.int64)
            elif item.dtype is not _tensor.int64:
                raise IndexError("tensors used as indices must be long, byte or bool tensors")
            advanced.append((dim, item))
            shape.extend(item._shape())
            dim += 1
            continue
        size = out._shape()[dim]
        if isinstance(item, int):
            if not -size <= item < size:
                raise IndexError(f"index {item} is out of bounds for dimension {dim} with size {size}")
            out = out.narrow(dim, item % size, 1)
        else:
            start, stop, step = _check_slice(item, size)
            if step != 1:   # every step-th element: an advanced index of its own
                picks = _tensor.tensor(list(range(start, stop, step)), dtype=_tensor.int64)
                advanced.append((dim, picks))
                shape.append(len(picks.tolist()))
            else:
                if (start, stop) != (0, size):
                    out = out.narrow(dim, start, builtins.max(stop - start, 0))
                shape.append(out._shape()[dim])
        dim += 1
    shape.extend(out._shape()[dim:])
    return out, shape, advanced


def _is_basic(items):
    return builtins.all(item is None or isinstance(item, int) or
                        (isinstance(item, slice) and item.step in (None, 1)) for item in items)


def _basic_view(self, items):
    """Basic indices as 1.13 applies them, one view op per index in order, so grad_fn is its: select for an
    integer, slice for a slice (a full one too), unsqueeze for None; none at all (x[...], x[()]) is an alias."""
    out, dim, applied = self, 0, False
    # `position` (the item's place, the Ellipsis counting once per dim it stands for) is the dim 1.13's error
    # texts name.
    for position, item in enumerate(items):
        if item is _ELLIPSIS_DIM:
            dim += 1
            continue
        applied = True
        if item is None:
            out = _C.unsqueeze(out, dim)
            dim += 1
        elif isinstance(item, int):
            size = out._shape()[dim]
            if not -size <= item < size:
                raise IndexError(f"index {item} is out of bounds for dimension {position} with size {size}")
            out = _C.select(out, dim, item % size)
        else:
            start, stop, _ = _check_slice(item, out._shape()[dim])
            out = out.narrow(dim, start, builtins.max(stop - start, 0))
            dim += 1
    return out if applied else _C.alias(self)


def getitem(self, index):
    items = _items(self, index)
    if _is_basic(items):
        return _basic_view(self, items)
    out, shape, advanced = _basic(self, items)
    if len(advanced) > 1:
        raise NotImplementedError("tinyddp: one advanced index (a list, a tensor, a mask or a slice with a step) "
                                  "per indexing; index twice (t[a][:, b]) instead")
    # One advanced index (not basic, so there is one). The integer-indexed dims are still there (size 1), the
    # None ones not yet: a reshape ends it.
    dim, index_tensor = advanced[0]
    return _take(out, dim, index_tensor).reshape(shape)


def setitem(self, index, value):
    """self[index] = value: a number or a tensor broadcast to self[index]'s shape, written in place."""
    items = _items(self, index)
    out, shape, advanced = _basic(self, items)
    if len(advanced) > 1:
        raise NotImplementedError("tinyddp: one advanced index (a list, a tensor, a mask or a slice with a step) "
                                  "per assignment")
    if not isinstance(value, Tensor):
        value = _tensor.tensor(value, dtype=self.dtype)
    value = value.to(self.dtype)
    if not advanced:
        # value broadcast to the result's shape, then laid out as the view (integer dims kept, None dims gone)
        region = list(out._shape())
        out.copy_(_C.expand(value, shape).reshape(region) if list(value._shape()) != region else value)
        return
    # Advanced: every element self[index] names is marked in a bool tensor of out's shape (its positions picked
    # by the same gather from a tensor of position numbers), and the values are written there with where.
    dim, index_tensor = advanced[0]
    region = list(out._shape())
    positions = _tensor.arange(math.prod(region)).reshape(region)
    picked = _take(positions, dim, index_tensor).reshape([-1]).tolist()
    flags = [False] * math.prod(region)
    for p in picked:
        flags[p] = True
    mask = _tensor.tensor(flags, dtype=_tensor.bool).reshape(region) if flags else positions > 0
    spread = _C.expand(value, shape).reshape(_take(positions, dim, index_tensor)._shape())
    # value's elements, placed at the picked positions (a gather of the spread values by each position's rank)
    rank = {p: r for r, p in enumerate(picked)}
    order = [rank.get(p, 0) for p in range(math.prod(region))]
    placed = _C._nn.embedding(spread.reshape([-1, 1]), _tensor.tensor(order, dtype=_tensor.int64)).reshape(region)
    out.copy_(_C.where(mask, placed, out))


Tensor.__getitem__ = getitem
Tensor.__setitem__ = setitem
