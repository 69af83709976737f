"""The random torch functions and Tensor methods beyond the engine's (randn, rand, randint, randperm, uniform_,
normal_, bernoulli_(p), random_): torch.normal of tensors, bernoulli of a probability tensor, multinomial,
exponential_, cauchy_, geometric_ and log_normal_, each drawing from the generator what 1.13's CPU kernel draws
and transforming it as that kernel does, so a seed gives 1.13's samples bitwise and leaves the stream where 1.13
leaves it (tests/python/test_tensor_math.py).
"""
import builtins
import math

import numpy as np

from tinyddp import _C, _tensor, _tensor_ops
from tinyddp._tensor import Tensor
from tinyddp._tensor_forms import _broadcast_shape


def normal(mean, std=1.0, size=None, *, generator=None, dtype=None, out=None, requires_grad=False):
    """normal(mean, std, size) of numbers, or of tensors (broadcast): standard samples scaled by std and
    shifted by mean, drawn as 1.13 draws them."""
    if not isinstance(mean, Tensor) and not isinstance(std, Tensor):
        if size is None:
            raise TypeError("normal() missing 1 required positional arguments: \"size\"")
        sample = _tensor.empty(size, dtype=dtype)
        sample.normal_(builtins.float(mean), builtins.float(std), generator=generator)
        return sample.requires_grad_() if requires_grad else sample
    if isinstance(std, Tensor):
        shape = _broadcast_shape(mean._shape(), std._shape()) if isinstance(mean, Tensor) else \
            list(std._shape())
        like = std
        sample = _tensor.empty(shape, dtype=like.dtype)
        sample.normal_(0.0, 1.0, generator=generator)
        return sample * std + mean
    sample = _tensor.empty(list(mean._shape()), dtype=mean.dtype)
    sample.normal_(0.0, builtins.float(std), generator=generator)
    return sample + mean


_engine_bernoulli_ = Tensor.bernoulli_   # a number p


def _bernoulli_of(probabilities, shape, generator):
    """1 where a float32 uniform (one per element, row-major) is below its probability: 1.13's serial kernel for a
    float32 probability tensor, bitwise."""
    if probabilities.dtype is not _tensor.float32:
        raise NotImplementedError("tinyddp: bernoulli with float64 probabilities is not supported (float32 is)")
    if builtins.bool(((probabilities < 0) | (probabilities > 1)).any()):
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error message "
                           "be improved?  If so, please report an enhancement request to PyTorch.)")
    uniform = _tensor.rand(shape, generator=generator)
    return uniform < _C.expand(probabilities.detach(), shape)


def bernoulli(input, p=None, *, generator=None):
    """Samples of input's shape: 1 with probability input's element (float32), or p (a number) for each."""
    if p is None:
        return _bernoulli_of(input, list(input._shape()), generator).to(input.dtype)
    out = _tensor.empty(list(input._shape()), dtype=input.dtype)
    return _engine_bernoulli_(out, builtins.float(p), generator=generator)


def bernoulli_(self, p=0.5, *, generator=None):
    if isinstance(p, Tensor):   # BernoulliBackward1 under autograd, with an edge to p (whose gradient is none)
        return self._overwrite_("BernoulliBackward1",
                                lambda: _bernoulli_of(p, list(self._shape()), generator).to(self.dtype), [p])
    return _engine_bernoulli_(self, builtins.float(p), generator=generator)


# Note [Random draws from random_()]: 1.13's CPU kernels for exponential_, cauchy_, geometric_ and multinomial
# draw one double u = (random64() & (2^53 - 1)) * 2^-53 per sample, serially; random_() of an int64 tensor is
# random64() % 2^63 per element, so its low 53 bits are those uniforms, draw for draw. The transforms are
# computed in double with the C library's log and tan (math.log, math.tan) and rounded once to the dtype.

def _uniforms(count, generator):
    if count == 0:
        return []
    words = _tensor.empty([count], dtype=_tensor.int64).random_(generator=generator).tolist()
    return [(w & ((1 << 53) - 1)) * 2.0 ** -53 for w in words]


def _fill_from(self, name, values):
    """self overwritten in place by values() (a list, drawn only once the write is allowed), recorded as 1.13's
    node `name` under autograd (the engine's overwrite_)."""
    return self._overwrite_(name, lambda: _tensor.tensor(values(), dtype=_tensor.float64)
                            .reshape(list(self._shape())).to(self.dtype))


def exponential_(self, lambd=1.0, *, generator=None):
    """Samples of Exp(lambd): -1 / lambd * log(1 - u) (Note [Random draws from random_()])."""
    return _fill_from(self, "ExponentialBackward0",
                      lambda: [-1.0 / lambd * math.log(1.0 - u) for u in _uniforms(self.numel(), generator)])


def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    return _fill_from(self, "CauchyBackward0", lambda: [median + sigma * math.tan(math.pi * (u - 0.5))
                                                        for u in _uniforms(self.numel(), generator)])


