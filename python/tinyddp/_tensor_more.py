"""More of torch's functions that training scripts call, composed of tinyddp's ops as PyTorch 1.13 defines them:
take_along_dim (a gather after broadcasting), tensor_split (narrow views) and hsplit/vsplit/dsplit, argwhere,
randint_like, is_nonzero, is_complex, typename, frac, sgn, fmax/fmin, copysign, sinc, ldexp, fix, positive,
unique_consecutive, fill_diagonal_, set_default_tensor_type, layout; and the
Tensor methods and flags a CPU-only PyTorch answers (pin_memory, is_pinned, share_memory_, is_shared, is_sparse ...)."""
import builtins
import math
import numbers

from tinyddp import _tensor
from tinyddp._tensor import Tensor, _wrap_dim


def take_along_dim(input, indices, dim=None):
    """The values of input at indices along dim (input and indices broadcast to each other except along dim);
    with dim None, of the flattened input at the flattened indices."""
    from tinyddp._tensor_ops import gather
    if dim is None:
        return gather(input.reshape(-1), 0, indices.reshape(-1))
    dim = _wrap_dim(dim, input.dim())
    if input.dim() == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    if input.dim() != indices.dim():
        raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same number of dimensions, "
                           f"but got {input.dim()} dimensions for input, and {indices.dim()} dimensions for indices")
    shape_in, shape_ix = list(input.shape), list(indices.shape)
    shape_in[dim], shape_ix[dim] = 1, 1
    from tinyddp._tensor_shape import broadcast_shapes
    common = list(broadcast_shapes(shape_in, shape_ix))
    in_shape, ix_shape = list(common), list(common)
    in_shape[dim], ix_shape[dim] = input.shape[dim], indices.shape[dim]
    return gather(input.expand(in_shape), dim, indices.expand(ix_shape))


def tensor_split(input, indices_or_sections, dim=0):
    """Views of input along dim: `sections` pieces (the first n % sections one longer), or cut at the indices."""
    if input.dim() == 0:
        raise RuntimeError(f"tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims")
    dim = _wrap_dim(dim, input.dim())
    size = input.shape[dim]
    if isinstance(indices_or_sections, Tensor):
        if indices_or_sections.dim() == 0:
            indices_or_sections = indices_or_sections.item()
        else:
            indices_or_sections = indices_or_sections.tolist()
    if isinstance(indices_or_sections, numbers.Integral):
        sections = indices_or_sections
        if sections <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {sections}")
        small, extra = divmod(size, sections)
        bounds, start = [], 0
        for k in builtins.range(sections):
            length = small + (1 if k < extra else 0)
            bounds.append((start, length))
            start += length
    else:
        cuts = [builtins.min(builtins.max(int(i) if int(i) >= 0 else int(i) + size, 0), size)
                for i in indices_or_sections]
        bounds, start = [], 0
        for cut in cuts + [size]:   # piece k is input[cut(k-1):cut(k)], empty when the cuts decrease
            bounds.append((start, builtins.max(cut - start, 0)))
            start = cut
    return tuple(input.narrow(dim, s, n) for s, n in bounds)


def argwhere(input):
    return input.nonzero()


def randint_like(input, low=0, high=None, *, dtype=None, layout=None, device=None, requires_grad=False,
                 memory_format=None):
    """randint of input's shape and (by default) dtype: randint_like(input, high) or (input, low, high)."""
    if high is None:
        low, high = 0, low
    return _tensor.randint(low, high, tuple(input.shape), dtype=dtype or input.dtype, requires_grad=requires_grad)


def is_nonzero(input):
    if input.numel() == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if input.numel() > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return builtins.bool(input.item())


def is_complex(input):
    return False   # tinyddp has no complex tensors


def typename(o):
    """'torch.FloatTensor' for a tensor (its type()); else the object's module-qualified class or function name."""
    if isinstance(o, Tensor):
        return o.type()
    module = ""
    if getattr(o, "__module__", None) not in (None, "builtins", "__builtin__"):
        module = o.__module__ + "."
    if hasattr(o, "__qualname__"):
        class_name = o.__qualname__
    elif hasattr(o, "__name__"):
        class_name = o.__name__
    else:
        class_name = o.__class__.__name__
    return module + class_name


# ---- memory placement: a CPU-only PyTorch has no pinned memory; shared memory is a flag here (spawn's ranks are
# threads of one process, so every tensor is already shared with them) ----

def _pin_memory(self, device=None):
    raise NotImplementedError("Could not run 'aten::_pin_memory' with arguments from the 'CUDA' backend. tinyddp "
                              "has no CUDA, so no pinned memory; DataLoader(pin_memory=True) is accepted and pins "
                              "nothing, as 1.13's without CUDA.")


