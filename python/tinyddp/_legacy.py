"""The legacy tensor constructors: torch.Tensor(...) and the typed classes torch.FloatTensor, DoubleTensor,
LongTensor and BoolTensor, as 1.13 keeps them for old scripts.

`torch.Tensor(*sizes)` is an uninitialized float32 tensor of that shape (here: zero-filled, as tinyddp's `empty`),
`torch.Tensor(sequence)` is `torch.tensor(sequence, dtype=float32)` (ints become floats), `torch.Tensor()` is
empty, `torch.Tensor(t)` returns `t` itself, whatever its dtype. The typed classes build their dtype the same way
(a tensor of another dtype is refused) and answer `isinstance(t, torch.FloatTensor)` by dtype (1.13: a CPU float32 tensor is an instance). Like 1.13's,
the constructors take no `dtype=` or `requires_grad=`; the errors are 1.13's first lines.
"""
from tinyddp import _tensor
from tinyddp._tensor import Size, Tensor

_SIGNATURES = ("\n * (*, torch.device device)\n * (torch.Storage storage)\n * (Tensor other)\n"
               " * (tuple of ints size, *, torch.device device)\n * (object data, *, torch.device device)\n")


def _is_int(x):
    return isinstance(x, int) and not isinstance(x, bool)


def _invalid_combination(args, kwargs):
    def name(v):   # 1.13 names a keyword's torch type in full (dtype=torch.dtype), a Python one plainly (bool)
        module = type(v).__module__
        return type(v).__name__ if module == "builtins" else f"torch.{type(v).__name__}"
    got = [type(a).__name__ for a in args] + [f"{k}={name(v)}" for k, v in kwargs.items()]
    return TypeError(f"new() received an invalid combination of arguments - got ({', '.join(got)}), but expected "
                     f"one of:{_SIGNATURES}")


def _options(dtype):
    """1.13's TensorOptions text, for its typed constructors' dtype mismatch."""
    c_name = {"float32": "float", "float64": "double", "int64": "long int", "bool": "bool"}[str(dtype)[6:]]
    return (f"TensorOptions(dtype={c_name}, device=cpu, layout=Strided, requires_grad=false (default), "
            "pinned_memory=false (default), memory_format=(nullopt))")


def legacy_new(dtype, args, kwargs, typed):
    """What torch.Tensor(*args, **kwargs) (dtype float32, typed False) or a typed class gives."""
    device = kwargs.get("device")
    if set(kwargs) - {"device"}:
        raise _invalid_combination(args, kwargs)
    if device is not None and _tensor.device(device).type != "cpu":
        raise RuntimeError(f"legacy constructor expects device type: cpu but device type: "
                           f"{_tensor.device(device).type} was passed")
    if not args:
        return _tensor.empty(0, dtype=dtype)
    if _is_int(args[0]) or len(args) > 1:
        for pos, a in enumerate(args, 1):
            if not _is_int(a):
                if _is_int(args[0]):
                    raise TypeError(f"new(): argument 'size' must be tuple of ints, but found element of type "
                                    f"{type(a).__name__} at pos {pos}")
                raise _invalid_combination(args, kwargs)
        return _tensor.empty(*args, dtype=dtype)
    data = args[0]
    if isinstance(data, Size):
        return _tensor.empty(*data, dtype=dtype)
    if isinstance(data, Tensor):
        if typed and data.dtype != dtype:
            raise TypeError(f"expected {_options(dtype)} (got {_options(data.dtype)})")
        return data
    if isinstance(data, (bool, int, float)):
        raise TypeError(f"new(): data must be a sequence (got {type(data).__name__})")
    if isinstance(data, str):
        raise TypeError("new(): invalid data type 'str'")
    return _tensor.tensor(data, dtype=dtype)


def tensor_new(*args, **kwargs):
    """torch.Tensor(*args, **kwargs) but for torch.Tensor(tensor) (the binding's own constructor)."""
    return legacy_new(_tensor.float32, args, kwargs, typed=False)


class _TypedTensorMeta(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype == cls.dtype

    def __repr__(cls):
        return f"<class '{cls.__module__}.{cls.__name__}'>"


def _typed(name, dtype):
    def new(cls, *args, **kwargs):
        return legacy_new(dtype, args, kwargs, typed=True)
    return _TypedTensorMeta(name, (), {"__new__": new, "dtype": dtype, "__module__": "torch"})


FloatTensor = _typed("FloatTensor", _tensor.float32)
DoubleTensor = _typed("DoubleTensor", _tensor.float64)
LongTensor = _typed("LongTensor", _tensor.int64)
BoolTensor = _typed("BoolTensor", _tensor.bool)
