"""torch.storage.TypedStorage: the memory that one or more tensors view, typed by its dtype.

A tensor is (storage, storage offset, size, stride); its views share one storage. torch.save writes each storage
once however many tensors view it, and copy.deepcopy copies it once per deepcopy call, so that views stay views.
Here a storage is a 1-D contiguous tensor over the whole of the engine's Storage (Tensor._storage_tensor()); its
identity is the engine's Storage (`_key()`), not the Python object, as PyTorch keys on `_cdata`.
"""
from tinyddp import _C
from tinyddp._device import _CPU, _NO_CUDA
from tinyddp._tensor import _BY_C, _c_dtype, bool as _bool, float32, float64, int64

# PyTorch 1.13's legacy storage class for each dtype tinyddp has: the name a checkpoint records
# (('storage', torch.FloatStorage, key, location, numel)).
_STORAGE_NAME = {float32: "FloatStorage", float64: "DoubleStorage", int64: "LongStorage", _bool: "BoolStorage"}


class TypedStorage:
    """A storage of `dtype` elements; made by Tensor.storage() and by torch.load (tinyddp.serialization)."""
    __slots__ = ("_t",)

    def __init__(self, _tensor):
        self._t = _tensor   # 1-D, contiguous, storage offset 0, over the whole storage; no history

    dtype = property(lambda self: _BY_C[self._t._dtype()])
    device = property(lambda self: _CPU)
    is_cuda = property(lambda self: False)

    def size(self):
        return self._t.numel()

    __len__ = size

    def element_size(self):
        return self.dtype.itemsize

    def nbytes(self):
        return self._t._storage_nbytes()

    def data_ptr(self):
        return self._t.data_ptr()

    def tolist(self):
        return self._t.tolist()

    def pickle_storage_type(self):
        return _STORAGE_NAME[self.dtype]

    def cpu(self):
        return self

    def cuda(self, device=None, non_blocking=False, **kwargs):
        raise AssertionError(_NO_CUDA)

    def _key(self):
        return self._t._storage_key()

    def __deepcopy__(self, memo):
        key = ("tinyddp.storage", self._key())   # the Storage, not this Python object: views share one copy
        if key not in memo:
            memo[key] = TypedStorage(self._t.clone())
        return memo[key]

    def __copy__(self):
        return self

    def __reduce__(self):
        # Plain pickling (pickle.dumps, multiprocessing) carries the bytes; torch.save writes them as a zip record.
        return _load_from_bytes, (self.dtype._name, self._t._raw_bytes())

    def __repr__(self):
        values = "\n".join(f" {v}" for v in self.tolist())
        head = values + "\n" if values else ""
        return f"{head}[torch.storage.TypedStorage(dtype={self.dtype}, device=cpu) of size {self.size()}]"


def _load_from_bytes(dtype_name, data):
    """The inverse of TypedStorage.__reduce__: a new storage holding a copy of `data`."""
    return TypedStorage(_C._from_bytes(data, _c_dtype(_DTYPES[dtype_name])))


_DTYPES = {d._name: d for d in _STORAGE_NAME}
