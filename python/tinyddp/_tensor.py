"""torch.Tensor, torch.dtype, torch.Size and the tensor factories (PyTorch's torch/_tensor.py and the
factory functions of torch/__init__.py).

The methods that compute are bound in C++ (python/src/tensor_bindings.cpp); what is added here is Python
presentation and argument parsing: dtype objects, torch.Size, repr, and the nested-list reading of tensor().
"""
import builtins
import numbers
import warnings

from tinyddp import _C
from tinyddp._device import _NO_CUDA, _CPU, _check_device, _parse_to, device
from tinyddp._tensor_str import tensor_repr

Tensor = _C.Tensor
# type(t) prints as 1.13's "<class 'torch.Tensor'>" (scripts print it); tensors pickle through __reduce_ex__, never
# by this name, so no lookup of a module named torch follows from it.
Tensor.__module__ = "torch"
# Python's own errors name a type by its C-level name, which pybind11 spelled "tinyddp._C.Tensor"; assigning
# __name__ resets it, so `divmod(t, 2)` and `round(t, 'a')` say 'Tensor' as 1.13's do.
Tensor.__name__ = "Tensor"


class dtype:
    """torch.dtype: a named element type. Prints as PyTorch does (``torch.float32``), so that scripts run with
    ``import tinyddp as torch`` print the same. Every dtype of 1.13 exists as an object (for comparisons,
    torch.finfo and iinfo, and messages); tensors hold the four the engine has (``_c`` is None for the others)."""

    def __init__(self, name, c_dtype, is_floating_point, itemsize, is_signed=True, is_complex=False):
        self._name, self._c, self.is_floating_point, self.itemsize = name, c_dtype, is_floating_point, itemsize
        self.is_signed, self.is_complex = is_signed, is_complex

    def __repr__(self):
        return "torch." + self._name

    def __reduce__(self):
        return self._name

    @staticmethod
    def _read(d):
        """The dtype a Python number type stands for (_PYTHON_TYPES); anything else unchanged."""
        return _PYTHON_TYPES.get(d, d) if isinstance(d, type) else d


_dtype_class = dtype   # for the functions whose `dtype` argument hides the class
float32 = dtype("float32", _C.DType.f32, True, 4)
float64 = dtype("float64", _C.DType.f64, True, 8)
int64 = dtype("int64", _C.DType.i64, False, 8)
bool = dtype("bool", _C.DType.b8, False, 1, is_signed=False)  # noqa: A001  (builtins.bool is spelled in full here)
_BY_C = {d._c: d for d in (float32, float64, int64, bool)}
# 1.13's other dtypes: no tensor holds them in tinyddp (_c_dtype refuses them, naming the four it has)
float16 = dtype("float16", None, True, 2)
bfloat16 = dtype("bfloat16", None, True, 2)
uint8 = dtype("uint8", None, False, 1, is_signed=False)
int8 = dtype("int8", None, False, 1)
int16 = dtype("int16", None, False, 2)
int32 = dtype("int32", None, False, 4)
complex32 = dtype("complex32", None, False, 4, is_complex=True)
complex64 = dtype("complex64", None, False, 8, is_complex=True)
complex128 = dtype("complex128", None, False, 16, is_complex=True)


# Python's own number types stand for dtypes wherever 1.13 parses one (its PythonArgParser reads float as double,
# int as long, bool as bool): x.to(float), torch.zeros(3, dtype=int).
_PYTHON_TYPES = {builtins.float: float64, builtins.int: int64, builtins.bool: bool, builtins.complex: complex128}


def _c_dtype(d, default=float32):
    if d is None:
        d = default
    d = dtype._read(d)
    if not isinstance(d, dtype):
        raise TypeError(f"dtype must be tinyddp.float32, tinyddp.float64, tinyddp.int64 or tinyddp.bool, not {d!r}")
    if d._c is None:
        raise NotImplementedError(
            f"tinyddp: tensors of dtype {d!r} are not supported; tinyddp's tensors are torch.float32 (torch.float), "
            "torch.float64 (torch.double), torch.int64 (torch.long) or torch.bool. Use torch.long for integers "
            "(class labels, indices) and torch.float32 for floating point.")
    return d._c


