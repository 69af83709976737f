"""torch.nn.Linear over models/nn's Linear: its init (uniform in [-1/sqrt(in), 1/sqrt(in)), weight first, from
the engine's per-thread generator: the same distribution as PyTorch's, not its values) and its forward
(addmm for 2-D inputs, so the graph, and with it DDP's gradient order, is PyTorch's)."""
import math

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
        # The Parameter objects registered now: while they are still registered, the C++ layer's handles are
        # this module's parameters, checked by identity at each forward (no Python objects made per call).
        object.__setattr__(self, "_own", (self._parameters["weight"], self._parameters["bias"]))

    def forward(self, input):
        params, (weight, bias) = self._parameters, self._own
        if (params.get("weight") is not weight or params.get("bias") is not bias) and not self._same_tensors():
            # weight or bias replaced (a new Parameter), or computed (weight_norm's pre-hook sets a plain tensor):
            # the same addmm over whatever the attributes hold now, as 1.13's F.linear(input, self.weight, ...)
            return _C._nn.linear(input, self.weight, self.bias)
        return self._impl.forward(input)

    def _same_tensors(self):
        """A Parameter re-registered under another Python object but over the same tensors is the C++ layer's."""
        w, b = self._parameters.get("weight"), self._parameters.get("bias")
        return (w is not None and w._is_same(self._impl.weight)
                and (b is None) == (self._impl.bias is None) and (b is None or b._is_same(self._impl.bias)))

    # Pickling and copy.deepcopy: the C++ layer is not pickled; the copy adopts its own (copied) Parameters as a new
    # C++ layer's tensors (_C._nn.Linear._adopt: no init, no draw from the generator), requires_grad kept.
    def __getstate__(self):
        state = dict(self.__dict__)
        state.pop("_impl", None)
        state.pop("_own", None)
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        weight, bias = self._parameters.get("weight"), self._parameters.get("bias")
        if weight is None:
            raise RuntimeError("Linear: the pickled state has no weight Parameter; tinyddp's Linear needs one")
        flags = [(p, p.requires_grad) for p in (weight, bias) if p is not None]
        object.__setattr__(self, "_impl", _C._nn.Linear._adopt(weight, bias))
        for p, requires_grad in flags:   # the C++ layer marks its parameters as requiring grad; keep frozen ones
            p.requires_grad_(requires_grad)
        object.__setattr__(self, "_own", (weight, bias))

    def reset_parameters(self):
        """1.13's: the weight kaiming-uniform with a = sqrt(5) (uniform in +-1/sqrt(in_features)), then the bias
        uniform in +-1/sqrt(fan_in), drawn in place (the C++ layer's tensors keep the values)."""
        from tinyddp.nn import init
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def extra_repr(self):   # bias as the attribute holds it now (None after `lin.bias = None`), as 1.13's
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Bilinear(Module):
    """y = x1^T W x2 + b, W (out_features, in1_features, in2_features); weight and bias uniform in
    [-1/sqrt(in1_features), 1/sqrt(in1_features)), weight first, as 1.13's reset_parameters draws them."""

    def __init__(self, in1_features, in2_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        from tinyddp import _tensor
        self.in1_features, self.in2_features, self.out_features = in1_features, in2_features, out_features
        self.weight = Parameter(_tensor.empty(out_features, in1_features, in2_features, dtype=dtype))
        if bias:
            self.bias = Parameter(_tensor.empty(out_features, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        from tinyddp.nn import init
        bound = 1 / math.sqrt(self.weight.size(1))
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        from tinyddp.nn import functional as F
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self):
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


class LazyLinear(Module):
    """A Linear whose in_features is the last dim of its first input: until then its weight and bias are empty
    placeholders (1.13's UninitializedParameter); the first forward draws them as a Linear built at that moment
    would, and the module becomes that Linear (its class too, as 1.13's cls_to_become)."""

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        import warnings
        warnings.warn("Lazy modules are a new feature under heavy development so changes to the API or "
                      "functionality can happen at any moment.", stacklevel=2)
        from tinyddp import _tensor
        self.in_features, self.out_features, self._dtype = 0, out_features, dtype
        self.weight = Parameter(_tensor.empty(0, dtype=dtype))
        if bias:
            self.bias = Parameter(_tensor.empty(0, dtype=dtype))
        else:
            self.register_parameter("bias", None)

    def forward(self, input):
        linear = Linear(input.shape[-1], self.out_features, self.bias is not None, dtype=self._dtype)
        state = self.__dict__
        for key in ("_parameters", "_impl", "_own", "in_features"):
            object.__setattr__(self, key, linear.__dict__[key])
        state.pop("_dtype", None)
        object.__setattr__(self, "__class__", Linear)
        return self.forward(input)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"
