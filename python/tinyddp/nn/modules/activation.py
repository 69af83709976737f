"""torch.nn.ReLU, Tanh, Sigmoid, LeakyReLU, GELU, Softmax, LogSoftmax: nn.functional's activations as modules;
torch.nn.Identity."""
from tinyddp.nn import functional as F
from tinyddp.nn.modules.module import Module


class ReLU(Module):
    def __init__(self, inplace=False):
        super().__init__()
        if inplace:
            raise NotImplementedError("ReLU(inplace=True): tinyddp has no in-place relu; use ReLU().")
        self.inplace = inplace

    def forward(self, input):
        return F.relu(input)


class Tanh(Module):
    def forward(self, input):
        return F.tanh(input)


class Sigmoid(Module):
    def forward(self, input):
        return F.sigmoid(input)


class Identity(Module):
    """Returns its input; its arguments are ignored, as PyTorch's."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class LeakyReLU(Module):
    def __init__(self, negative_slope=1e-2, inplace=False):
        super().__init__()
        if inplace:
            raise NotImplementedError("LeakyReLU(inplace=True): tinyddp has no in-place leaky_relu; use "
                                      "LeakyReLU(negative_slope).")
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope)

    def extra_repr(self):
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace else "")


class GELU(Module):
    def __init__(self, approximate="none"):
        super().__init__()
        F._check_gelu_approximate(approximate)
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class Softmax(Module):
    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.softmax(input, self.dim, _stacklevel=5)

    def extra_repr(self):
        return f"dim={self.dim}"


class LogSoftmax(Module):
    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.log_softmax(input, self.dim, _stacklevel=5)

    def extra_repr(self):
        return f"dim={self.dim}"