class Size(tuple):
    """torch.Size: a tuple of ints that prints as ``torch.Size([2, 3])``; other integers (NumPy's, 0-dim integer
    tensors) are read as ints, anything else is 1.13's TypeError."""

    def __new__(cls, sizes=()):
        sizes = list(sizes)
        for k, d in enumerate(sizes):
            if isinstance(d, Tensor) and d.dim() == 0 and not d.is_floating_point():
                sizes[k] = int(d)
            elif not isinstance(d, numbers.Integral):
                raise TypeError(f"torch.Size() takes an iterable of 'int' (item {k} is '{type(d).__name__}')")
        return super().__new__(cls, (int(d) for d in sizes))

    def __repr__(self):
        return f"torch.Size({list(self)})"

    __str__ = __repr__

    # Slices, concatenation and repetition of a Size are Sizes, as PyTorch's; (5,) + size stays a tuple there too.
    def __getitem__(self, index):
        item = tuple.__getitem__(self, index)
        return Size(item) if isinstance(index, slice) else item

    def __add__(self, other):
        return Size(tuple.__add__(self, other))

    def __mul__(self, times):
        return Size(tuple.__mul__(self, times))

    __rmul__ = __mul__

    def __reduce__(self):   # torch.Size((2, 3)), as PyTorch's (a plain tuple subclass would pickle by NEWOBJ)
        return Size, (tuple(self),)

    def numel(self):
        n = 1
        for d in self:
            n *= d
        return n


def _shape(size, fn="size", of="SymInts"):
    """Sizes as varargs (zeros(2, 3)) or one sequence (zeros((2, 3)), zeros(t.shape)), each an integer (a NumPy
    integer or a 0-dim integer tensor too); anything else is 1.13's TypeError for `fn` (whose sizes are a
    'tuple of SymInts' or, for randn and rand, 'tuple of ints')."""
    def integer(d):
        if isinstance(d, Tensor) and d.dim() == 0 and not d.is_floating_point():
            return True
        return isinstance(d, numbers.Integral)

    sizes = size
    if len(size) == 1 and not integer(size[0]):
        if not isinstance(size[0], (tuple, list)):
            raise TypeError(f"{fn}(): argument 'size' (position 1) must be tuple of {of}, not "
                            f"{type(size[0]).__name__}")
        sizes = size[0]
    for k, d in enumerate(sizes):
        if not integer(d):
            raise TypeError(f"{fn}(): argument 'size' must be tuple of {of}, but found element of type "
                            f"{type(d).__name__} at pos {k + 1}")
    sizes = [int(d) for d in sizes]
    for d in sizes:
        if d < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {d}: {sizes}")
    return sizes


# ---- Tensor methods that are presentation or argument parsing ----

def _size(self, dim=None):
    s = Size(self._shape())
    return s if dim is None else s[_wrap_dim(dim, len(s))]


def _to(self, *args, **kwargs):
    """Tensor.to(device, dtype), to(dtype), to(other), with non_blocking and copy, as PyTorch's: the engine's
    dtype conversion (differentiable); the device must be the CPU (tinyddp._device)."""
    dev, target, copy = _parse_to(args, kwargs, dtype, Tensor)
    # PyTorch returns the tensor itself when nothing changes; an explicit index ("cpu:0") or copy=True copies.
    copy = copy or (dev is not None and dev.index is not None)
    out = self if target is None or target._c == self._dtype() else self._to_dtype(_c_dtype(target))
    return out.clone() if copy and out is self else out


def _cuda(self, device=None, non_blocking=False, memory_format=None):
    raise AssertionError(_NO_CUDA)


def _bool(self):
    if self.numel() == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if self.numel() != 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return builtins.bool(self.item())


def _index(self):
    # 1.13: a one-element integer (or bool) tensor indexes a list or sizes a range
    if self.dtype.is_floating_point or self.numel() != 1:
        raise TypeError("only integer tensors of a single element can be converted to an index")
    return builtins.int(self.item())