def _share_memory_(self):
    self._tinyddp_shared = True
    return self


def _resize_(self, *sizes, memory_format=None):
    """self takes the contiguous layout of `sizes` over its storage, grown when it is too small (the elements
    beyond the old ones are unspecified: zeros here); no version bump, as 1.13's. A tensor that requires grad is
    refused, under no_grad too, with 1.13's text."""
    if self.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    size = list(sizes[0]) if len(sizes) == 1 and not isinstance(sizes[0], numbers.Integral) else list(sizes)
    count = 1
    for s in size:
        count *= s
    stride = [1] * len(size)
    for d in builtins.range(len(size) - 2, -1, -1):
        stride[d] = stride[d + 1] * builtins.max(size[d + 1], 1)
    offset = self.storage_offset()
    if (offset + count) * self.dtype.itemsize <= self._storage_nbytes():
        self._set_data(self._storage_tensor()._as_strided(size, stride, offset))
        return self
    grown = _tensor.zeros([count], dtype=self.dtype)
    kept = builtins.min(count, self.numel())
    if kept:
        grown[:kept] = self.detach().reshape(-1)[:kept]
    self._set_data(grown.view(size))
    return self


Tensor.resize_ = _resize_
Tensor.resize_as_ = lambda self, other, memory_format=None: self.resize_(list(other._shape()))
Tensor.take_along_dim = take_along_dim
Tensor.tensor_split = tensor_split
Tensor.argwhere = argwhere
Tensor.is_nonzero = is_nonzero
Tensor.is_complex = is_complex
Tensor.pin_memory = _pin_memory
Tensor.is_pinned = lambda self, device=None: False
Tensor.share_memory_ = _share_memory_
Tensor.is_shared = lambda self: getattr(self, "_tinyddp_shared", False)


def range(start=0, end=None, step=1, *, out=None, dtype=None, layout=None, device=None,  # noqa: A001
          requires_grad=False):
    """Deprecated torch.range: start, start + step, ... up to end included, float32 by default, computed as
    1.13's kernel (start + i * step in double, rounded once into the dtype), with its warning."""
    import warnings
    warnings.warn("torch.range is deprecated and will be removed in a future release because its behavior is "
                  "inconsistent with Python's range builtin. Instead, use torch.arange, which produces values in "
                  "[start, end).", UserWarning, stacklevel=2)
    if end is None:
        start, end = 0, start
    start, end, step = (v.item() if isinstance(v, Tensor) else v for v in (start, end, step))
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (step > 0 and end < start) or (step < 0 and start < end):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    dtype = dtype or _tensor.float32
    size = int((end - start) / step + 1)   # truncated, as 1.13's
    if dtype.is_floating_point:
        values = [builtins.float(start) + i * builtins.float(step) for i in builtins.range(size)]
        out_t = _tensor.tensor(values, dtype=_tensor.float64).to(dtype) if values else _tensor.empty(0, dtype=dtype)
    else:
        out_t = _tensor.tensor([int(start) + i * int(step) for i in builtins.range(size)], dtype=dtype)
    return _tensor._finish(out_t, requires_grad)


def _new(self, *args, **kwargs):
    """Tensor.new, the legacy constructor of self's dtype: new(*sizes) uninitialized (zeros here), new(data)."""
    from tinyddp._legacy import legacy_new
    return legacy_new(self.dtype, args, kwargs, typed=True)


Tensor.new = _new


def _fill_diagonal_(self, fill_value, wrap=False):
    """The main diagonal (every index equal) filled in place through an as_strided view, as 1.13's (so the
    history is CopySlices); with wrap, a tall matrix's diagonal starts again every width + 1 rows."""
    n = self.dim()
    if n < 2:
        raise RuntimeError("dimensions must larger than 1")
    height, width = self.shape[0], self.shape[1]
    if n > 2 and builtins.any(s != height for s in self.shape[1:]):
        raise RuntimeError("all dimensions of input must be of equal length")
    stride = builtins.sum(self.stride())
    size = builtins.min(height, width)
    offset = self.storage_offset()
    self.as_strided([size], [stride], offset).fill_(fill_value)
    if wrap and n == 2 and height > width + 1:
        step = width + 1
        wrap_size = (self.numel() + step - 1) // step - size
        self.as_strided([wrap_size], [stride], offset + self.stride(0) * (width + 1)).fill_(fill_value)
    return self


def frac(input):
    """input - trunc(input), the sign kept (FracBackward0: the gradient passes through)."""
    from tinyddp._node import recorded
    return recorded("FracBackward0", [input], lambda: input - input.detach().trunc())


