"""The other spellings of ops tinyddp has: the method and function forms PyTorch gives each op (torch.add and
Tensor.add, torch.t, torch.clone, ...), the in-place unary forms (exp_, relu_, ...), the *_like and new_*
factories, view_as/reshape_as/type_as, and small compositions scripts reach for (index_select, flip, roll,
unbind, nonzero, masked_select, isnan/isinf/isfinite, amax/amin, logsumexp; sin, cos, log1p, expm1,
floor, ceil, trunc and round, which are the engine's).

Each is PyTorch 1.13's signature over an op of the engine or of _tensor_ops, so its values, gradients and errors
are that op's; a composition is recorded as 1.13's one node (tinyddp/_node.py; docs/python.md, "Composed methods'
graphs").
"""
import builtins
import math
import numbers

from tinyddp import _C, _tensor, _tensor_ops
from tinyddp._indexing import _take
from tinyddp._node import recorded
from tinyddp._tensor import Tensor, _wrap_dim
from tinyddp._tensor_ops import _dims


# ---- arithmetic as methods and functions ----

def add(input, other, *, alpha=1):
    if alpha == 1:
        return input + other
    return recorded("AddBackward0", [input, other], lambda: input + other * alpha)   # 1.13 scales inside the node


def sub(input, other, *, alpha=1):
    if alpha == 1:
        return input - other
    return recorded("SubBackward0", [input, other], lambda: input - other * alpha)


def mul(input, other):
    return input * other


def div(input, other, *, rounding_mode=None):
    """input / other; rounding_mode 'floor' is floor_divide, 'trunc' rounds toward zero (both host-computed)."""
    if rounding_mode is None:
        return input / other
    if rounding_mode == "floor":
        return _tensor_ops.floor_divide(input, other)
    if rounding_mode == "trunc":
        return _tensor_ops._host_elementwise(_tensor_ops._dividend(input, other), other, "div", _int_trunc_div,
                                             _float_trunc_div)
    raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                       f"'{rounding_mode}'")


def _int_trunc_div(x, y):
    q = builtins.abs(x) // builtins.abs(y)
    return q if (x >= 0) == (y > 0) else -q


def _float_trunc_div(x, y):
    q = x / y if y else _tensor_ops._float_floordiv(x, y)
    return builtins.float(math.trunc(q)) if math.isfinite(q) else q


_integral_round = Tensor.round   # the engine's, halves to even


def round(input, *, decimals=0):  # noqa: A001
    """To the nearest integer (halves to even), or to `decimals` places as 1.13: round(x * 10^d) / 10^d."""
    if decimals == 0:
        return _integral_round(input)
    scale = 10.0 ** decimals
    return _integral_round(input * scale) / scale


def square(input):
    return recorded("PowBackward0", [input], lambda: input * input)   # 1.13's square is pow(input, 2)


def reciprocal(input):
    return recorded("ReciprocalBackward0", [input], lambda: 1 / input, saved_outputs=(0,))   # 1.13 saves its result


def rsqrt(input):
    return recorded("RsqrtBackward0", [input], lambda: 1 / input.sqrt(), saved_outputs=(0,))


def sign(input):
    """-1, 0 or 1 in input's dtype (bool stays bool), 0 for NaN as 1.13's: where over comparisons
    (SignBackward0)."""
    if input.dtype is _tensor.bool:
        return input.clone()
    return recorded("SignBackward0", [input], lambda: _sign(input))


def _sign(input):
    positive = _C.where(input > 0, _tensor.ones([], dtype=input.dtype), _tensor.zeros([], dtype=input.dtype))
    out = _C.where(input < 0, _tensor.full([], -1, dtype=input.dtype), positive)
    # linked to input by a where that never picks it: the gradient is zeros, as 1.13's SignBackward0
    return _C.where(_tensor.zeros([], dtype=_tensor.bool), input, out) if input.requires_grad else out


def isnan(input):
    return input != input


def isinf(input):
    if not input.is_floating_point():
        return _tensor.zeros(input.shape, dtype=_tensor.bool)
    return input.abs() == math.inf


def isfinite(input):
    if not input.is_floating_point():
        return _tensor.ones(input.shape, dtype=_tensor.bool)
    return (input == input) & (input.abs() != math.inf)