def geometric_(self, p, *, generator=None):
    return _fill_from(self, "GeometricBackward0", lambda: [math.ceil(math.log(u) / math.log(1.0 - p)) if u > 0
                                                           else math.inf for u in _uniforms(self.numel(), generator)])


def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
    """exp of normal(mean, std) samples drawn one at a time in double (1.13's serial log_normal_ kernel: each a
    normal_distribution<double> draw, which is what normal_ of a one-element float64 tensor draws)."""
    def draw():
        one = _tensor.empty([1], dtype=_tensor.float64)
        values = []
        for _ in range(self.numel()):
            one.normal_(builtins.float(mean), builtins.float(std), generator=generator)
            values.append(math.exp(one.item()))
        return values
    return _fill_from(self, "LogNormalBackward0", draw)


def multinomial(input, num_samples, replacement=False, *, generator=None):
    """num_samples category indices per row of input (unnormalized probabilities), as 1.13 draws them: without
    replacement the top num_samples of p / q with q ~ Exp(1); with replacement (one sample too) a binary search
    of each uniform in the row's normalized running sum (summed in input's dtype). Each path has 1.13's checks
    and texts: the exponential path checks the whole tensor first, the running-sum path each row as it goes."""
    if not input.is_floating_point():
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{_tensor_ops._C_legacy(input.dtype)}")
    if input.dim() not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    n = input._shape()[-1]
    if not replacement and num_samples > n:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    rows = input.detach().reshape([input._shape()[0] if input.dim() == 2 else 1, n]).tolist()
    if not replacement:
        if builtins.any(not v < math.inf or not v >= 0 for row in rows for v in row):
            raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
        if builtins.any(builtins.sum(row) == 0 for row in rows):
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        q = _tensor.empty(list(input._shape()), dtype=input.dtype)
        exponential_(q, generator=generator)
        q = input.detach() / q
        if num_samples == 1:
            return q.argmax(-1, True)
        return q.topk(num_samples)[1]
    import bisect
    single = np.float32 if input.dtype is _tensor.float32 else np.float64
    out = []
    for row in rows:
        for v in row:
            if not v >= 0:   # NaN fails here too, as in 1.13's kernel
                raise RuntimeError("invalid multinomial distribution (encountering probability entry < 0)")
            if not math.isfinite(v):
                raise RuntimeError("invalid multinomial distribution (encountering probability entry = infinity "
                                   "or NaN)")
        running = np.cumsum(np.array(row, dtype=single), dtype=single)
        total = running[-1] if len(row) else single(0)
        if not total > 0:
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        running = running / total
        cum = [builtins.float(v) for v in running]
        cum[-1] = 1.0
        out.append([bisect.bisect_left(cum, u) for u in _uniforms(num_samples, generator)])
    return _tensor.tensor(out, dtype=_tensor.int64).reshape(list(input._shape()[:-1]) + [num_samples])


_engine_random_ = Tensor.random_   # random_(): the whole range of the dtype (engine/ops/random.cpp)


def random_(self, *args, generator=None, **kwargs):
    """random_(), random_(to) or random_(from, to): integers in [from, to), drawn as 1.13's random_from_to
    kernel draws them (one 32-bit word per element, a 64-bit one for ranges of 2^32 or more: randint's
    draws), written in self's dtype."""
    bounds = list(args) + [kwargs.pop(k) for k in ("from", "to") if k in kwargs]
    if kwargs or len(bounds) > 2:
        raise TypeError(f"random_() received an invalid combination of arguments - got {len(args)} positional "
                        f"and {sorted(kwargs)} keyword arguments")
    if not bounds:
        return _engine_random_(self, generator=generator)
    low, high = (0, bounds[0]) if len(bounds) == 1 else bounds
    values = _tensor.randint(low, high, tuple(self.shape), generator=generator)
    return self.copy_(values if self.dtype is _tensor.int64 else values.to(self.dtype))


def check_floating(dtype, kernel):
    """1.13's text for a floating-point draw into an integer or bool tensor (the kernel's dispatch)."""
    if not dtype.is_floating_point:
        from tinyddp._tensor_reduce import scalar_name
        raise RuntimeError(f"\"{kernel}\" not implemented for '{scalar_name(dtype)}'")


def _floating_fill(fill, kernel):
    def checked(self, *args, **kwargs):
        check_floating(self.dtype, kernel)
        return fill(self, *args, **kwargs)
    return checked


def _install():
    for name, fn in {"exponential_": exponential_, "cauchy_": cauchy_, "geometric_": geometric_,
                     "log_normal_": log_normal_, "multinomial": multinomial, "bernoulli": bernoulli,
                     "bernoulli_": bernoulli_, "random_": random_}.items():
        setattr(Tensor, name, fn)
    Tensor.normal_ = _floating_fill(Tensor.normal_, "normal_kernel_cpu")
    Tensor.uniform_ = _floating_fill(Tensor.uniform_, "check_uniform_bounds")


_install()
