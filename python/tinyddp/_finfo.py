"""torch.finfo and torch.iinfo (torch._C's types in 1.13): the numerical limits of a dtype, for every dtype of
1.13, tensors of it or not. Printed as 1.13 prints them (numbers with 6 significant digits)."""
from tinyddp import _tensor

# bits, eps, max, tiny (smallest normal), resolution: 1.13's values (IEEE half, bfloat16, single, double)
_FLOATS = {"float16": (16, 0.0009765625, 65504.0, 6.103515625e-05, 0.001),
           "bfloat16": (16, 0.0078125, 3.3895313892515355e+38, 1.1754943508222875e-38, 0.01),
           "float32": (32, 1.1920928955078125e-07, 3.4028234663852886e+38, 1.1754943508222875e-38, 1e-06),
           "float64": (64, 2.220446049250313e-16, 1.7976931348623157e+308, 2.2250738585072014e-308, 1e-15)}
_INTS = {"uint8": (8, 0), "int8": (8, 1), "int16": (16, 1), "int32": (32, 1), "int64": (64, 1)}


def _g(x):
    return f"{x:g}"


class finfo:  # noqa: N801
    def __init__(self, type=None):  # noqa: A002  (1.13's argument name)
        type = _tensor.float32 if type is None else type
        if not isinstance(type, _tensor.dtype) or type._name not in _FLOATS:
            raise TypeError("torch.finfo() requires a floating point input type. Use torch.iinfo to handle "
                            "'torch.finfo'")
        self.bits, self.eps, self.max, self.tiny, self.resolution = _FLOATS[type._name]
        self.min, self.smallest_normal, self.dtype = -self.max, self.tiny, type._name

    def __eq__(self, other):
        return isinstance(other, finfo) and self.dtype == other.dtype

    def __hash__(self):
        return hash(self.dtype)

    def __repr__(self):
        return (f"finfo(resolution={_g(self.resolution)}, min={_g(self.min)}, max={_g(self.max)}, eps={_g(self.eps)}, "
                f"smallest_normal={_g(self.smallest_normal)}, tiny={_g(self.tiny)}, dtype={self.dtype})")

    __str__ = __repr__


class iinfo:  # noqa: N801
    def __init__(self, type):  # noqa: A002
        if isinstance(type, _tensor.dtype) and type is _tensor.bool:
            raise TypeError("torch.bool is not supported by torch.iinfo")
        if not isinstance(type, _tensor.dtype) or type._name not in _INTS:
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo to handle "
                            "'torch.iinfo'")
        self.bits, signed = _INTS[type._name]
        self.min = -(1 << (self.bits - 1)) if signed else 0
        self.max = (1 << (self.bits - 1)) - 1 if signed else (1 << self.bits) - 1
        self.dtype = type._name

    def __eq__(self, other):
        return isinstance(other, iinfo) and self.dtype == other.dtype

    def __hash__(self):
        return hash(self.dtype)

    def __repr__(self):
        return f"iinfo(min={_g(self.min)}, max={_g(self.max)}, dtype={self.dtype})"

    __str__ = __repr__