# ---- reductions ----

def _reduce_dims(input, dim):
    """The dims a reduction over `dim` (an int, a sequence, or None/() for all) covers, wrapped and sorted, with
    1.13's errors for a dim out of range or named twice."""
    if dim is None or dim == ():
        return list(range(input.dim()))
    wrapped = [_wrap_dim(d, input.dim()) for d in ([dim] if isinstance(dim, numbers.Integral) else dim)]
    for k, d in enumerate(wrapped):
        if d in wrapped[:k]:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    return sorted(wrapped)


def amax(input, dim=(), keepdim=False):
    """The largest elements over dims (all by default): the engine's amax (AmaxBackward0; ties share the
    gradient evenly, as 1.13's)."""
    return _C._amax(input, [] if dim is None else [dim] if isinstance(dim, numbers.Integral) else list(dim), keepdim)


def amin(input, dim=(), keepdim=False):
    return _C._amin(input, [] if dim is None else [dim] if isinstance(dim, numbers.Integral) else list(dim), keepdim)


def logsumexp(input, dim, keepdim=False):
    """log(sum(exp(x))) over dim, shifted by the (detached) maximum as 1.13 shifts it; an infinite maximum
    shifts by 0; over no elements log(0) = -inf; integers and bools in float32 (LogsumexpBackward0)."""
    if dim is None:   # 1.13 reads None as a dim name
        raise RuntimeError("Please look up dimensions by name, got: name = None.")
    if not input.is_floating_point():   # 1.13 computes integral inputs in the default dtype
        input = input.to(_tensor.float32)
    return recorded("LogsumexpBackward0", [input], lambda: _logsumexp(input, dim, keepdim), saved_outputs=(0,),
                    saved_inputs=(0,))


def _logsumexp(input, dim, keepdim):
    dims = _reduce_dims(input, dim)
    if input.numel() == 0:   # no maximum to shift by
        return input.exp().sum(dims, keepdim).log()
    shift = amax(input.detach(), dims, True)
    shift = _C.where(shift.abs() == math.inf, _tensor.zeros([], dtype=shift.dtype), shift)
    out = (input - shift).exp().sum(dims, True).log() + shift
    return out if keepdim else out.reshape([s for k, s in enumerate(out._shape()) if k not in dims])


# ---- selection ----

def index_select(input, dim, index):
    """The slices of input at index (a vector of int64, none negative) along dim (IndexSelectBackward0), with
    1.13's checks; of a 0-dim tensor its one element (every index must be 0)."""
    if index.dim() > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if index.dtype is not _tensor.int64:
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    d = _wrap_dim(dim, input.dim())
    picks = index.reshape([-1]).tolist()
    size = input._shape()[d] if input.dim() else 1
    if picks and size == 0 and input.dim() > 1:
        raise RuntimeError("index_select(): self indexing axis dim should be positive")
    bad = next((i for i in picks if not 0 <= i < size), None)
    if bad is not None:   # 1.13's two kernels: along dim 0 (or of a vector), and along the others
        if d == 0:
            raise IndexError("index out of range in self")
        raise RuntimeError(f"INDICES element is out of DATA bounds, id={bad} axis_dim={size}")
    if input.dim() == 0:   # 1.13 gives the element; its backward then fails reading dim 0
        from tinyddp._tensor_reduce import _failing_backward
        error = IndexError("Dimension specified as 0 but tensor has no dimensions")
        return recorded("IndexSelectBackward0", [input],
                        lambda: _failing_backward(input, (input.detach(),), error)[0])
    return recorded("IndexSelectBackward0", [input], lambda: _take(input, d, index.reshape([-1])))


def _broadcast_shape(a, b):
    """The broadcast of shapes a and b, with 1.13's infer_size text for the first mismatch from the right (the
    dim numbered in the result)."""
    a, b = list(a), list(b)
    n = builtins.max(len(a), len(b))
    a, b = [1] * (n - len(a)) + a, [1] * (n - len(b)) + b
    for i in range(n - 1, -1, -1):
        x, y = a[i], b[i]
        if x != y and 1 not in (x, y):
            raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b ({y}) at non-singleton "
                               f"dimension {i}")
    return [builtins.max(x, y) if 0 not in (x, y) else 0 for x, y in zip(a, b)]


