"""Bitwise ops (& | ^ ~ << >>, bitwise_*), and the in-place operators Python rewrites `x OP= y` into.

On bool tensors & | ^ ~ are the engine's logical ops; on int64 (or bool mixed with int64) they are computed on the
host with NumPy's bitwise functions, which are C's and so 1.13's kernels' on two's-complement integers. The result
type is 1.13's (result_type: bool with a Python int gives int64); floating operands are refused with the text of
1.13's kernel. Integer tensors never require grad, so no graph is recorded.

Without `__ifloordiv__`, `__imod__`, `__ipow__`, `__iand__`, ... Python would evaluate `x //= 2` as `x = x // 2`
and rebind the name, leaving every alias and view of x unchanged; 1.13 writes into x.
"""
import numbers

import numpy as np

from tinyddp import _tensor
from tinyddp._tensor import Tensor

_KERNELS = {"and": "bitwise_and_cpu", "or": "bitwise_or_cpu", "xor": "bitwise_xor_cpu",
            "left_shift": "lshift_cpu", "right_shift": "rshift_cpu"}
_HOST = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor, "left_shift": np.left_shift,
         "right_shift": np.right_shift}
_LOGICAL = {"and": "logical_and", "or": "logical_or", "xor": "logical_xor"}


def _operand(value, op):
    if isinstance(value, Tensor):
        return value
    if isinstance(value, numbers.Number):   # bool included; a float then meets the kernel's dtype check
        return _tensor.tensor(value)
    raise TypeError(f"unsupported operand type(s) for bitwise {op}: 'Tensor' and '{type(value).__name__}'")


def _bitwise(op, input, other):
    """input OP other for bool and int64 tensors or Python ints, in 1.13's result type."""
    from tinyddp._aliases import result_type
    from tinyddp._tensor_forms import _broadcast_shape
    from tinyddp._tensor_reduce import scalar_name
    if not isinstance(input, Tensor):   # a Python int first: torch.bitwise_and(3, t)
        input = _operand(input, op)
    other_t = _operand(other, op)
    _broadcast_shape(input._shape(), other_t._shape())   # 1.13 checks the shapes before the dtypes
    dtype = result_type(input, other)
    if dtype.is_floating_point:
        raise RuntimeError(f"\"{_KERNELS[op]}\" not implemented for '{scalar_name(dtype)}'")
    if dtype is _tensor.bool and op in _LOGICAL:
        return getattr(input, _LOGICAL[op])(other_t)
    if dtype is _tensor.bool:   # 1.13 has no shift of bools
        raise RuntimeError(f"\"{_KERNELS[op]}\" not implemented for 'Bool'")
    a = input.detach().to(_tensor.int64).numpy()
    b = other_t.detach().to(_tensor.int64).numpy()
    if op in ("left_shift", "right_shift"):
        b = b & 63   # 1.13's shift of a 64-bit value by b: x86's, which takes the count modulo 64
    with np.errstate(over="ignore"):
        out = _HOST[op](a, b)
    return _tensor.from_numpy(np.array(out, dtype=np.int64))   # a C-ordered copy; a 0-d result stays 0-d


def bitwise_not(input):
    from tinyddp._tensor_reduce import scalar_name
    if input.dtype is _tensor.bool:
        return input.logical_not()
    if input.is_floating_point():
        raise RuntimeError(f"\"bitwise_not_cpu\" not implemented for '{scalar_name(input.dtype)}'")
    return _tensor.from_numpy(np.array(np.invert(input.detach().numpy())))


def bitwise_and(input, other):
    return _bitwise("and", input, other)


def bitwise_or(input, other):
    return _bitwise("or", input, other)


def bitwise_xor(input, other):
    return _bitwise("xor", input, other)


def bitwise_left_shift(input, other):
    return _bitwise("left_shift", input, other)


def bitwise_right_shift(input, other):
    return _bitwise("right_shift", input, other)


def _invert(self):
    if self.is_floating_point():
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors")
    return bitwise_not(self)


def _in_place(fn):
    """x OP= y as 1.13 runs it: OP's result, of a type x can hold and of x's shape, written into x (a version
    bump; a leaf that requires grad refused by copy_)."""
    def inplace(self, other):
        from tinyddp._aliases import check_cast, result_type
        # checked before the kernel's own dtype check, as 1.13's
        check_cast(result_type(self, other if isinstance(other, (Tensor, numbers.Number)) else _operand(other, "")),
                   self.dtype)
        result = fn(self, other)
        if result.shape != self.shape:
            raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the broadcast shape "
                               f"{list(result.shape)}")
        return self.copy_(result)
    return inplace


def _in_place_method(name):
    """x OP= y through x's own in-place method (floor_divide_, remainder_, pow_), which records autograd."""
    def inplace(self, other):
        return getattr(self, name)(other)
    return inplace


def install(module):
    for name in ("bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "bitwise_left_shift",
                 "bitwise_right_shift"):
        setattr(module, name, globals()[name])
        setattr(Tensor, name, globals()[name])
    for name in ("bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift"):
        setattr(Tensor, name + "_", _in_place(globals()[name]))
    Tensor.bitwise_not_ = lambda self: self.copy_(bitwise_not(self))
    Tensor.__invert__ = _invert
    for dunder, fn in (("and", bitwise_and), ("or", bitwise_or), ("xor", bitwise_xor),
                       ("lshift", bitwise_left_shift), ("rshift", bitwise_right_shift)):
        setattr(Tensor, f"__{dunder}__", fn)
        setattr(Tensor, f"__r{dunder}__", lambda self, other, fn=fn, op=dunder: fn(_operand(other, op), self))
        setattr(Tensor, f"__i{dunder}__", _in_place(fn))
    Tensor.__ifloordiv__ = _in_place_method("floor_divide_")
    Tensor.__imod__ = _in_place_method("remainder_")
    Tensor.__ipow__ = _in_place_method("pow_")
    for name in ("iadd", "isub", "imul", "itruediv", "ifloordiv", "imod", "ipow", "iand", "ior", "ixor", "ilshift",
                 "irshift"):
        setattr(Tensor, f"__{name}__", _declining_arrays(getattr(Tensor, f"__{name}__")))


def _declining_arrays(inplace):
    """x OP= ndarray is not in place in 1.13: its operator declines the array, so Python computes x OP ndarray
    (through NumPy, see Tensor.__array_wrap__) and rebinds x."""
    def op(self, other):
        if isinstance(other, np.ndarray):
            return NotImplemented
        return inplace(self, other)
    return op
