"""torch.nn.ReLU, Tanh, Sigmoid: the engine's activations as modules; torch.nn.Identity."""
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