def masked_select(input, mask):
    """The elements of input (broadcast with mask) where mask is true, as a vector."""
    shape = _broadcast_shape(mask._shape(), input._shape())   # 1.13 names the mask tensor a, input b
    return recorded("MaskedSelectBackward0", [input], lambda: _C.expand(input, shape)[_C.expand(mask, shape)])


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):  # noqa: A002
    """The distinct elements, ascending (1.13's CPU unique sorts either way), with the inverse indices (input's
    shape) and the counts when asked. Computed on the host; no gradient, as 1.13's: a floating input that requires
    grad gives values recorded as Unique2Backward0, whose backward raises 1.13's NotImplementedError."""
    if dim is not None:
        return _unique_dim(input, dim, return_inverse, return_counts)
    flat = input.detach().reshape([-1]).tolist()
    values = builtins.sorted(set(flat))
    out = [_tensor.tensor(values, dtype=input.dtype).reshape([len(values)])]
    if input.requires_grad and _C.is_grad_enabled():
        from tinyddp._tensor_reduce import _failing_backward
        error = NotImplementedError("the derivative for '_unique2' is not implemented.")
        out[0] = recorded("Unique2Backward0", [input], lambda: _failing_backward(input, (out[0],), error)[0])
    if return_inverse:
        where_is = {v: i for i, v in enumerate(values)}
        out.append(_tensor.tensor([where_is[v] for v in flat], dtype=_tensor.int64).reshape(list(input._shape())))
    if return_counts:
        counts = {v: 0 for v in values}
        for v in flat:
            counts[v] += 1
        out.append(_tensor.tensor([counts[v] for v in values], dtype=_tensor.int64).reshape([len(values)]))
    return out[0] if len(out) == 1 else tuple(out)


def _unique_dim(input, dim, return_inverse, return_counts):
    """The distinct slices along dim, in lexicographic order (1.13's unique_dim always sorts), with each slice's
    index among them and their counts; UniqueDimBackward0 under autograd, whose backward raises as 1.13's."""
    dim = _wrap_dim(dim, input.dim())
    n = input._shape()[dim] if input.dim() else 1
    rows = input.detach().movedim(dim, 0).reshape([n, -1]).tolist() if n else []
    keys = sorted(set(tuple(r) for r in rows))
    position = {k: i for i, k in enumerate(keys)}
    first = {}
    for i, r in enumerate(rows):
        first.setdefault(tuple(r), i)
    index = _tensor.tensor([first[k] for k in keys], dtype=_tensor.int64).reshape([len(keys)])
    values = input.detach().index_select(dim, index)
    if input.requires_grad and _C.is_grad_enabled():
        from tinyddp._tensor_reduce import _failing_backward
        error = NotImplementedError("the derivative for 'unique_dim' is not implemented.")
        plain = values
        values = recorded("UniqueDimBackward0", [input], lambda: _failing_backward(input, (plain,), error)[0])
    out = [values]
    if return_inverse:
        out.append(_tensor.tensor([position[tuple(r)] for r in rows], dtype=_tensor.int64).reshape([n]))
    if return_counts:
        counts = [0] * len(keys)
        for r in rows:
            counts[position[tuple(r)]] += 1
        out.append(_tensor.tensor(counts, dtype=_tensor.int64).reshape([len(keys)]))
    return out[0] if len(out) == 1 else tuple(out)


def nonzero(input, *, as_tuple=False):
    """The indices of the nonzero elements, (n, dim) int64 in row-major order (as_tuple: one vector per dim)."""
    shape = list(input._shape())
    flags = (input != 0).reshape([-1]).tolist()
    rows = []
    for flat, f in enumerate(flags):
        if f:
            index, rest = [], flat
            for size in reversed(shape):
                index.append(rest % size)
                rest //= size
            rows.append(index[::-1])
    out = _tensor.tensor(rows, dtype=_tensor.int64).reshape([len(rows), len(shape)])
    if as_tuple:
        if not shape:   # 1.13: one index vector, [0] for a nonzero element
            return (_tensor.zeros([len(rows)], dtype=_tensor.int64),)
        return tuple(out[:, d] for d in range(len(shape)))
    return out


