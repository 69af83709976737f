"""torch.autograd.Variable, as 1.13 keeps it for old scripts: Variable(t, requires_grad) is t.detach() with
requires_grad set (a Tensor: Variables and Tensors merged in 0.4), Variable() an empty float32 tensor, and
isinstance(x, Variable) is isinstance(x, Tensor)."""
import warnings

from tinyddp import _tensor


class _VariableMeta(type):
    def __instancecheck__(cls, other):
        return isinstance(other, _tensor.Tensor)


class Variable(metaclass=_VariableMeta):
    def __new__(cls, data=None, requires_grad=False, volatile=False, _grad_fn=None):
        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` instead.",
                          UserWarning, stacklevel=2)
        if data is None:
            out = _tensor.empty(0)
        elif isinstance(data, _tensor.Tensor):
            out = data.detach()
        else:
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        return out.requires_grad_(requires_grad) if requires_grad else out
