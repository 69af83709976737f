"""torch.nn's padding layers over F.pad: ZeroPad2d, ConstantPad1d/2d/3d, ReflectionPad1d/2d and ReplicationPad1d/2d;
`padding` is an int (every side) or the tuple F.pad takes, kept as 1.13 keeps it."""
from tinyddp.nn import functional as F
from tinyddp.nn.modules.module import Module


def _sides(padding, n):
    return tuple(padding) if isinstance(padding, (tuple, list)) else (padding,) * (2 * n)


class _PadNd(Module):
    _n = 1
    _mode = "constant"

    def __init__(self, padding):
        super().__init__()
        self.padding = _sides(padding, self._n)

    def forward(self, input):
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self):
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value):
        super().__init__(padding)
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    _n = 1


class ConstantPad2d(_ConstantPadNd):
    _n = 2


class ConstantPad3d(_ConstantPadNd):
    _n = 3


class ZeroPad2d(ConstantPad2d):
    def __init__(self, padding):
        super().__init__(padding, 0.)

    def extra_repr(self):
        return f"{self.padding}"


class ReflectionPad1d(_PadNd):
    _n, _mode = 1, "reflect"


class ReflectionPad2d(_PadNd):
    _n, _mode = 2, "reflect"


class ReplicationPad1d(_PadNd):
    _n, _mode = 1, "replicate"


class ReplicationPad2d(_PadNd):
    _n, _mode = 2, "replicate"


class ReflectionPad3d(_PadNd):
    _n, _mode = 3, "reflect"


class ReplicationPad3d(_PadNd):
    _n, _mode = 3, "replicate"
