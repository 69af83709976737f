"""Tensor.__getitem__ and __setitem__, read as PyTorch 1.13 reads an index (python_variable_indexing.cpp and
ATen's TensorIndexing.h).

The index is taken item by item (applySlicing): an integer selects (select), a slice slices (slice, a strided view),
None inserts a dim (unsqueeze), Ellipsis skips dims, so basic indices give a view with 1.13's grad_fn at each step.
A tensor, a list (nested lists and NumPy arrays too) or a Python bool is recorded as the index of the dim it stands
at; when there is one, the view is indexed by the engine's advanced indexing (engine/ops/advanced_index.cpp), which
broadcasts the index tensors, expands masks and places the result's dims: _C.index for getitem (IndexBackward0),
index_put_ for setitem (IndexPutBackward0, or CopySlices on the tensor when basic indices made a view first).

1.13's quirks are kept, as scripts see them: a short list holding a list, a tensor, a slice, None or Ellipsis is read
as a tuple (NumPy's old rule: t[[[0, 1], [1, 2]]] is t[[0, 1], [1, 2]]); a k-dim mask counts k dims for the Ellipsis
but moves the next index one dim on; a slice that covers a dim exactly (written 0:size) applies no op inside a tuple.
"""
import builtins
import operator
import sys
import warnings
from collections.abc import Sequence

import numpy as np

from tinyddp import _C, _tensor
from tinyddp._tensor import Tensor

_ZERO_DIM_TEXT = ("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in C++ to "
                  "convert a 0-dim tensor to a number")
_INVALID_TEXT = "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid indices (got {})"
_UINT8_TEXT = ("indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool instead. (Triggered "
               "internally at  ./aten/src/ATen/native/IndexingUtils.h:27.)")
# A tuple holds at most this many items before NumPy's rule stops reading a list as a tuple (1.13's as well).
_MAX_TUPLE_LIKE = 32


def _is_int(obj):
    """PyTorch's THPUtils_checkLong: a Python int that is not a bool, or a NumPy integer."""
    return (isinstance(obj, int) and not isinstance(obj, builtins.bool)) or isinstance(obj, np.integer)


def _is_sequence(obj):
    return isinstance(obj, (Sequence, np.ndarray)) and not isinstance(obj, Tensor)


def _as_tuple(index):
    """PyTorch's wrapTuple: a tuple as it is; a short sequence holding a tensor, a sequence, a slice, None or
    Ellipsis is read as a tuple (NumPy's heuristic, so a 2-D NumPy array is two indices); anything else is one index."""
    if isinstance(index, tuple):
        return index
    if not _is_sequence(index):
        return (index,)
    try:
        n = len(index)
    except TypeError:   # a 0-d NumPy array
        return (index,)
    if n >= _MAX_TUPLE_LIKE:
        return (index,)
    for k in range(n):
        item = index[k]
        if isinstance(item, (Tensor, slice)) or _is_sequence(item) or item is None or item is Ellipsis:
            return tuple(index)
    return (index,)


def _sequence_index(seq):
    """PyTorch's sequenceToVariable: a bool tensor if the data is bool, else int64 (floats truncated)."""
    if isinstance(seq, np.ndarray):
        if seq.dtype == np.uint8:
            warnings.warn(_UINT8_TEXT, UserWarning, stacklevel=3)
            return _tensor.from_numpy(np.array(seq, dtype=np.bool_))
        dtype = np.bool_ if seq.dtype == np.bool_ else np.int64
        return _tensor.from_numpy(np.array(seq, dtype=dtype))   # a copy; ascontiguousarray would make 0-d 1-d
    t = _tensor.tensor(_plain(seq))
    return t if t.dtype is _tensor.bool else t.to(_tensor.int64)


def _plain(data):
    """Nested sequences (ranges, NumPy arrays and scalars among them) as the lists and numbers tensor() reads."""
    if isinstance(data, np.ndarray):
        return data.tolist()
    if isinstance(data, np.generic):
        return data.item()
    if _is_sequence(data) and not isinstance(data, str):
        return [_plain(item) for item in data]
    return data


def _specified_dims(items):
    """The dims an index names (1.13's count_specified_dimensions): a bool tensor counts its dims, None, Ellipsis and
    Python bools none, everything else one."""
    count = 0
    for obj in items:
        if isinstance(obj, Tensor):
            count += obj.dim() if obj.dtype is _tensor.bool else 1
        elif obj is not None and obj is not Ellipsis and obj is not True and obj is not False:
            count += 1
    return count