def flip(input, dims):
    """The elements in reverse order along each of dims (a copy, as 1.13's; FlipBackward0). torch.flip takes a
    sequence of dims; Tensor.flip also an int or the dims as arguments (_flip_method)."""
    if isinstance(dims, numbers.Integral):
        raise TypeError(f"flip(): argument 'dims' (position 2) must be tuple of ints, not {type(dims).__name__}")
    return recorded("FlipBackward0", [input], lambda: _flip(input, dims))


def _flip_method(self, *dims, **kwargs):
    if "dims" in kwargs:
        return flip(self, _dims((kwargs.pop("dims"),)))
    return flip(self, _dims(dims))


def _flip(input, dims):
    out = input
    seen = []
    for d in _dims((dims,) if isinstance(dims, numbers.Integral) else (dims,)):
        d = _wrap_dim(d, input.dim())
        if d in seen:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        seen.append(d)
        if input.dim() == 0:   # one element: nothing to reverse
            continue
        size = input._shape()[d]
        out = _take(out, d, _tensor.tensor(list(range(size - 1, -1, -1)), dtype=_tensor.int64))
    return out if out is not input else input.clone()


def roll(input, shifts, dims=None):
    """Elements shifted along dims (wrapping around): cat of two narrows per dim; flattened when dims is None
    (RollBackward0)."""
    return recorded("RollBackward0", [input], lambda: _roll(input, shifts, dims))


def _roll(input, shifts, dims):
    if input.numel() == 0:   # 1.13 returns a copy before looking at shifts or dims
        return input.clone()
    if input.dim() == 0 and dims is not None:
        first = dims if isinstance(dims, numbers.Integral) else list(dims)[0]
        raise IndexError(f"Dimension specified as {first} but tensor has no dimensions")
    if dims is None:
        return _roll(input.reshape([-1]), shifts, 0).reshape(list(input._shape()))
    shifts = [shifts] if isinstance(shifts, numbers.Integral) else list(shifts)
    dims = [dims] if isinstance(dims, numbers.Integral) else list(dims)
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
    out = input
    for shift, d in zip(shifts, dims):
        d = _wrap_dim(d, input.dim())
        size = input._shape()[d]
        k = shift % size if size else 0
        if k:
            out = _C.cat([out.narrow(d, size - k, k), out.narrow(d, 0, size - k)], d)
    return out if out is not input else input.clone()


def unbind(input, dim=0):
    return tuple(_C.unbind(input, _wrap_dim(dim, input.dim())))


def select(input, dim, index):
    if input.dim() == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    dim = _wrap_dim(dim, input.dim())
    size = input._shape()[dim]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(input._shape())} at "
                         f"dimension {dim}")
    return _C.select(input, dim, index % size)


def movedim(input, source, destination):
    n = input.dim()
    source = [source] if isinstance(source, numbers.Integral) else list(source)
    destination = [destination] if isinstance(destination, numbers.Integral) else list(destination)
    for name, given in (("source", source), ("destination", destination)):
        dims = [_wrap_dim(d, n) for d in given]
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({given})")
    source = [_wrap_dim(d, n) for d in source]
    destination = [_wrap_dim(d, n) for d in destination]
    if n == 0:   # 1.13's alias of the one element
        return _C.alias(input)
    order = [None] * n
    for s, d in zip(source, destination):
        order[d] = s
    rest = iter(d for d in range(n) if d not in source)
    return _tensor_ops.permute(input, [o if o is not None else next(rest) for o in order])


# ---- factories from a tensor ----

def _like(factory):
    def like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None, **kwargs):
        return factory(input.shape, dtype=dtype or input.dtype, requires_grad=requires_grad, **kwargs)
    return like


randn_like = _like(_tensor.randn)
rand_like = _like(_tensor.rand)
empty_like = _like(_tensor.empty)