def _len(self):
    if self.dim() == 0:
        raise TypeError("len() of a 0-d tensor")
    return self._shape()[0]


def _format(self, spec):
    # 1.13's Tensor.__format__: a plain 0-dim tensor formats its item(); anything else (a Parameter or a subclass
    # too) falls to object.__format__, which gives str() for an empty spec and refuses any other.
    if self.dim() == 0 and type(self) is Tensor:
        return format(self.item(), spec)
    if spec:
        raise TypeError(f"unsupported format string passed to {type(self).__name__}.__format__")
    return str(self)


def _wrap_dim(dim, ndim):
    """A dim in [-ndim, ndim-1] (a 0-dim tensor takes 0 and -1) as a non-negative index, with PyTorch's IndexError."""
    bound = builtins.max(ndim, 1)
    if not -bound <= dim < bound:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-bound}, {bound - 1}], but got {dim})")
    return dim % bound


def _flatten(self, start_dim=0, end_dim=-1):
    """The dims start_dim..end_dim as one (a view where it can be); the tensor itself when they are one dim, and a
    0-dim tensor as shape (1,), as 1.13's."""
    shape = list(self._shape())
    start, end = _wrap_dim(start_dim, len(shape)), _wrap_dim(end_dim, len(shape))
    if not shape:
        return self.reshape([1])
    if start > end:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if start == end:
        return self
    numel = 1
    for size in shape[start:end + 1]:
        numel *= size
    return self.reshape(shape[:start] + [numel] + shape[end + 1:])


# unsqueeze, squeeze and stack are the engine's view and stack ops, so grad_fn is 1.13's UnsqueezeBackward0,
# SqueezeBackward0 (no dim) / SqueezeBackward1 (a dim) and StackBackward0; the dims are checked here first,
# for 1.13's "Dimension out of range" text.

def _unsqueeze(self, dim):
    return _C.unsqueeze(self, _wrap_dim(dim, self.dim() + 1))


def _squeeze(self, dim=None):
    if dim is None:
        return _C.squeeze(self, None)
    return _C.squeeze(self, _wrap_dim(dim, builtins.max(self.dim(), 1)))


def _numpy_T(self):
    """Tensor.T: the dims reversed (a permute, PermuteBackward0, as 1.13's). PyTorch 1.13 deprecates it for other
    than 2 dims (and warns once)."""
    n = self.dim()
    if n not in (0, 2):
        _warn_once("The use of `x.T` on tensors of dimension other than 2 to reverse their shape is deprecated and "
                   "it will throw an error in a future release. Consider `x.mT` to transpose batches of matrices or "
                   "`x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a tensor. (Triggered "
                   "internally at  ./aten/src/ATen/native/TensorShape.cpp:3277.)", stacklevel=2)
    return _C.permute(self, list(range(n - 1, -1, -1)))


_warned = set()


def _warn_once(message, stacklevel):
    """PyTorch's TORCH_WARN_ONCE: one warning per process for each message."""
    if message not in _warned:
        _warned.add(message)
        warnings.warn(message, UserWarning, stacklevel=stacklevel + 1)


def _set_data(self, value):
    """t.data = value: t keeps its autograd identity (requires_grad, .grad, hooks) and now holds value's
    storage, shape and dtype, as PyTorch's (the engine's set_data, for leaves)."""
    if not isinstance(value, Tensor):
        raise TypeError(f"Variable data has to be a tensor, but got {type(value).__name__}")
    self._set_data(value)


# ---- storages, pickling and copying (PyTorch's Tensor.storage, __reduce_ex__, __deepcopy__) ----

def _storage(self):
    from tinyddp.storage import TypedStorage
    return TypedStorage(self._storage_tensor())


def _reduce_ex(self, proto):
    """(storage, storage offset, size, stride, requires_grad, backward hooks), rebuilt by _rebuild_tensor_v2 as
    PyTorch's: a new leaf (requires_grad kept, history dropped) viewing the storage. copy.copy keeps the storage
    object, so a copy shares memory with the original, as in PyTorch; pickle.dumps carries the storage's bytes."""
    from collections import OrderedDict
    from tinyddp._utils import _rebuild_tensor_v2
    return _rebuild_tensor_v2, (_storage(self), self.storage_offset(), tuple(self._shape()), self.stride(),
                                self.requires_grad, OrderedDict())


