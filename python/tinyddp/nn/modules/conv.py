"""torch.nn.Conv2d, MaxPool2d and AvgPool2d over nn.functional's conv2d, max_pool2d and avg_pool2d.

Conv2d's init is 1.13's reset_parameters (kaiming_uniform_ with a = sqrt(5), then the bias uniform in
[-1/sqrt(fan_in), 1/sqrt(fan_in))), drawn from the engine's generator, so a seeded script gets 1.13's weights.
"""
import math

from tinyddp import _tensor
from tinyddp.nn import functional as F
from tinyddp.nn import init
from tinyddp.nn.modules.module import Module
from tinyddp.nn.parameter import Parameter


def _pair(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v, v)


class Conv2d(Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__()
        if groups != 1:
            raise NotImplementedError("tinyddp: Conv2d with groups != 1 is not supported")
        if padding_mode != "zeros":
            raise NotImplementedError(f"tinyddp: Conv2d padding_mode '{padding_mode}'; only 'zeros' is supported")
        if isinstance(padding, str):
            raise NotImplementedError("tinyddp: Conv2d takes integer padding (not 'same' or 'valid')")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size, self.stride = _pair(kernel_size), _pair(stride)
        self.padding, self.dilation = _pair(padding), _pair(dilation)
        self.groups, self.padding_mode = groups, padding_mode
        self.weight = Parameter(_tensor.empty(out_channels, in_channels, *self.kernel_size, dtype=dtype))
        self.bias = Parameter(_tensor.empty(out_channels, dtype=dtype)) if bias else None
        if not bias:
            self.register_parameter("bias", None)
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        return F.conv2d(input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)

    def extra_repr(self):
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0, 0):
            s += f", padding={self.padding}"
        if self.dilation != (1, 1):
            s += f", dilation={self.dilation}"
        if self.bias is None:
            s += ", bias=False"
        return s


class MaxPool2d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False):
        super().__init__()
        if return_indices or ceil_mode:
            raise NotImplementedError("tinyddp: MaxPool2d without return_indices and ceil_mode only")
        self.kernel_size, self.stride = kernel_size, stride if stride is not None else kernel_size
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def forward(self, input):
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class AvgPool2d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
        super().__init__()
        if ceil_mode or divisor_override is not None:
            raise NotImplementedError("tinyddp: AvgPool2d without ceil_mode and divisor_override only")
        self.kernel_size, self.stride = kernel_size, stride if stride is not None else kernel_size
        self.padding, self.ceil_mode, self.count_include_pad = padding, ceil_mode, count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input):
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"