def full_like(input, fill_value, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    return _tensor.full(input.shape, fill_value, dtype=dtype or input.dtype, requires_grad=requires_grad)


def _new(factory):
    def new(self, *size, dtype=None, device=None, requires_grad=False):
        return factory(*size, dtype=dtype or self.dtype, requires_grad=requires_grad)
    return new


def _new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
    return _tensor.full(size, fill_value, dtype=dtype or self.dtype, requires_grad=requires_grad)


def _new_tensor(self, data, dtype=None, device=None, requires_grad=False):
    return _tensor.tensor(data, dtype=dtype or self.dtype, requires_grad=requires_grad)


_LEGACY_NAMES = {"torch.FloatTensor": _tensor.float32, "torch.DoubleTensor": _tensor.float64,
                 "torch.LongTensor": _tensor.int64, "torch.BoolTensor": _tensor.bool}


def _type(self, dtype=None, non_blocking=False):
    """t.type() is the legacy name ('torch.FloatTensor'); t.type(dtype or name) converts."""
    if dtype is None:
        return {v: k for k, v in _LEGACY_NAMES.items()}[self.dtype]
    if isinstance(dtype, str):
        dtype = _LEGACY_NAMES[dtype]
    return self.to(getattr(dtype, "dtype", dtype))   # a legacy class (torch.LongTensor) by its dtype


def _inplace(fn):
    """The in-place form of an out-of-place op: its result written into self (one version bump); under autograd
    self's history becomes the op's node, as 1.13 records exp_, clamp_ ... (the engine's apply_inplace)."""
    def inplace(self, *args, **kwargs):
        others = [a for a in (*args, *kwargs.values()) if isinstance(a, Tensor)]
        return self._apply_inplace(lambda current: fn(current, *args, **kwargs), others)
    return inplace


def _install():
    for name, fn in {"add": add, "sub": sub, "subtract": sub, "mul": mul, "multiply": mul, "div": div,
                     "divide": div, "true_divide": true_divide, "square": square,
                     "reciprocal": reciprocal, "rsqrt": rsqrt, "sign": sign, "isnan": isnan, "isinf": isinf,
                     "isfinite": isfinite, "amax": amax, "amin": amin, "logsumexp": logsumexp,
                     "index_select": index_select,
                     "masked_select": masked_select, "nonzero": nonzero, "unique": unique, "flip": _flip_method, "roll": roll,
                     "unbind": unbind, "select": select, "movedim": movedim, "moveaxis": movedim,
                     "swapaxes": transpose, "swapdims": transpose,
                     "absolute": lambda self: self.abs(), "negative": lambda self: -self,
                     "positive": lambda self: self, "clamp_min": clamp_min,
                     "clamp_max": clamp_max,
                     "view_as": lambda self, other: self.view(other._shape()),
                     "reshape_as": lambda self, other: self.reshape(other._shape()),
                     "type_as": lambda self, other: self.to(other.dtype),
                     "mm": mm, "bmm": bmm, "dot": dot, "outer": outer, "matmul": matmul,
                     "__matmul__": _matmul_operator,
                     "new_zeros": _new(_tensor.zeros), "new_ones": _new(_tensor.ones),
                     "new_empty": _new(_tensor.empty), "new_full": _new_full, "new_tensor": _new_tensor,
                     "type": _type, "nelement": lambda self: self.numel(),
                     "ndimension": lambda self: self.dim(),
                     "element_size": lambda self: self.dtype.itemsize,
                     "round": round}.items():
        setattr(Tensor, name, fn)
    for name, fn in {"add_": add, "sub_": sub, "mul_": mul, "div_": div}.items():
        if not hasattr(Tensor, name):
            setattr(Tensor, name, _inplace(fn))
    for name in ("exp", "log", "sqrt", "abs", "neg", "relu", "sigmoid", "tanh", "pow", "square", "reciprocal",
                 "rsqrt", "sign", "clamp_min", "clamp_max", "tril", "triu", "remainder", "sin", "cos", "erf",
                 "log1p", "expm1", "floor", "ceil", "trunc", "round"):
        setattr(Tensor, name + "_", _inplace(getattr(Tensor, name)))
    pow_ = Tensor.pow_

    def pow_of_integers(self, exponent):
        """1.13's pow_(Scalar) checks an integral self against a floating exponent first, in its words."""
        if isinstance(exponent, float) and not self.is_floating_point():
            from tinyddp._tensor_reduce import scalar_name
            raise RuntimeError(f"Found dtype {scalar_name(self.dtype)} but expected Float")
        return pow_(self, exponent)
    Tensor.pow_ = pow_of_integers


# ---- the function forms of methods (torch.t, torch.clone, ...) ----

def t(input):
    return input.t()


def transpose(input, dim0, dim1):
    return input.transpose(dim0, dim1)


swapaxes = swapdims = transpose


def clone(input, *, memory_format=None):
    return input.clone()


def narrow(input, dim, start, length):
    return input.narrow(dim, start, length)


def numel(input):
    return input.numel()


def neg(input):
    return -input


negative = neg


def pow(input, exponent):  # noqa: A001
    """input ** exponent; a number base gives base ** exponent over the exponent tensor, as torch.pow(2, t)."""
    return input ** exponent


# ---- products, with 1.13's checks and texts ----
# The engine checks shapes and dtypes in its own words; a script sees the words of the 1.13 kernel that its call
# reaches (matmul reaches dot, mv, mm or bmm as 1.13's at::matmul dispatches). Shapes are checked before dtypes
# where 1.13's kernels do so (mm, mv, bmm: a dtype mismatch surfaces in the kernel's data_ptr<T>()).
def _scalar_name(t):
    from tinyddp._tensor_reduce import scalar_name   # 1.13's ScalarType names ("Float"), on error paths only
    return scalar_name(t.dtype)


def _check_same_scalar_type(a, b):
    if a.dtype is not b.dtype:
        raise RuntimeError(f"expected scalar type {_scalar_name(a)} but found {_scalar_name(b)}")


def _check_mm_shapes(sa, sb, a, b):
    """mat1 (sa) @ mat2 (sb), 2-D shapes, as 1.13's addmm_impl_cpu_; a and b give the dtypes."""
    if sa[1] != sb[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({sa[0]}x{sa[1]} and {sb[0]}x{sb[1]})")
    _check_same_scalar_type(a, b)


def _check_mv_shapes(sm, sv, mat, vec):
    if sm[1] != sv[0]:
        raise RuntimeError(f"size mismatch, got {sm[0]}, {sm[0]}x{sm[1]},{sv[0]}")
    _check_same_scalar_type(mat, vec)


def _check_mm(input, other):
    if input.dim() != 2:
        raise RuntimeError("self must be a matrix")
    if other.dim() != 2:
        raise RuntimeError("mat2 must be a matrix")
    _check_mm_shapes(input._shape(), other._shape(), input, other)


def _check_mv(mat, vec):
    if mat.dim() != 2 or vec.dim() != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {mat.dim()}, {vec.dim()}")
    _check_mv_shapes(mat._shape(), vec._shape(), mat, vec)


def _check_dot(input, other):
    if input.dim() != 1 or other.dim() != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.dim()}D and {other.dim()}D tensors")
    if input.dtype is not other.dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found {_scalar_name(input)} and "
                           f"{_scalar_name(other)}")
    n, m = input.numel(), other.numel()
    if n != m:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{n}] and src [{m}] to have the same number "
                           f"of elements, but got {n} and {m} elements respectively")


