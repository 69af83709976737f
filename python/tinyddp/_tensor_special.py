"""The special functions scripts reach through torch.* and torch.special: erfc, erfinv, lgamma, digamma (psi) and
polygamma, evaluated on the host in float64 and rounded once to the dtype, as _tensor_math's other host functions
(1.13's float32 kernels are within an ulp or two of that), with 1.13's derivatives and node names. erfinv is
the engine's ops (an initial guess refined by Newton's steps on erf), so large tensors (nn.init.trunc_normal_)
stay fast.
"""
import math

import numpy as np

from tinyddp import _C, _tensor
from tinyddp._tensor import Tensor
from tinyddp._tensor_math import _HostFunction, _float_dtype, _host_function

_SQRT_PI = math.sqrt(math.pi)


def erfc(input):
    return _host_function(np.vectorize(math.erfc, otypes=[np.float64]),
                          [lambda x: (-(x * x)).exp() * (-2 / _SQRT_PI)], input, name="ErfcBackward0")


def _lgamma_value(x):
    try:
        return math.lgamma(x)
    except ValueError:   # a pole (0, -1, -2, ...): 1.13 gives +inf there
        return math.inf


def lgamma(input):
    return _host_function(np.vectorize(_lgamma_value, otypes=[np.float64]), [digamma], input,
                          name="LgammaBackward0")


def _digamma_value(x):
    """psi(x) in float64: 1.13's poles and reflection, the recurrence psi(x) = psi(x + 1) - 1/x up to x >= 10,
    then the asymptotic series."""
    if x == 0:
        return math.copysign(math.inf, -x)
    if math.isnan(x) or x == -math.inf:
        return math.nan
    if x < 0:
        if x == math.trunc(x):
            return math.nan
        return _digamma_value(1 - x) - math.pi / math.tan(math.pi * x)
    result = 0.0
    while x < 10:
        result -= 1 / x
        x += 1
    if x == math.inf:
        return math.inf
    inv2 = 1 / (x * x)
    series = inv2 * (1 / 12 - inv2 * (1 / 120 - inv2 * (1 / 252 - inv2 * (1 / 240 - inv2 * (1 / 132)))))
    return result + math.log(x) - 0.5 / x - series


def _trigamma_value(x):
    """psi'(x) in float64: the reflection for negative x, the recurrence up to x >= 10, the asymptotic series."""
    if math.isnan(x):
        return math.nan
    if x <= 0 and x == math.trunc(x):
        return math.inf
    if x < 0:
        return -_trigamma_value(1 - x) + (math.pi / math.sin(math.pi * x)) ** 2
    result = 0.0
    while x < 10:
        result += 1 / (x * x)
        x += 1
    inv = 1 / x
    inv2 = inv * inv
    return result + inv + inv2 / 2 + inv * inv2 * (1 / 6 - inv2 * (1 / 30 - inv2 * (1 / 42 - inv2 / 30)))


def digamma(input):
    return _host_function(np.vectorize(_digamma_value, otypes=[np.float64]), [lambda x: polygamma(1, x)], input,
                          name="DigammaBackward0")


def psi(input):
    return digamma(input)


def polygamma(n, input):
    """The n-th derivative of digamma, for n = 0 (digamma) and 1 (trigamma)."""
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    if n == 0:
        return digamma(input)
    if n > 1:
        raise NotImplementedError(f"tinyddp: polygamma(n, x) for n = 0 and 1 only, got n = {n}")
    return _host_function(np.vectorize(_trigamma_value, otypes=[np.float64]), [_no_third_derivative], input,
                          name="PolygammaBackward0")


def _no_third_derivative(x):
    raise NotImplementedError("tinyddp: the derivative of polygamma(1, x) (polygamma(2, x)) is not implemented")


def _erfinv_values(y):
    """erfinv of a float64 tensor without history: Winitzki's closed form (relative error about 2e-3), then
    Newton's steps on erf(x) = y with the engine's erf (each squares the error: four reach float64's
    precision); +-1 give +-inf, outside [-1, 1] NaN."""
    a = 0.147
    log_term = (1 - y * y).log()
    first = 2 / (math.pi * a) + log_term / 2
    x = y.sign() * ((first * first - log_term / a).sqrt() - first).sqrt()
    for _ in range(4):
        x = x - (x.erf() - y) / ((-(x * x)).exp() * (2 / _SQRT_PI))
    return _C.where(y.abs() == 1, y * math.inf, x)


def erfinv(input):
    dtype = _float_dtype(input)
    from tinyddp.autograd.grad_mode import no_grad
    with no_grad():
        value = _erfinv_values(input.detach().to(_tensor.float64)).to(dtype)
    if not input.requires_grad:
        return value
    x = input if input.is_floating_point() else input.to(dtype)
    return _HostFunction.apply(value, [x], [lambda t: (erfinv(t) * erfinv(t)).exp() * (_SQRT_PI / 2)],
                               "ErfinvBackward0")


def _install():
    from tinyddp._tensor_forms import _inplace
    for name, fn in {"erfc": erfc, "erfinv": erfinv, "lgamma": lgamma, "digamma": digamma}.items():
        setattr(Tensor, name, fn)
        setattr(Tensor, name + "_", _inplace(fn))
    Tensor.polygamma = lambda self, n: polygamma(n, self)
    Tensor.polygamma_ = _inplace(lambda self, n: polygamma(n, self))


_install()
