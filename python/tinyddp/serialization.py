"""torch.save / torch.load in PyTorch 1.13's zip format (torch/serialization.py), so that checkpoints move both ways
between tinyddp and PyTorch.

The format (torch.save since 1.6): a zip archive of stored (uncompressed) records in one folder, named after the
file without its extension ('archive' for a buffer):

    ckpt/data.pkl     the object, pickled with protocol 2; each storage is a persistent id
                      ('storage', torch.FloatStorage, key, location, numel) and each tensor a call
                      torch._utils._rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, hooks)
    ckpt/data/<key>   each storage once, its raw little-endian bytes, keys '0', '1', ... in pickling order,
                      written in sorted (string) order, each record's data aligned to 64 bytes
    ckpt/version      b'3\\n'

Writing names torch's functions and classes without torch: the pickler is pickle's pure-Python one with a dispatch
table that writes tinyddp's tensors, dtypes, devices and Sizes as the GLOBALs and calls 1.13 writes (see
_TorchPickler). Reading maps those names back to tinyddp's functions (_TORCH_NAMES); weights_only=True allows
nothing else, as 1.13's restricted unpickler.
"""
import io
import os
import pickle
import zipfile
from collections import OrderedDict

from tinyddp import _C
from tinyddp._device import device as _device
from tinyddp._tensor import Size, Tensor, _c_dtype, bool as _bool, dtype as _dtype, float32, float64, int64
from tinyddp.nn.parameter import Parameter
from tinyddp.storage import _STORAGE_NAME, TypedStorage
from tinyddp import _utils

DEFAULT_PROTOCOL = 2
_FORMAT_VERSION = b"3\n"      # the `version` record 1.13 writes
_ALIGNMENT = 64               # 1.13 pads each record's local header so that its data starts at a multiple of 64
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)   # fixed, so that equal objects give equal files (1.13's are dated 1980 too)
_LEGACY_MAGIC = 0x1950a86a20f9469cfc6c   # the first pickle of a pre-1.6 (legacy) torch.save file


class _TorchGlobal:
    """A name in torch (`module.name`) that the pickle refers to: written as a GLOBAL, never called here."""
    __slots__ = ("module", "name")

    def __init__(self, module, name):
        self.module, self.name = module, name

    def __repr__(self):
        return f"{self.module}.{self.name}"

    def __call__(self, *args):   # callable, as pickle's save_reduce wants of a reduce function; never called
        raise TypeError(f"{self!r} is a name written into a checkpoint, not a function to call")


_REBUILD_TENSOR_V2 = _TorchGlobal("torch._utils", "_rebuild_tensor_v2")
_REBUILD_PARAMETER = _TorchGlobal("torch._utils", "_rebuild_parameter")
_REBUILD_PARAMETER_WITH_STATE = _TorchGlobal("torch._utils", "_rebuild_parameter_with_state")
_TORCH_DEVICE = _TorchGlobal("torch", "device")
_TORCH_SIZE = _TorchGlobal("torch", "Size")
_STORAGE_GLOBAL = {d: _TorchGlobal("torch", name) for d, name in _STORAGE_NAME.items()}
_DTYPE_GLOBAL = {d: _TorchGlobal("torch", d._name) for d in _STORAGE_NAME}
# tinyddp's rebuild functions (what Tensor.__reduce_ex__ and Parameter.__reduce_ex__ return) -> torch's names
_FUNCTION_GLOBAL = {_utils._rebuild_tensor_v2: _REBUILD_TENSOR_V2, _utils._rebuild_parameter: _REBUILD_PARAMETER,
                    _utils._rebuild_parameter_with_state: _REBUILD_PARAMETER_WITH_STATE}


# ---------------------------------------------------------------------------------------------------------------
# save

