"""The elementwise steps of 1.13's single-tensor optimizer loops, rounded as its CPU kernels round them, for the
optimizers written in Python here (RMSprop, Adagrad, Adamax, NAdam, RAdam, Adadelta, Rprop, ASGD).

1.13's AVX2 kernels fuse a multiply feeding an add into one FMA: `a.add_(b, alpha=s)` is fma(b, s, a) and
`a.addcmul_(b, c, value=s)` is fma(s * b, c, a); `a.addcdiv_(b, c, value=s)` is a + (s * b) / c (a quotient is
not fused). The engine's in-place add_ of a same-shaped contiguous tensor is that FMA already; addcmul's is made
here from the exact float64 product of two float32 values (rounded once more to float32: it differs from an FMA
only when the float64 sum lies exactly halfway between two floats). For float64 tensors the product is rounded
before the add, which may differ from 1.13 in the last bit.

Every function writes into its first argument and returns it, as the in-place methods they stand for.
"""
import tinyddp


def add_(self, other, alpha):
    """self.add_(other, alpha=alpha) as 1.13 rounds it: one FMA per element."""
    if other.shape != self.shape or not other.is_contiguous():
        other = other.expand_as(self).contiguous()
    return self.add_(other, alpha=alpha)


def add(input, other, alpha):
    """input.add(other, alpha=alpha): a new tensor, rounded as add_."""
    return add_(input.clone(), other, alpha)


def addcmul_(self, tensor1, tensor2, value):
    """self.addcmul_(tensor1, tensor2, value=value): self + (value * tensor1) * tensor2, the last multiply-add
    fused."""
    scaled = tensor1 * value if value != 1 else tensor1
    if self.dtype is tinyddp.float32:
        fused = (scaled.double() * tensor2.double() + self.double()).float()
    else:
        fused = self + scaled * tensor2
    return self.copy_(fused)


def addcdiv_(self, tensor1, tensor2, value):
    """self.addcdiv_(tensor1, tensor2, value=value): self + (value * tensor1) / tensor2."""
    scaled = tensor1 * value if value != 1 else tensor1
    return self.add_(scaled / tensor2)


def sqrt(input):
    """A correctly rounded square root (1.13's): the engine's CPU kernel, through Eigen's fast path, is off by
    one ulp in about a third of the elements of a large tensor, so the CPU's is taken from numpy."""
    if input.device.type != "cpu":
        return input.sqrt()
    import numpy
    return tinyddp.from_numpy(numpy.sqrt(input.contiguous().numpy()))


def rdiv(number, input):
    """number / input as 1.13's Tensor.__rtruediv__ computes it: input.reciprocal() * number, the reciprocal a
    true division (the engine's reciprocal kernel is Eigen's approximation refined, not always 1 / x)."""
    return (tinyddp.ones_like(input) / input) * number
