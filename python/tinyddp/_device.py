"""torch.device (a C type in PyTorch, torch._C.device) and the argument parsing shared by Tensor.to and Module.to.

tinyddp's Python front end computes on the CPU only. A device object of any type PyTorch knows can be made and
compared (scripts build `torch.device("cuda" if torch.cuda.is_available() else "cpu")`), but moving a tensor or a
module to CUDA raises what a PyTorch built without CUDA raises: AssertionError "Torch not compiled with CUDA
enabled".
"""
import builtins

# PyTorch 1.13's device types, in the order its "Expected one of ..." message lists them.
_DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga", "ort", "xla",
                 "lazy", "vulkan", "mps", "meta", "hpu", "privateuseone")
_NO_CUDA = "Torch not compiled with CUDA enabled"


class device:  # noqa: N801  (torch.device)
    """A device type and an optional index: device("cpu"), device("cpu", 0), device("cuda:1"), device(other)."""
    __slots__ = ("_type", "_index")

    def __init__(self, type, index=None):  # noqa: A002  (PyTorch's argument names)
        if isinstance(type, device):
            type, index = type._type, type._index
        elif isinstance(type, int) and not isinstance(type, builtins.bool):   # device(0) is cuda:0, as PyTorch's
            type, index = "cuda", type
        elif isinstance(type, str):
            if index is not None and ":" in type:
                raise RuntimeError("type (string) must not include an index because index was passed explicitly: "
                                   + type)
            type, index = _parse(type, index)
        else:
            raise TypeError(f"device(): argument 'type' must be str, not {builtins.type(type).__name__}")
        if index is not None:
            if not isinstance(index, int) or isinstance(index, builtins.bool):
                raise TypeError(f"Device(): argument 'index' (position 2) must be int, not "
                                f"{builtins.type(index).__name__}")
            if index < 0:
                raise RuntimeError("Device index must not be negative")
        self._type, self._index = type, index

    type = property(lambda self: self._type)
    index = property(lambda self: self._index)

    def __eq__(self, other):
        return isinstance(other, device) and (self._type, self._index) == (other._type, other._index)

    def __hash__(self):
        return hash((self._type, self._index))

    def __str__(self):
        return self._type if self._index is None else f"{self._type}:{self._index}"

    def __repr__(self):
        if self._index is None:
            return f"device(type='{self._type}')"
        return f"device(type='{self._type}', index={self._index})"

    def __reduce__(self):   # PyTorch's: device('cpu') pickles as ('cpu',), device('cuda', 1) as ('cuda', 1)
        return device, (self._type,) if self._index is None else (self._type, self._index)


def _parse(text, index):
    """'cpu', 'cuda', 'cuda:1' -> (type, index), with PyTorch's texts for strings it refuses."""
    name, sep, number = text.partition(":")
    if name not in _DEVICE_TYPES:
        raise RuntimeError(f"Expected one of {', '.join(_DEVICE_TYPES)} device type at start of device string: {text}")
    if sep:
        if not number.isdigit() or (len(number) > 1 and number[0] == "0"):
            raise RuntimeError(f"Invalid device string: '{text}'")
        index = int(number)
    return name, index


_CPU = device("cpu")


def _check_device(d):
    """The device a tensor may be created on or moved to: the CPU only (None means the CPU too)."""
    if d is None:
        return _CPU
    d = device(d)
    if d.type == "cuda":
        raise AssertionError(_NO_CUDA)
    if d.type != "cpu":
        raise RuntimeError(f"tinyddp's Python front end computes on the CPU only; device {d} is not available.")
    return d


def _parse_to(args, kwargs, dtype_type, tensor_type):
    """Tensor.to's three forms, to(device=None, dtype=None, non_blocking=False, copy=False),
    to(dtype, non_blocking=False, copy=False) and to(other, non_blocking=False, copy=False), read as
    (device or None, dtype or None, copy)."""
    args = [dtype_type._read(a) for a in args]   # to(float) is to(torch.float64), as in 1.13
    dev = dtype = None
    if args and isinstance(args[0], tensor_type):
        other = args.pop(0)
        dev, dtype = _CPU, other.dtype
    elif args and isinstance(args[0], dtype_type):
        dtype = args.pop(0)
    elif args and (args[0] is None or isinstance(args[0], (str, device, int))) and \
            not isinstance(args[0], builtins.bool):
        dev = args.pop(0)
        if args and (args[0] is None or isinstance(args[0], dtype_type)):
            dtype = args.pop(0)
    extra = dict(kwargs)
    dev = extra.pop("device", dev)
    dtype = dtype_type._read(extra.pop("dtype", dtype))
    names = ["non_blocking", "copy"]
    if len(args) > len(names):
        raise TypeError(f"to() received an invalid combination of arguments: {tuple(args)!r}")
    flags = dict(zip(names, args))
    for name in names:
        if name in extra:
            flags[name] = extra.pop(name)
    extra.pop("memory_format", None)
    if extra:
        got = ", ".join(f"{k}={type(v).__name__}" for k, v in extra.items())
        raise TypeError(f"to() received an invalid combination of arguments - got ({got}, ), but expected one of:\n"
                        " * (torch.device device, torch.dtype dtype, bool non_blocking, bool copy, *, "
                        "torch.memory_format memory_format)\n"
                        " * (torch.dtype dtype, bool non_blocking, bool copy, *, torch.memory_format memory_format)\n"
                        " * (Tensor tensor, bool non_blocking, bool copy, *, torch.memory_format memory_format)\n")
    if dtype is not None and not isinstance(dtype, dtype_type):
        raise TypeError(f"to(): dtype must be a torch.dtype, not {type(dtype).__name__}")
    return (None if dev is None else _check_device(dev)), dtype, builtins.bool(flags.get("copy", False))