_DEEPCOPY_NON_LEAF = ("Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol at "
                      "the moment")


def _deepcopy(self, memo):
    """A new leaf over a copy of the storage (copied once per deepcopy call, so views stay views of one copy),
    with requires_grad, .grad (deep-copied) and Python attributes; non-leaves are refused with 1.13's text."""
    if not self.is_leaf:
        raise RuntimeError(_DEEPCOPY_NON_LEAF)
    if id(self) in memo:
        return memo[id(self)]
    import copy
    new_storage = copy.deepcopy(_storage(self), memo)
    out = new_storage._t._as_strided(list(self._shape()), list(self.stride()), self.storage_offset())
    out.requires_grad_(self.requires_grad)
    grad = self.grad
    if grad is not None:
        out.grad = _deepcopy(grad, memo)
    for name, value in getattr(self, "__dict__", {}).items():
        setattr(out, name, copy.deepcopy(value, memo))
    memo[id(self)] = out
    return out


from tinyddp.return_types import max as _MaxResult  # noqa: E402  (torch.return_types.max)


def _maximum(self, other):
    """torch.maximum (and max(a, b)): tinyddp/_tensor_reduce.py."""
    from tinyddp._tensor_reduce import maximum
    return maximum(self, other)


def _max(self, dim=None, keepdim=False):
    if isinstance(dim, Tensor):   # max(input, other): the elementwise maximum, as PyTorch's
        return _maximum(self, dim)
    if dim is None:
        return self._max()
    return _MaxResult(self._max_dim(dim, keepdim))


def _iter(self):
    if self.dim() == 0:
        raise TypeError("iteration over a 0-d tensor")
    return iter(self.unbind(0))   # 1.13's: one UnbindBackward0 node for all the rows


Tensor.__iter__ = _iter
Tensor.flatten = _flatten
Tensor.unsqueeze = _unsqueeze
Tensor.squeeze = _squeeze
Tensor.T = property(_numpy_T)


def _matrix_transpose(name, batched):
    """Tensor.mT / mH (batches of matrices) and H (one matrix): the last two dims swapped (TransposeBackward0;
    tinyddp has no complex dtypes, so the conjugate is the tensor); a 0-dim tensor is given back as is, as 1.13's."""
    def get(self):
        n = self.dim()
        if n == 0:
            return self
        if batched and n < 2:
            raise RuntimeError(f"tensor.{name} is only supported on matrices or batches of matrices. Got {n}-D tensor.")
        if not batched and n != 2:
            hint = " For batches of matrices, consider using tensor.mH" if n > 2 else ""
            raise RuntimeError(f"tensor.{name} is only supported on matrices (2-D tensors). Got {n}-D tensor.{hint}")
        return self.transpose(-2, -1)
    return property(get)


