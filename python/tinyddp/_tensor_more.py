"""More of torch's functions that training scripts call, composed of tinyddp's ops as PyTorch 1.13 defines them:
take_along_dim (a gather after broadcasting), tensor_split (narrow views), argwhere, randint_like, is_nonzero,
is_complex, typename; and the Tensor methods of memory placement a CPU-only PyTorch
answers (pin_memory, is_pinned, share_memory_, is_shared)."""
import builtins

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
    if isinstance(indices_or_sections, int):
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
    size = list(sizes[0]) if len(sizes) == 1 and not isinstance(sizes[0], int) else list(sizes)
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
    return out_t.requires_grad_() if requires_grad else out_t


def _new(self, *args, **kwargs):
    """Tensor.new, the legacy constructor of self's dtype: new(*sizes) uninitialized (zeros here), new(data)."""
    from tinyddp._legacy import legacy_new
    return legacy_new(self.dtype, args, kwargs, typed=True)


Tensor.new = _new