def sgn(input):
    """sign for tinyddp's real dtypes, recorded as 1.13's SgnBackward0 (a zero gradient)."""
    from tinyddp._node import recorded
    if input.dtype is _tensor.bool:
        return input.clone()
    return recorded("SgnBackward0", [input], lambda: input.sign())


def _picked(name, input, other, take_input):
    """where(take_input, input, other) in their result type, recorded as 1.13's node `name`: the gradient goes to
    the side taken."""
    from tinyddp import _C
    from tinyddp._node import recorded
    from tinyddp._tensor_ops import _promoted
    return recorded(name, [input, other], lambda: _C.where(take_input, *_promoted(input, other)))


def fmax(input, other):
    """The larger of the two, ignoring a NaN (NaN only where both are); on a tie the gradient goes to input, as
    1.13's FmaxBackward0."""
    if not input.is_floating_point() and not other.is_floating_point():
        return input.maximum(other)
    return _picked("FmaxBackward0", input, other, (input >= other) | other.isnan())


def fmin(input, other):
    if not input.is_floating_point() and not other.is_floating_point():
        return input.minimum(other)
    return _picked("FminBackward0", input, other, (input <= other) | other.isnan())


def copysign(input, other):
    """|input| with the sign bit of other (-0.0 and -nan count as negative); the gradient to input is
    result / input (0 at 0), none to other, as 1.13's CopysignBackward0 (CopysignBackward1 for a number)."""
    from tinyddp import _C
    from tinyddp._aliases import signbit
    from tinyddp._node import recorded
    from tinyddp._aliases import result_type
    dtype = result_type(input, other)   # an integral result is computed in the default float
    x = input.to(dtype if dtype.is_floating_point else _tensor.float32)
    if not isinstance(other, Tensor):
        negative = _tensor.tensor(math.copysign(1.0, other) < 0)
        return recorded("CopysignBackward1", [x], lambda: _C.where(negative, -x.abs(), x.abs()))

    from tinyddp._tensor_forms import _broadcast_shape
    _broadcast_shape(input._shape(), other._shape())   # 1.13's text, before where's

    def composed():
        # other's gradient is zeros (not None), as 1.13's: a term of other that is exactly +0 with a zero
        # derivative, subtracted so that a -0.0 result keeps its sign
        zero = (other.sign() * 0).nan_to_num(0.0)
        return _C.where(signbit(other), -x.abs(), x.abs()) - zero
    return recorded("CopysignBackward0", [x, other], composed)


def sinc(input):
    """sin(pi x) / (pi x), 1 at 0, in the input's dtype (1.13's kernel); SincBackward0."""
    from tinyddp import _C
    from tinyddp._node import recorded
    x = input if input.is_floating_point() else input.to(_tensor.float32)

    def composed():
        zero = x == 0
        product = _C.where(zero, _tensor.ones([], dtype=x.dtype), x) * math.pi   # no 0/0 in either branch
        return _C.where(zero, _tensor.ones([], dtype=x.dtype), product.sin() / product)
    return recorded("SincBackward0", [x], composed)


def nextafter(input, other):
    """The next representable value after input toward other, in their result type (C's nextafter, on the
    host); no gradient (1.13 has none)."""
    import numpy as np
    from tinyddp._aliases import result_type
    from tinyddp._tensor_forms import _broadcast_shape
    from tinyddp._tensor_reduce import scalar_name
    _broadcast_shape(input._shape(), other._shape())
    dtype = result_type(input, other)
    if not dtype.is_floating_point:
        raise RuntimeError(f"\"nextafter_cpu\" not implemented for '{scalar_name(dtype)}'")
    host = np.float32 if dtype is _tensor.float32 else np.float64
    a, b = (t.detach().to(dtype).numpy().astype(host) for t in (input, other))
    return _tensor.from_numpy(np.array(np.nextafter(a, b), dtype=host))


def ldexp(input, other):
    """input * 2 ** other, as 1.13 composes it (MulBackward0)."""
    return input * 2.0 ** other


def fix(input):
    return input.trunc()


def positive(input):
    if input.dtype is _tensor.bool:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


def _split_along(name, dim, least):
    """torch.hsplit/vsplit/dsplit: tensor_split along `dim` of a tensor of at least `least` dims, a number of
    sections dividing the dim exactly."""
    def split(input, indices_or_sections):
        if input.dim() < least:
            raise RuntimeError(f"torch.{name} requires a tensor with at least {least} dimension, but got a tensor "
                               f"with {input.dim()} dimensions!")
        d = dim if dim is not None else (1 if input.dim() >= 2 else 0)
        if isinstance(indices_or_sections, numbers.Integral):
            size = input.shape[d]
            if indices_or_sections == 0 or size % indices_or_sections:
                raise RuntimeError(f"torch.{name} attempted to split along dimension {d}, but the size of the "
                                   f"dimension {size} is not divisible by the split_size {indices_or_sections}!")
        return tensor_split(input, indices_or_sections, d)
    split.__name__ = name
    return split