Tensor.mT = _matrix_transpose("mT", True)
Tensor.mH = _matrix_transpose("mH", True)
Tensor.H = _matrix_transpose("H", False)
# Tensor.data: the same storage without history and with a version counter of its own (so autograd does not see its
# in-place changes, as PyTorch's); assigning it swaps the storage (set_data)
Tensor.data = property(lambda self: self._variable_data(), _set_data)
Tensor.max = _max
Tensor.maximum = _maximum
Tensor.shape = property(lambda self: Size(self._shape()))
Tensor.dtype = property(lambda self: _BY_C[self._dtype()])
Tensor.is_floating_point = lambda self: _BY_C[self._dtype()].is_floating_point
Tensor.size = _size
Tensor.to = _to
Tensor.device = property(lambda self: _CPU)
Tensor.is_cuda = property(lambda self: False)
Tensor.cpu = lambda self, memory_format=None: self
Tensor.cuda = _cuda
Tensor.get_device = lambda self: -1
Tensor.float = lambda self: _to(self, float32)
Tensor.double = lambda self: _to(self, float64)
Tensor.long = lambda self: _to(self, int64)
Tensor.bool = lambda self: _to(self, bool)
# the conversions to dtypes the engine lacks raise _c_dtype's error naming the four it has (.int() is below)
Tensor.half = lambda self, memory_format=None: _to(self, float16)
Tensor.bfloat16 = lambda self, memory_format=None: _to(self, bfloat16)
Tensor.byte = lambda self, memory_format=None: _to(self, uint8)
Tensor.char = lambda self, memory_format=None: _to(self, int8)
Tensor.short = lambda self, memory_format=None: _to(self, int16)
Tensor.pow = lambda self, exponent: self ** exponent
Tensor.neg = lambda self: -self
Tensor.__repr__ = tensor_repr
Tensor.__str__ = tensor_repr
Tensor.__format__ = _format
Tensor.__bool__ = _bool
Tensor.__len__ = _len
Tensor.__float__ = lambda self: builtins.float(_bool_free_item(self))
Tensor.__int__ = lambda self: builtins.int(_bool_free_item(self))
Tensor.__index__ = _index
# numpy defers to the tensor's reflected operators (np.float64(2) * t is a tensor), as for 1.13's Tensor
Tensor.__array_priority__ = 1000
Tensor.storage = _storage
Tensor.__reduce_ex__ = _reduce_ex
Tensor.__deepcopy__ = _deepcopy
Tensor.__array__ = lambda self, dtype=None: self.numpy() if dtype is None else self.numpy().astype(dtype)
# A NumPy ufunc given a tensor returns a tensor, as 1.13's (np.sin(t); and t + ndarray, which the tensor's
# operators decline, so NumPy computes it: float64 for a float64 array). 1.13 gives a bool result as uint8,
# which tinyddp does not have: bool here.
Tensor.__array_wrap__ = lambda self, array, context=None: from_numpy(array)


def _bool_free_item(t):
    if t.numel() != 1:
        raise ValueError("only one element tensors can be converted to Python scalars")
    return t.item()


# ---- factories ----

def _finish(t, requires_grad):
    if requires_grad and not t.dtype.is_floating_point:   # the factories' text (requires_grad_() has its own)
        raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
    return t.requires_grad_() if requires_grad else t


def _read_nested(data, dim, shape, flat):
    """Appends the numbers of `data` to `flat`, checking it against `shape` (found from the first elements),
    with PyTorch's texts."""
    if dim == len(shape):
        if isinstance(data, Tensor):
            data = data.item()
        if not isinstance(data, (int, builtins.float)) and not _is_numpy_scalar(data):   # bool is an int
            if isinstance(data, str):
                raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
            raise RuntimeError(f"Could not infer dtype of {type(data).__name__}")
        flat.append(data)
        return
    if not isinstance(data, _SEQUENCES):
        raise ValueError(f"expected sequence of length {shape[dim]} at dim {dim} (got {type(data).__name__})")
    if len(data) != shape[dim]:
        raise ValueError(f"expected sequence of length {shape[dim]} at dim {dim} (got {len(data)})")
    for item in data:
        _read_nested(item, dim + 1, shape, flat)


_SEQUENCES = (list, tuple, range)   # what 1.13 reads as a sequence of elements (PySequence_Check, less str)


def _is_numpy_scalar(v):
    return type(v).__module__ == "numpy" and getattr(v, "ndim", None) == 0 and hasattr(v, "item")


# The dtype 1.13 infers from a sequence's elements: each element's own (a Python float is the default float32, a
# NumPy scalar keeps its dtype), promoted across the elements.
_NUMPY_SCALAR_DTYPES = {"float64": float64, "float32": float32, "float16": float16, "int64": int64, "int32": int32,
                        "int16": int16, "int8": int8, "uint8": uint8, "bool": bool}
_PROMOTION_ORDER = [bool, uint8, int8, int16, int32, int64, float16, float32, float64]


def _element_dtype(v):
    if _is_numpy_scalar(v):
        return _NUMPY_SCALAR_DTYPES.get(str(v.dtype), float64)
    if isinstance(v, builtins.bool):
        return bool
    return int64 if isinstance(v, numbers.Integral) else float32


