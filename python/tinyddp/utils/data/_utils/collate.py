"""torch.utils.data._utils.collate: default_collate, default_convert and 1.13's collate registry.

default_collate turns a list of samples into a batch by the type of the first sample: tensors are stacked,
Python floats become a float64 tensor, ints an int64 one (bools a bool one), strings and bytes stay a list,
NumPy arrays and scalars become tensors, and mappings, namedtuples and sequences are collated field by field
(a tuple gives a list, as 1.13's). Anything else raises 1.13's TypeError.
"""
import collections.abc
import re

from tinyddp import _tensor as _t

# NumPy dtype kinds that hold no numbers (bytes, strings, objects); 1.13 leaves such arrays alone or refuses them.
_np_non_numeric = re.compile(r"[SaUO]")

default_collate_err_msg_format = ("default_collate: batch must contain tensors, numpy arrays, numbers, "
                                  "dicts or lists; found {}")


def _is_numpy(obj):
    return type(obj).__module__ == "numpy"


def _numpy_as_tensor(obj):
    """torch.as_tensor of a NumPy array or scalar, or of a list of NumPy scalars. tinyddp copies (from_numpy
    has no shared memory) and knows float32, float64, int64 and bool only; other dtypes raise from_numpy's
    TypeError."""
    import numpy as np
    if isinstance(obj, (list, tuple)):
        # torch promotes the scalars' dtypes as it does tensors' (an int64 and a float32 give float32), where
        # NumPy's array() would give float64.
        dtypes = [np.asarray(x).dtype for x in obj]
        floats = [d for d in dtypes if d.kind == "f"]
        if floats:
            target = max(floats, key=lambda d: d.itemsize)
        elif any(d.kind in "iu" for d in dtypes):
            target = max((d for d in dtypes if d.kind in "iu"), key=lambda d: d.itemsize)
        else:
            target = dtypes[0]
        return _t.from_numpy(np.array(obj, dtype=target))
    return _t.from_numpy(np.asarray(obj))


def default_convert(data):
    """Converts NumPy arrays and scalars (also inside mappings, namedtuples and sequences) to tensors and leaves
    everything else as it is; a tuple comes back as a list, as in 1.13. The DataLoader's collate_fn when
    automatic batching is off (batch_size=None)."""
    elem_type = type(data)
    if isinstance(data, _t.Tensor):
        return data
    if _is_numpy(data) and elem_type.__name__ not in ("str_", "string_"):
        if elem_type.__name__ == "ndarray" and _np_non_numeric.search(data.dtype.str) is not None:
            return data
        return _numpy_as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        converted = {key: default_convert(data[key]) for key in data}
        try:
            return elem_type(converted)
        except TypeError:   # a mapping type that cannot be built from a dict
            return converted
    if isinstance(data, tuple) and hasattr(data, "_fields"):   # a namedtuple
        return elem_type(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        converted = [default_convert(d) for d in data]
        try:
            return elem_type(converted)
        except TypeError:
            return converted
    return data


def collate(batch, *, collate_fn_map=None):
    """Collates `batch` by its first element's type: an exact match in `collate_fn_map` first, then the first
    key (in insertion order) the element is an instance of, then mappings, namedtuples and sequences
    recursively. Each function in the map is called as fn(batch, collate_fn_map=collate_fn_map)."""
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map is not None:
        if elem_type in collate_fn_map:
            return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
        for key, fn in collate_fn_map.items():
            if isinstance(elem, key):
                return fn(batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        collated = {key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map) for key in elem}
        try:
            return elem_type(collated)
        except TypeError:
            return collated
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):   # a namedtuple
        return elem_type(*(collate(field, collate_fn_map=collate_fn_map) for field in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if any(len(sample) != size for sample in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        # Each field goes on as zip's tuple, as in 1.13: a field of strings comes back as a tuple of them.
        fields = [collate(field, collate_fn_map=collate_fn_map) for field in zip(*batch)]
        if isinstance(elem, tuple):
            return fields
        try:
            return elem_type(fields)
        except TypeError:
            return fields
    raise TypeError(default_collate_err_msg_format.format(elem_type))


def collate_tensor_fn(batch, *, collate_fn_map=None):
    return _t.stack(batch, 0)


def collate_numpy_array_fn(batch, *, collate_fn_map=None):
    if _np_non_numeric.search(batch[0].dtype.str) is not None:
        raise TypeError(default_collate_err_msg_format.format(batch[0].dtype))
    return collate([_numpy_as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch, *, collate_fn_map=None):
    return _numpy_as_tensor(batch)


def collate_float_fn(batch, *, collate_fn_map=None):
    return _t.tensor(batch, dtype=_t.float64)


def collate_int_fn(batch, *, collate_fn_map=None):
    # torch.tensor's inference: all bools give bool, ints int64, and an int batch holding a float float32.
    return _t.tensor(batch)


def collate_str_fn(batch, *, collate_fn_map=None):
    return batch


default_collate_fn_map = {_t.Tensor: collate_tensor_fn}
try:
    import numpy as _np
except ImportError:   # pragma: no cover - NumPy is optional, as for 1.13
    _np = None
if _np is not None:
    default_collate_fn_map[_np.ndarray] = collate_numpy_array_fn
    default_collate_fn_map[(_np.bool_, _np.number, _np.object_)] = collate_numpy_scalar_fn
default_collate_fn_map[float] = collate_float_fn
default_collate_fn_map[int] = collate_int_fn
default_collate_fn_map[(str, bytes)] = collate_str_fn


def default_collate(batch):
    """A list of samples as a batch (see the module's overview); DataLoader's collate_fn by default."""
    return collate(batch, collate_fn_map=default_collate_fn_map)