def _select(result, dim, index, real_dim):
    """result.select(dim, index) with 1.13's checks; the error names real_dim, the item's place in the index."""
    shape = result._shape()
    if index == 0 and dim == 0 and not shape:
        raise IndexError(_ZERO_DIM_TEXT)
    size = shape[dim] if dim < len(shape) else 0   # 1.13 reads a size past a 0-dim tensor's: it says "size 0"
    if not (size >= -index and size > index):
        raise IndexError(f"index {index} is out of bounds for dimension {real_dim} with size {size}")
    return _C.select(result, dim, index)


def _slice(result, dim, item, always):
    """result sliced along dim as 1.13's applySlice; inside a tuple (not `always`) a slice written 0:size with step 1
    applies no op."""
    step = 1 if item.step is None else operator.index(item.step)
    if step == 0:
        raise ValueError("slice step cannot be zero")
    start = (0 if step > 0 else sys.maxsize) if item.start is None else operator.index(item.start)
    stop = (sys.maxsize if step > 0 else -sys.maxsize - 1) if item.stop is None else operator.index(item.stop)
    if step < 0:
        raise ValueError("step must be greater than zero")
    shape = result._shape()
    if not always and dim < len(shape) and start == 0 and stop == shape[dim] and step == 1:
        return result
    return _C.slice(result, dim, start, stop, step)


def _bool_index(value):
    """A Python bool as an index (boolToIndexingTensor): [0] picks the new size-1 dim, [] nothing."""
    return _tensor.zeros([1 if value else 0], dtype=_tensor.int64)


def _record(indices, dim, tensor):
    indices.extend([None] * (dim + 1 - len(indices)))
    indices[dim] = tensor


def _apply_slicing(self, items):
    """The basic indices applied to self, in order (a view, or self when none applies), and the advanced ones
    recorded by the dim of that view they stand at: (view, [tensor or None per dim])."""
    ndim = self.dim()
    specified = _specified_dims(items)
    if specified > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    result, dim, indices = self, 0, []
    for real_dim, obj in enumerate(items):
        if _is_sequence(obj):   # a list or NumPy array becomes a tensor, then is read as one (a 0-d one selects)
            obj = _sequence_index(obj)
        if _is_int(obj):
            result = _select(result, dim, builtins.int(obj), real_dim)
        elif isinstance(obj, slice):
            result = _slice(result, dim, obj, always=False)
            dim += 1
        elif obj is Ellipsis:
            dim += ndim - specified
        elif obj is None:
            result = _C.unsqueeze(result, dim)
            dim += 1
        elif obj is True or obj is False:
            result = _C.unsqueeze(result, dim)
            _record(indices, dim, _bool_index(obj))
            dim += 1
        elif isinstance(obj, Tensor):
            if obj.dim() == 0 and not obj.dtype.is_floating_point:   # a number held in a tensor
                if obj.dtype is _tensor.bool:
                    result = _C.unsqueeze(result, dim)
                    _record(indices, dim, _bool_index(obj.item()))
                    dim += 1
                else:
                    result = _select(result, dim, obj.item(), real_dim)
            else:   # a k-dim mask takes k dims in the engine, but the next item comes one dim on (as in 1.13)
                _record(indices, dim, obj)
                dim += 1
        else:
            try:
                value = operator.index(obj)
            except TypeError:
                raise IndexError(_INVALID_TEXT.format(type(obj).__name__)) from None
            result = _select(result, dim, value, real_dim)
    return result, indices


def getitem(self, index):
    if index is None:
        return _C.unsqueeze(self, 0)
    if index is Ellipsis:
        return _C.alias(self)
    if _is_int(index):
        return _select(self, 0, builtins.int(index), 0)
    if isinstance(index, slice):
        return _slice(self, 0, index, always=True)
    if index is True or index is False:
        result = _C.unsqueeze(self, 0)
        return _C.index(result, [_bool_index(index)])
    sliced, indices = _apply_slicing(self, _as_tuple(index))
    if not indices:
        return _C.alias(sliced) if sliced is self else sliced   # x[...] and x[()] are new views too
    return _C.index(sliced, indices)