def _inferred_dtype(flat):
    if not flat:
        return float32
    return builtins.max({_element_dtype(v) for v in flat}, key=_PROMOTION_ORDER.index)


def tensor(data, dtype=None, device=None, requires_grad=False):
    """torch.tensor: a new leaf holding a copy of `data` (nested lists of Python numbers, a NumPy array or a
    tensor). Lists of ints give int64, any float gives float32, unless dtype says otherwise."""
    _check_device(device)
    if isinstance(data, Tensor):
        warnings.warn("To copy construct from a tensor, it is recommended to use sourceTensor.clone().detach() or "
                      "sourceTensor.clone().detach().requires_grad_(True), rather than torch.tensor(sourceTensor).",
                      UserWarning, stacklevel=2)
        out = data.detach().clone()
        return _finish(out if dtype is None else out.to(dtype), requires_grad)
    if type(data).__module__ == "numpy":   # an array, or a NumPy scalar (its dtype kept, as 1.13's)
        import numpy
        out = from_numpy(numpy.asarray(data))
        return _finish(out if dtype is None else out.to(dtype), requires_grad)
    shape, probe = [], data
    while isinstance(probe, _SEQUENCES):
        shape.append(len(probe))
        if not probe:
            break
        probe = probe[0]
    flat = []
    _read_nested(data, 0, shape, flat)
    if dtype is None:
        dtype = _inferred_dtype(flat)
    flat = [v.item() if _is_numpy_scalar(v) else v for v in flat]
    if any(isinstance(v, int) and not -2 ** 63 <= v < 2 ** 63 for v in flat):
        raise RuntimeError("Overflow when unpacking long")
    if dtype is int64:
        flat = [builtins.int(v) for v in flat]    # floats truncate toward zero, as 1.13's cast
    elif dtype is bool:
        flat = [builtins.bool(v) for v in flat]
    return _finish(_C._from_flat(flat, shape, _c_dtype(dtype)), requires_grad)


def zeros(*size, dtype=None, device=None, requires_grad=False):
    _check_device(device)
    return _finish(_C.zeros(_shape(size, "zeros"), _c_dtype(dtype)), requires_grad)


def ones(*size, dtype=None, device=None, requires_grad=False):
    _check_device(device)
    return _finish(_C.ones(_shape(size, "ones"), _c_dtype(dtype)), requires_grad)


def empty(*size, dtype=None, device=None, requires_grad=False):
    _check_device(device)
    return _finish(_C.empty(_shape(size, "empty"), _c_dtype(dtype)), requires_grad)


def full(size, fill_value, dtype=None, requires_grad=False, *, device=None):
    _check_device(device)
    if dtype is None:
        # the fill value's type picks it, as 1.13's: bool, int64 for an int, else the default float
        dtype = (bool if isinstance(fill_value, builtins.bool) else int64 if isinstance(fill_value, numbers.Integral)
                 else float32)
    return _finish(_C.full(_shape((size,)), builtins.float(fill_value), _c_dtype(dtype)), requires_grad)


def zeros_like(input, dtype=None, requires_grad=False, *, device=None):
    _check_device(device)
    return zeros(input.shape, dtype=dtype or input.dtype, requires_grad=requires_grad)


def ones_like(input, dtype=None, requires_grad=False, *, device=None):
    _check_device(device)
    return ones(input.shape, dtype=dtype or input.dtype, requires_grad=requires_grad)


def randn(*size, generator=None, dtype=None, device=None, requires_grad=False):
    """Standard normal samples: after manual_seed(s), PyTorch 1.13's values for s, bitwise (engine/ops/random.cpp).
    The default generator is per thread (each spawn rank has its own, as each process has in PyTorch)."""
    _check_device(device)
    shape = _shape(size, "randn", "ints")
    if dtype is not None and not _dtype_class._read(dtype).is_floating_point:
        from tinyddp._tensor_random import check_floating
        check_floating(_dtype_class._read(dtype), "normal_kernel_cpu")
    return _finish(_C.randn(shape, _c_dtype(dtype), generator), requires_grad)