def _check_bmm_shapes(s1, s2, batch1, batch2):
    if s2[0] != s1[0] or s2[1] != s1[2]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{s1[0]}, {s1[2]}] but "
                           f"got: [{s2[0]}, {s2[1]}].")
    _check_same_scalar_type(batch1, batch2)


def _check_bmm(batch1, batch2):
    if batch1.dim() != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if batch2.dim() != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    _check_bmm_shapes(batch1._shape(), batch2._shape(), batch1, batch2)


def _folds(t, other_dim):
    """1.13's should_fold: a batch of matrices times a matrix or vector multiplies as one matrix, unless it is a
    3-D tensor whose last two dims are transposed (it then goes to bmm)."""
    if t.dim() < 3 or other_dim not in (1, 2):
        return False
    sizes, strides = t._shape(), t.stride()
    return not (t.dim() == 3 and other_dim == 2 and strides[-1] != 1 and strides[0] == sizes[1] * sizes[2])


def _check_matmul(a, b):
    """The checks of the kernel 1.13's at::matmul reaches for a @ b."""
    da, db = a.dim(), b.dim()
    if da == 0 or db == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {da}D and {db}D")
    sa, sb = list(a._shape()), list(b._shape())
    if da == 1 and db == 1:
        _check_dot(a, b)
    elif da == 2 and db == 1:
        _check_mv(a, b)
    elif da == 1 and db == 2:
        _check_mm_shapes([1, sa[0]], sb, a, b)   # a.unsqueeze(0).mm(b)
    elif da == 2 and db == 2:
        _check_mm_shapes(sa, sb, a, b)
    elif _folds(a, db) or _folds(b, da):
        transpose = db > da   # the batch is b's: (b^T a^T)^T
        t1 = sb[:-2] + [sb[-1], sb[-2]] if transpose else sa
        t2 = (sa[::-1] if da == 2 else sa) if transpose else sb
        first, second = (b, a) if transpose else (a, b)
        folded = [math.prod(t1[:-1]), t1[-1]]
        if len(t2) == 2:
            _check_mm_shapes(folded, t2, first, second)
        else:
            _check_mv_shapes(folded, t2, first, second)
    else:   # bmm over the broadcast batch dims
        n = sa[-2] if da > 1 else 1
        m1, m2 = sa[-1], (sb[-2] if db > 1 else sb[0])
        p = sb[-1] if db > 1 else 1
        batch = _broadcast_shape(sa[:builtins.max(da - 2, 0)], sb[:builtins.max(db - 2, 0)])
        count = math.prod(batch)
        _check_bmm_shapes([count, n, m1], [count, m2, p], a, b)