def _value_tensor(self, value):
    """PyTorch's valueToTensor: a tensor as it is; a Python int, bool or float (NumPy integers and float64 too) in
    self's dtype; anything else is a TypeError naming its type as Python's tp_name does (numpy.float32)."""
    if isinstance(value, Tensor):
        return value
    if _is_int(value) or isinstance(value, (builtins.bool, float)):
        return _tensor.tensor(value.item() if isinstance(value, np.generic) else value, dtype=self.dtype)
    kind = type(value)
    name = kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"
    raise TypeError(f"can't assign a {name} to a {self.type()}")


def _strip_leading_ones(value):
    """The value without its leading size-1 dims (1.13's slicePrefix1sDims): [[1, 2]] fits a row too."""
    shape = list(value._shape())
    k = 0
    while k < len(shape) and shape[k] == 1:
        k += 1
    return value.view(shape[k:]) if k else value


def _copy_to(view, value):
    """view[...] = value as 1.13's copy_to: a value of the view's shape is copied as it is, a 0-dim number tensor
    fills (FillBackward3 under autograd), anything else is viewed without its leading size-1 dims (1.13 views it
    even when it has none: ViewBackward0), broadcast (ExpandBackward0) and copied (CopyBackwards); through a view,
    the engine records the write on the view's base."""
    shape = value._shape()
    if shape == view._shape():
        view.copy_(value)
        return
    if value.dim() == 0 and value.device.type == "cpu":
        _C._fill_(view, value)
        return
    k = 0
    while k < len(shape) and shape[k] == 1:
        k += 1
    source = value.view(list(shape[k:]))
    if source._shape() != view._shape():
        source = _C.expand(source, list(view._shape()))
    view.copy_(source)


def setitem(self, index, value):
    """self[index] = value: a number (in self's dtype) or a tensor broadcast to self[index]'s shape, written in place."""
    value = _value_tensor(self, value)
    if index is False:   # nothing (1.13 does not even check the sizes)
        return
    if index is Ellipsis:
        _copy_to(self, value)
        return
    if index is None or index is True:
        _copy_to(_C.unsqueeze(self, 0), value)
        return
    if _is_int(index):
        _copy_to(_select(self, 0, builtins.int(index), 0), value)
        return
    if isinstance(index, slice):
        _copy_to(_slice(self, 0, index, always=False), value)
        return
    sliced, indices = _apply_slicing(self, _as_tuple(index))
    if not indices:
        _copy_to(sliced, value)
        return
    _C.index_put_(sliced, indices, _strip_leading_ones(value), False)   # on a view: CopySlices on self


def _take(input, dim, index):
    """input indexed along dim by the int64 tensor index (any shape; negative entries from the end): index's dims
    replace dim. The engine's advanced index (IndexBackward0), for the gathers of other modules."""
    return _C.index(input, [None] * dim + [index])


def _index_list(indices, name):
    if not isinstance(indices, (tuple, list)):
        raise TypeError(f"{name}(): argument 'indices' (position 1) must be tuple of Tensors, not "
                        f"{type(indices).__name__}")
    for k, item in enumerate(indices):
        if not isinstance(item, Tensor):
            raise TypeError(f"expected Tensor as element {k} in argument 0, but got {type(item).__name__}")
    return list(indices)


def _check_put_args(name, values, accumulate, values_position):
    if not isinstance(values, Tensor):
        raise TypeError(f"{name}(): argument 'values' (position {values_position}) must be Tensor, not "
                        f"{type(values).__name__}")
    if not isinstance(accumulate, builtins.bool):
        raise TypeError(f"{name}(): argument 'accumulate' (position {values_position + 1}) must be bool, not "
                        f"{type(accumulate).__name__}")


def index_put(input, indices, values, accumulate=False):
    """torch.index_put: input with input[indices] = values (or += with accumulate), indices a tuple of int64 or bool
    tensors for the leading dims."""
    indices = _index_list(indices, "index_put")
    _check_put_args("index_put", values, accumulate, 3)
    return _C.index_put(input, indices, values, accumulate)


def _index_put_method(self, indices, values, accumulate=False):
    indices = _index_list(indices, "index_put")
    _check_put_args("index_put", values, accumulate, 2)
    return _C.index_put(self, indices, values, accumulate)


def _index_put_inplace(self, indices, values, accumulate=False):
    indices = _index_list(indices, "index_put_")
    _check_put_args("index_put_", values, accumulate, 2)
    return _C.index_put_(self, indices, values, accumulate)


Tensor.__getitem__ = getitem
Tensor.__setitem__ = setitem
Tensor.index_put = _index_put_method
Tensor.index_put_ = _index_put_inplace