def _pickler_class(pickle_module):
    base = pickle._Pickler if pickle_module is pickle else getattr(pickle_module, "Pickler", None)
    if not (isinstance(base, type) and issubclass(base, pickle._Pickler)):
        raise TypeError(f"tinyddp.save: pickle_module={getattr(pickle_module, '__name__', pickle_module)!r} has no "
                        "pure-Python Pickler (a subclass of pickle._Pickler, as dill's is); tinyddp writes torch's "
                        "names through one. Pass pickle_module=pickle (the default).")

    class _TorchPickler(base):
        """Pickles tinyddp's objects under PyTorch 1.13's names, opcode for opcode as 1.13's pickler writes them:
        a tensor as REDUCE of torch._utils._rebuild_tensor_v2 over a persistent storage id, a Parameter as
        _rebuild_parameter, a dtype as the GLOBAL torch.float32, a device as torch.device('cpu'), a Size as
        torch.Size((2, 3))."""
        dispatch = dict(base.dispatch)

        def __init__(self, file, protocol):
            super().__init__(file, protocol=protocol)
            self.storages = {}     # key -> TypedStorage, each storage once
            self._keys = {}        # engine Storage -> key ('0', '1', ... in pickling order, as 1.13's id_map)
            self._dtypes = {}      # engine Storage -> dtype it was saved as

        def persistent_id(self, obj):
            if type(obj) is not TypedStorage:
                return None
            storage = obj._key()
            if self._dtypes.setdefault(storage, obj.dtype) is not obj.dtype:   # 1.13's text
                raise RuntimeError("Cannot save multiple tensors or storages that view the same data as different "
                                   "types")
            key = self._keys.setdefault(storage, str(len(self._keys)))
            self.storages[key] = obj
            return ("storage", _STORAGE_GLOBAL[obj.dtype], key, "cpu", obj.size())

        def _save_torch_global(self, obj):
            self.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode("utf-8"))
            self.memoize(obj)

        def _save_dtype(self, obj):
            if obj not in _DTYPE_GLOBAL:
                raise pickle.PicklingError(f"tinyddp.save: unknown dtype {obj!r}")
            self.save(_DTYPE_GLOBAL[obj])

        def _save_tensor(self, obj):
            func, args = obj.__reduce_ex__(self.proto)
            self.save_reduce(_FUNCTION_GLOBAL[func], args, obj=obj)

        def _save_device(self, obj):
            # A new string object for the type, as 1.13's device.type is: the interned "cpu" that the storage ids
            # share would be written as a memo reference instead (the same object to pickle, other bytes).
            type_and_index = obj.__reduce__()[1]
            self.save_reduce(_TORCH_DEVICE, (type_and_index[0].encode().decode(),) + type_and_index[1:], obj=obj)

        def _save_size(self, obj):
            self.save_reduce(_TORCH_SIZE, (tuple(obj),), obj=obj)

        dispatch[_TorchGlobal] = _save_torch_global
        dispatch[_dtype] = _save_dtype
        dispatch[Tensor] = _save_tensor
        dispatch[Parameter] = _save_tensor
        dispatch[_device] = _save_device
        dispatch[Size] = _save_size

    return _TorchPickler


def _is_path(f):
    return isinstance(f, (str, os.PathLike))


def _archive_name(f):
    """1.13's record folder: the file's name without its last extension ('ckpt.v1.pt' -> 'ckpt.v1'), 'archive'
    for a buffer. 1.13 refuses a name whose stem is empty ('.pt', 'dir/'), and so does tinyddp."""
    if not _is_path(f):
        return "archive"
    path = os.fsdecode(os.fspath(f))
    base = path.rsplit("/", 1)[-1]
    stem = base.rsplit(".", 1)[0] if "." in base else base
    if not stem:
        raise RuntimeError(f"tinyddp.save: invalid file name: {path} (PyTorch 1.13 names the zip's folder after the "
                           "file name without its extension, which is empty here; give the file a name)")
    return stem


def _write_record(zf, name, data):
    info = zipfile.ZipInfo(name, date_time=_ZIP_TIME)
    info.compress_type = zipfile.ZIP_STORED
    # Pad the local header with an extra field ('FB', as 1.13's) so that the data starts at a multiple of 64.
    # zipfile adds a 20-byte zip64 field of its own to records of 2 GiB or more.
    header = 30 + len(name.encode("utf-8")) + 4 + (20 if len(data) * 1.05 > zipfile.ZIP64_LIMIT else 0)
    pad = -(zf.fp.tell() + header) % _ALIGNMENT
    info.extra = b"FB" + pad.to_bytes(2, "little") + b"Z" * pad
    zf.writestr(info, data)