def rand(*size, generator=None, dtype=None, device=None, requires_grad=False):
    _check_device(device)
    shape = _shape(size, "rand", "ints")
    if dtype is not None and not _dtype_class._read(dtype).is_floating_point:
        from tinyddp._tensor_random import check_floating
        check_floating(_dtype_class._read(dtype), "check_uniform_bounds")
    return _finish(_C.rand(shape, _c_dtype(dtype), generator), requires_grad)


def randint(low=None, high=None, size=None, *, generator=None, dtype=None, device=None, requires_grad=False):
    """randint(high, size) or randint(low, high, size), as PyTorch's; also randint(high=n, size=s)."""
    _check_device(device)
    if size is None:
        if high is None or low is None:
            raise TypeError("randint() missing 1 required positional arguments: \"size\"")
        low, high, size = 0, low, high
    elif high is None:
        low, high = 0, low
    elif low is None:
        low = 0
    if high is None:
        raise TypeError("randint() missing 1 required positional arguments: \"high\"")
    out = _C.randint(int(low), int(high), _shape((size,)), generator)
    return _finish(out if dtype is None or dtype is int64 else out.to(dtype), requires_grad)


def randperm(n, *, generator=None, dtype=None, device=None, requires_grad=False):
    _check_device(device)
    out = _C.randperm(int(n), generator)
    return _finish(out if dtype is None or dtype is int64 else out.to(dtype), requires_grad)


def arange(end, dtype=None, *, device=None):
    _check_device(device)
    return _C.arange(int(end), _c_dtype(dtype, int64))


def from_numpy(ndarray):
    """A tensor holding a copy of `ndarray` (float32, float64 or int64). PyTorch's shares the memory instead."""
    return _C._from_numpy(ndarray)


def is_tensor(obj):
    return isinstance(obj, Tensor)


def _tensor_sequence(tensors, fn):
    if isinstance(tensors, Tensor):   # 1.13 does not iterate a tensor here
        raise TypeError(f"{fn}(): argument 'tensors' (position 1) must be tuple of Tensors, not Tensor")
    return list(tensors)


def cat(tensors, dim=0):
    return _C.cat(_tensor_sequence(tensors, "cat"), dim)


def stack(tensors, dim=0):
    """The tensors (all of one shape) joined along a new dim (StackBackward0)."""
    tensors = _tensor_sequence(tensors, "stack")
    if not tensors:   # before tensors[0] (the engine checks the shapes)
        raise RuntimeError("stack expects a non-empty TensorList")
    return _C.stack(tensors, _wrap_dim(dim, tensors[0].dim() + 1))


def unsqueeze(input, dim):
    return _unsqueeze(input, dim)


def squeeze(input, dim=None):
    return _squeeze(input, dim)


# ---- functions that mirror Tensor methods ----

def exp(input):
    return input.exp()


def log(input):
    return input.log()


def sqrt(input):
    return input.sqrt()


def abs(input):  # noqa: A001
    return input.abs()


def relu(input):
    return input.relu()


def tanh(input):
    return input.tanh()


def sigmoid(input):
    return input.sigmoid()


def max(input, dim=None, keepdim=False):  # noqa: A001
    return _max(input, dim, keepdim)


def maximum(input, other):
    return _maximum(input, other)


def eq(input, other):
    return input.eq(other)


def ne(input, other):
    return input.ne(other)


def lt(input, other):
    return input.lt(other)


def le(input, other):
    return input.le(other)


def gt(input, other):
    return input.gt(other)


def ge(input, other):
    return input.ge(other)


def logical_not(input):
    return input.logical_not()


_engine_logical_not = Tensor.logical_not


def _logical_not(self):
    """1.13's: True where an element is 0, for tensors of any dtype (the engine's op takes bools)."""
    return _engine_logical_not(self) if self.dtype is bool else self == 0


Tensor.logical_not = _logical_not


def flatten(input, start_dim=0, end_dim=-1):
    return _flatten(input, start_dim, end_dim)


def matmul(input, other):
    return input.matmul(other)
# int32 is not one of tinyddp's dtypes: .int() gives int64, the integer dtype it has (the values are the same)
Tensor.int = lambda self, memory_format=None: _to(self, int64)
