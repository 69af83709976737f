"""torch.nn.Parameter: a leaf tensor that a Module registers as a parameter when assigned as an attribute."""
from tinyddp import _C
from tinyddp._tensor import Tensor, empty
from tinyddp._tensor_str import tensor_repr


class Parameter(Tensor):
    """Parameter(data, requires_grad=True): a new leaf sharing `data`'s storage (as PyTorch's)."""
    # type(p) prints as 1.13's "<class 'torch.nn.parameter.Parameter'>"; it pickles through __reduce_ex__ below,
    # never by this name
    __module__ = "torch.nn.parameter"

    def __init__(self, data=None, requires_grad=True):
        if data is None:
            data = empty(0)
        if requires_grad and not data.is_floating_point():   # 1.13's Tensor._make_subclass's text
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        _C.Tensor.__init__(self, data.detach())
        self.requires_grad_(requires_grad)

    @classmethod
    def _wrap(cls, handle):
        """A Parameter that is `handle` itself (same autograd identity): how the tensors of a C++ module
        (models/nn) become the Python module's parameters."""
        p = cls.__new__(cls)
        _C.Tensor.__init__(p, handle)
        return p

    def __deepcopy__(self, memo):
        """1.13's: a Parameter over a clone of the data, requires_grad kept, .grad not copied."""
        if id(self) not in memo:
            memo[id(self)] = type(self)(self.detach().clone(), self.requires_grad)
        return memo[id(self)]

    def __reduce_ex__(self, proto):
        from collections import OrderedDict
        from tinyddp._utils import _rebuild_parameter, _rebuild_parameter_with_state
        state = dict(getattr(self, "__dict__", {}))
        if state:
            return _rebuild_parameter_with_state, (self.detach(), self.requires_grad, OrderedDict(), state)
        return _rebuild_parameter, (self.detach(), self.requires_grad, OrderedDict())

    def __repr__(self):
        return "Parameter containing:\n" + tensor_repr(self)

    __str__ = __repr__