def save(obj, f, pickle_module=pickle, pickle_protocol=DEFAULT_PROTOCOL, _use_new_zipfile_serialization=True):
    """torch.save: `obj` (tensors, state dicts, optimizer state dicts, containers, modules) to `f`, a path (str or
    os.PathLike) or a writable binary file object, in PyTorch 1.13's zip format (loadable by torch.load)."""
    if not _use_new_zipfile_serialization:
        raise NotImplementedError("tinyddp.save writes PyTorch's zip format only (torch.save's default since 1.6); "
                                  "the legacy format of _use_new_zipfile_serialization=False is not supported. "
                                  "Leave _use_new_zipfile_serialization at True: every PyTorch since 1.6 loads it.")
    buffer = io.BytesIO()
    pickler = _pickler_class(pickle_module)(buffer, pickle_protocol)
    pickler.dump(obj)
    folder = _archive_name(f)
    records = [("data.pkl", buffer.getvalue())]
    records += [(f"data/{key}", pickler.storages[key]._t._raw_bytes()) for key in sorted(pickler.storages)]
    records.append(("version", _FORMAT_VERSION))
    opened = open(f, "wb") if _is_path(f) else f
    try:
        with zipfile.ZipFile(opened, "w", zipfile.ZIP_STORED) as zf:
            for name, data in records:
                _write_record(zf, f"{folder}/{name}", data)
    finally:
        if opened is not f:
            opened.close()
        elif hasattr(f, "flush"):
            f.flush()


# ---------------------------------------------------------------------------------------------------------------
# load

class _StorageType:
    """What a checkpoint's torch.<Name>Storage unpickles to: the dtype it holds, or why tinyddp cannot hold it."""
    __slots__ = ("name", "dtype")

    def __init__(self, name, dtype):
        self.name, self.dtype = name, dtype


# torch's storages and dtypes that tinyddp does not have, for the error that names them
_FOREIGN_DTYPES = {"HalfStorage": "float16", "BFloat16Storage": "bfloat16", "IntStorage": "int32",
                   "ShortStorage": "int16", "CharStorage": "int8", "ByteStorage": "uint8",
                   "ComplexFloatStorage": "complex64", "ComplexDoubleStorage": "complex128",
                   "QInt8Storage": "qint8", "QUInt8Storage": "quint8", "QInt32Storage": "qint32",
                   "QUInt4x2Storage": "quint4x2", "QUInt2x4Storage": "quint2x4", "UntypedStorage": "uint8",
                   "ByteTensor": "uint8"}
_HAVE = "tinyddp has torch.float32, torch.float64, torch.int64 and torch.bool"


def _unsupported_dtype(what):
    return pickle.UnpicklingError(f"tinyddp.load: the checkpoint holds {what}, which tinyddp does not have; {_HAVE}. "
                                  "Convert the tensor in PyTorch before saving it (t.float(), t.double(), t.long() or "
                                  "t.bool()).")


def _torch_names():
    from tinyddp import nn
    names = {
        "torch._utils._rebuild_tensor_v2": _utils._rebuild_tensor_v2,
        "torch._utils._rebuild_parameter": _utils._rebuild_parameter,
        "torch._utils._rebuild_parameter_with_state": _utils._rebuild_parameter_with_state,
        "torch._tensor._rebuild_from_type_v2": _utils._rebuild_from_type_v2,
        "torch.tensor._rebuild_from_type_v2": _utils._rebuild_from_type_v2,   # 1.13's load_module_mapping
        "torch.Tensor": Tensor,
        "torch.nn.parameter.Parameter": nn.Parameter,
        "torch.Size": Size,
        "torch.device": _device,
    }
    for d, name in _STORAGE_NAME.items():
        names["torch." + name] = _StorageType(name, d)
        names["torch." + d._name] = d
    for alias, d in (("float", float32), ("double", float64), ("long", int64)):
        names["torch." + alias] = d
    return names


# 1.13's weights_only allowlist, as tinyddp's names (torch.device is not on it in 1.13 either)
_WEIGHTS_ONLY = {"collections.OrderedDict", "torch._utils._rebuild_tensor_v2", "torch._utils._rebuild_parameter",
                 "torch.Tensor", "torch.nn.parameter.Parameter", "torch.Size", "torch.float32", "torch.float64",
                 "torch.int64", "torch.bool"} | {"torch." + name for name in _STORAGE_NAME.values()}
_UNSAFE_MESSAGE = ("Weights only load failed. Re-running `torch.load` with `weights_only` set to `False` will likely "
                   "succeed, but it can result in arbitrary code execution.Do it only if you get the file from a "
                   "trusted source. WeightsUnpickler error: ")   # 1.13's text, its missing space included