hsplit = _split_along("hsplit", None, 1)
vsplit = _split_along("vsplit", 0, 2)
dsplit = _split_along("dsplit", 2, 3)


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """The first element of every run of equal consecutive elements (of the flattened input, or of slices along
    dim), with the run index of every element and the runs' lengths when asked, as 1.13's."""
    from tinyddp._node import recorded
    if dim is None:
        flat = input.detach().reshape([-1]).tolist()
        keys = flat
    else:
        dim = _wrap_dim(dim, input.dim())
        slices = input.detach().movedim(dim, 0)
        flat = [slices[i] for i in builtins.range(slices.shape[0])]
        keys = [tuple(s.reshape([-1]).tolist()) for s in flat]
    firsts, inverse, counts = [], [], []
    for i, key in enumerate(keys):
        if i == 0 or key != keys[i - 1]:
            firsts.append(i)
            counts.append(0)
        counts[-1] += 1
        inverse.append(len(firsts) - 1)
    if dim is None:
        values = _tensor.tensor([flat[i] for i in firsts], dtype=input.dtype).reshape([len(firsts)])
        inverse_t = _tensor.tensor(inverse, dtype=_tensor.int64).reshape(list(input.shape))
    else:
        values = input.detach().index_select(dim, _tensor.tensor(firsts, dtype=_tensor.int64))
        inverse_t = _tensor.tensor(inverse, dtype=_tensor.int64).reshape([len(inverse)])
    if input.requires_grad and _C_is_grad_enabled():
        from tinyddp._tensor_reduce import _failing_backward
        error = NotImplementedError("the derivative for 'unique_consecutive' is not implemented.")
        plain = values
        values = recorded("UniqueConsecutiveBackward0", [input],
                          lambda: _failing_backward(input, (plain,), error)[0])
    out = [values]
    if return_inverse:
        out.append(inverse_t)
    if return_counts:
        out.append(_tensor.tensor(counts, dtype=_tensor.int64).reshape([len(counts)]))
    return out[0] if len(out) == 1 else tuple(out)


def _C_is_grad_enabled():
    from tinyddp import _C
    return _C.is_grad_enabled()


class layout:
    """torch.layout: tinyddp's tensors are all torch.strided."""

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return "torch." + self._name


strided = layout("strided")

Tensor.fill_diagonal_ = _fill_diagonal_
Tensor.frac = frac
Tensor.frac_ = lambda self: self.sub_(self.detach().trunc())
Tensor.sgn = sgn
Tensor.unique_consecutive = unique_consecutive
for _name in ("fmax", "fmin", "copysign", "sinc", "ldexp", "fix", "positive", "hsplit", "vsplit", "dsplit", "nextafter"):
    setattr(Tensor, _name, globals()[_name])
for _name in ("copysign", "sinc", "ldexp", "fix"):   # their in-place forms write the result into self
    setattr(Tensor, _name + "_", lambda self, *args, _fn=globals()[_name]: self.copy_(_fn(self, *args)))
Tensor.sgn_ = lambda self: self.sign_()
Tensor.layout = property(lambda self: strided)
for _flag in ("is_sparse", "is_quantized", "is_meta", "is_mkldnn", "is_sparse_csr", "is_vulkan", "is_mps"):
    setattr(Tensor, _flag, property(lambda self: False))
del _flag


def set_default_tensor_type(t):
    """torch.set_default_tensor_type: torch.FloatTensor (or its name) is tinyddp's default already; a CUDA type
    is refused as 1.13 refuses it without CUDA; any other changes the default dtype, which tinyddp cannot."""
    from tinyddp._runtime import set_default_dtype
    name = t if isinstance(t, str) else getattr(t, "__module__", "") + "." + getattr(t, "__name__", "")
    name = name.replace("tinyddp.", "torch.")
    if name.startswith("torch.cuda."):
        raise TypeError(f"type {name} not available. Torch not compiled with CUDA enabled.")
    if name in ("torch.FloatTensor", "torch.float32"):
        return
    dtype = {"torch.DoubleTensor": _tensor.float64}.get(name)
    if dtype is None:
        raise TypeError(f"invalid type: '{name}'")
    set_default_dtype(dtype)