_engine_matmul = Tensor.matmul   # the engine's at::matmul (engine/ops/matmul_forms.cpp), 1.13's nodes


def matmul(input, other):
    _check_matmul(input, other)
    if input.dtype is _tensor.int64 and other.dtype is _tensor.int64:
        return _integer_product(input, other)
    if input.dtype is _tensor.bool and other.dtype is _tensor.bool and input.dim() == other.dim() == 2:
        raise RuntimeError("\"addmm_impl_cpu_\" not implemented for 'Bool'")
    return _engine_matmul(input, other)


def _integer_product(a, b):
    """An int64 product (1.13 has integer kernels, the engine has none): NumPy's matmul on the host, which
    broadcasts as 1.13's and wraps on overflow as its int64 arithmetic does. Integers have no gradient."""
    import numpy as np
    with np.errstate(over="ignore"):
        product = np.matmul(a.detach().numpy(), b.detach().numpy())
    return _tensor.from_numpy(np.array(product, dtype=np.int64))   # a copy, C-ordered, 0-d kept


def _matmul_operator(self, other):
    return matmul(self, other) if isinstance(other, Tensor) else NotImplemented


def mm(input, mat2):
    _check_mm(input, mat2)
    if input.dtype is _tensor.int64 and mat2.dtype is _tensor.int64:
        return _integer_product(input, mat2)
    return _engine_matmul(input, mat2)


def bmm(input, mat2):
    _check_bmm(input, mat2)
    return _C.bmm(input, mat2)   # the engine's batched product itself (BmmBackward0), as 1.13's bmm


def dot(input, other):
    _check_dot(input, other)
    if input.dtype is _tensor.bool:
        raise RuntimeError("\"dot\" not implemented for 'Bool'")
    if input.dtype is _tensor.int64:
        return _integer_product(input, other)
    return recorded("DotBackward0", [input, other], lambda: _engine_matmul(input, other))


def outer(input, vec2):
    for name, t in (("self", input), ("vec2", vec2)):
        if t.dim() != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {t.dim()}-D")
    return input.reshape([-1, 1]) * vec2   # 1.13's: a column times the row


def clamp_min(input, min):  # noqa: A002
    return recorded("ClampMinBackward0", [input], lambda: input.clamp(min=min))


def clamp_max(input, max):  # noqa: A002
    return recorded("ClampMaxBackward0", [input], lambda: input.clamp(max=max))


def _function_form(name):
    """torch.NAME(input), the function form of the unary method input.NAME()."""
    def function(input):
        return getattr(input, name)()
    function.__name__ = function.__qualname__ = name
    return function


sin, cos, erf, log1p, expm1, floor, ceil, trunc = (
    _function_form(name) for name in ("sin", "cos", "erf", "log1p", "expm1", "floor", "ceil", "trunc"))


def true_divide(input, other):
    return input / other


moveaxis = movedim

_install()