def _torch_class(module, name):
    """A torch name in a checkpoint, as tinyddp's counterpart; a clear error for one tinyddp does not have."""
    full = f"{module}.{name}"
    found = _torch_names().get(full)
    if found is not None:
        return found
    if name in _FOREIGN_DTYPES:
        return _StorageType(name, None)
    if module == "torch" and name in _FOREIGN_DTYPES.values():
        raise _unsupported_dtype(f"the dtype torch.{name}")
    if module.startswith("torch.nn.modules.") or module == "torch.nn.modules":
        from tinyddp import nn
        cls = getattr(nn, name, None)
        if isinstance(cls, type) and issubclass(cls, nn.Module):
            return cls   # a whole PyTorch module (torch.save(model)): tinyddp's module of that name
    raise pickle.UnpicklingError(f"tinyddp.load: the checkpoint refers to {full}, which tinyddp has no counterpart "
                                 "for. Checkpoints of tensors, state dicts, optimizer state dicts and containers "
                                 "load; save model.state_dict() rather than objects that need torch itself.")


def _restore_location(map_location):
    """1.13's _get_restore_location: a function (storage, location) -> storage for each form of map_location."""
    if map_location is None:
        return _default_restore_location
    if isinstance(map_location, dict):
        return lambda storage, location: _default_restore_location(storage, map_location.get(location, location))
    if isinstance(map_location, str):
        return lambda storage, location: _default_restore_location(storage, map_location)
    if isinstance(map_location, _device):
        return lambda storage, location: _default_restore_location(storage, str(map_location))
    if not callable(map_location):
        raise TypeError(f"tinyddp.load: map_location must be None, a str, a torch.device, a dict or a callable, "
                        f"not {type(map_location).__name__}")

    def restore(storage, location):
        result = map_location(storage, location)
        if result is None:
            result = _default_restore_location(storage, location)
        if not isinstance(result, TypedStorage):
            raise TypeError(f"tinyddp.load: map_location returned {type(result).__name__}; it must return a "
                            "storage (the one it was given, storage.cpu()) or None")
        return result
    return restore


def _default_restore_location(storage, location):
    """'cpu' keeps the storage; 'cuda...' fails as on a PyTorch machine without CUDA (tinyddp's Python front end
    computes on the CPU only: tinyddp.cuda.is_available() is False)."""
    if location == "cpu":
        return storage
    if location.startswith("cuda"):
        raise RuntimeError("Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is "
                           "False. If you are running on a CPU-only machine, please use torch.load with "
                           "map_location=torch.device('cpu') to map your storages to the CPU.")
    raise RuntimeError(f"don't know how to restore data location of torch.storage.TypedStorage (tagged with "
                       f"{location})")


def _unpickler_class(pickle_module, weights_only):
    class _Unpickler(pickle_module.Unpickler):
        """1.13's UnpicklerWrapper: torch's names become tinyddp's; with weights_only, nothing else is allowed."""

        def find_class(self, module, name):
            full = f"{module}.{name}"
            if weights_only and full not in _WEIGHTS_ONLY:
                raise pickle.UnpicklingError(_UNSAFE_MESSAGE + f"Unsupported class {full}")
            if module == "torch" or module.startswith("torch."):
                return _torch_class(module, name)
            return super().find_class(module, name)

    return _Unpickler


