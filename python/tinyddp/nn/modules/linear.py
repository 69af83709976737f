"""torch.nn.Linear over models/nn's Linear: its init (uniform in [-1/sqrt(in), 1/sqrt(in)), weight first, from
the engine's per-thread generator: the same distribution as PyTorch's, not its values) and its forward
(addmm for 2-D inputs, so the graph, and with it DDP's gradient order, is PyTorch's)."""
from tinyddp import _C
from tinyddp._tensor import _c_dtype
from tinyddp.nn.modules.module import Module
from tinyddp.nn.parameter import Parameter


class Linear(Module):
    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        impl = _C._nn.Linear(in_features, out_features, bias, _c_dtype(dtype))
        object.__setattr__(self, "_impl", impl)
        self.weight = Parameter._wrap(impl.weight)
        if bias:
            self.bias = Parameter._wrap(impl.bias)
        else:
            self.register_parameter("bias", None)

    def forward(self, input):
        # The C++ layer computes with its own handles; they are this module's parameters unless reassigned.
        if not self.weight._is_same(self._impl.weight) or (self.bias is not None and
                                                          not self.bias._is_same(self._impl.bias)):
            raise RuntimeError("Linear: weight or bias was replaced by a new Parameter; tinyddp's Linear computes with "
                               "the tensors it was built with. Copy new values in place instead: "
                               "with torch.no_grad(): linear.weight.copy_(new_weight).")
        return self._impl.forward(input)

    def extra_repr(self):
        return self._impl.extra_repr()