class _Checkpoint:
    """An opened zip checkpoint: its record folder and the storages loaded so far."""

    def __init__(self, zf, source):
        self.zf, self.source = zf, source
        names = zf.namelist()
        pickles = [n for n in names if n.count("/") == 1 and n.endswith("/data.pkl")]
        if any(n.endswith("/constants.pkl") for n in names):
            raise RuntimeError(f"tinyddp.load: {source} is a TorchScript archive (torch.jit.save); tinyddp has no "
                               "torch.jit. Save the model's state_dict() with torch.save instead.")
        if not pickles:
            raise pickle.UnpicklingError(f"tinyddp.load: {source} is a zip archive but not a torch.save checkpoint "
                                         f"(no <folder>/data.pkl among its entries {names[:5]})")
        self.folder = pickles[0].split("/")[0]
        self.storages = {}

    def record(self, name):
        try:
            return self.zf.read(f"{self.folder}/{name}")
        except KeyError:
            raise pickle.UnpicklingError(f"tinyddp.load: {self.source} has no record {self.folder}/{name}; the "
                                         "checkpoint is incomplete") from None

    def persistent_load(self, saved_id, restore):
        if not isinstance(saved_id, tuple) or len(saved_id) != 5:
            raise pickle.UnpicklingError(f"tinyddp.load: unknown persistent id {saved_id!r} (expected 1.13's "
                                         "('storage', storage_type, key, location, numel))")
        typename, storage_type, key, location, numel = saved_id
        typename = typename.decode("ascii") if isinstance(typename, bytes) else typename
        location = location.decode("ascii") if isinstance(location, bytes) else location
        if typename != "storage":
            raise pickle.UnpicklingError(f"Unknown typename for persistent_load, expected 'storage' but got "
                                         f"'{typename}'")
        if not isinstance(storage_type, _StorageType):
            raise pickle.UnpicklingError(f"tinyddp.load: the storage type {storage_type!r} is not a torch storage")
        if storage_type.dtype is None:
            raise _unsupported_dtype(f"a torch.{storage_type.name} (dtype {_FOREIGN_DTYPES[storage_type.name]})")
        if key not in self.storages:
            data = self.record(f"data/{key}")
            expected = numel * storage_type.dtype.itemsize
            if len(data) != expected:
                raise pickle.UnpicklingError(f"tinyddp.load: record data/{key} holds {len(data)} bytes, but its "
                                             f"storage is {numel} elements of {storage_type.dtype} ({expected} bytes)"
                                             "; the checkpoint is corrupt")
            storage = TypedStorage(_C._from_bytes(data, _c_dtype(storage_type.dtype)))
            self.storages[key] = restore(storage, location)
        return self.storages[key]


def _not_a_checkpoint(head, source):
    """The error for a file that is not a zip: a legacy (pre-1.6) torch.save file, or not a checkpoint at all."""
    if not head:
        raise EOFError(f"Ran out of input: {source} is empty")
    if head[:1] == b"\x80" or head[257:262] == b"ustar":   # a pickle, or the tar of PyTorch before 0.4
        try:
            magic = pickle.Unpickler(io.BytesIO(head)).load()   # the first pickle only
        except Exception:  # noqa: BLE001  (a pickle we cannot read is not the legacy magic number)
            magic = None
        if magic == _LEGACY_MAGIC or head[257:262] == b"ustar":
            raise RuntimeError(f"tinyddp.load: {source} is in PyTorch's legacy format (torch.save with "
                               "_use_new_zipfile_serialization=False, or from PyTorch before 1.6); tinyddp reads the "
                               "zip format only. Re-save it with PyTorch: torch.save(torch.load(path), path).")
    raise pickle.UnpicklingError(f"tinyddp.load: {source} is not a checkpoint: it is not a zip archive "
                                 f"(torch.save's format), its first bytes are {head[:8]!r}")


def load(f, map_location=None, pickle_module=None, *, weights_only=False, **pickle_load_args):
    """torch.load of a zip checkpoint (PyTorch 1.6+'s torch.save or tinyddp.save) from a path or a readable,
    seekable binary file object. map_location: None, 'cpu', a torch.device, a dict {saved: wanted} or a callable
    (storage, location) -> storage; CUDA locations fail as on a PyTorch machine without CUDA. weights_only=True
    allows only tensors, Parameters, dtypes, Sizes, OrderedDicts and plain Python values, as 1.13's."""
    if weights_only and pickle_module is not None:
        raise RuntimeError("Can not safely load weights when expiclit picke_module is specified")   # 1.13's text
    if pickle_module is None:
        pickle_module = pickle
    pickle_load_args.setdefault("encoding", "utf-8")
    restore = _restore_location(map_location)
    source = repr(os.fsdecode(os.fspath(f))) if _is_path(f) else "the file object"
    opened = open(f, "rb") if _is_path(f) else f
    try:
        start = opened.tell()
        if not zipfile.is_zipfile(opened):
            opened.seek(start)
            _not_a_checkpoint(opened.read(512), source)
        opened.seek(start)
        with zipfile.ZipFile(opened) as zf:
            checkpoint = _Checkpoint(zf, source)
            data = checkpoint.record("data.pkl")
            unpickler = _unpickler_class(pickle_module, weights_only)(io.BytesIO(data), **pickle_load_args)
            unpickler.persistent_load = lambda saved_id: checkpoint.persistent_load(saved_id, restore)
            try:
                return unpickler.load()
            except RuntimeError as e:
                if weights_only:
                    raise pickle.UnpicklingError(_UNSAFE_MESSAGE + str(e)) from None
                raise
    finally:
        if opened is not f:
            opened.close()


__all__ = ["load", "save"]
