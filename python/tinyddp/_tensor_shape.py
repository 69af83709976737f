"""torch functions and Tensor methods of shapes and linear algebra forms composed of the engine's ops: tile,
repeat_interleave, the stacks, meshgrid, broadcast_tensors, diag/diagonal/diag_embed/trace, unfold, rot90, einsum,
tensordot, addmm/addmv/baddbmm/addbmm, kron, cross, diff, cdist and small index factories (tril_indices,
combinations). The scatters are in _tensor_scatter.py.

Gathers are the engine's advanced index (_indexing._take, IndexBackward0), so values and gradients are 1.13's; each
op is recorded as 1.13's node (tinyddp/_node.py), so grad_fn names are 1.13's too.
"""
import builtins
import itertools
import math
import numbers

from tinyddp import _C, _tensor, _tensor_ops
from tinyddp._indexing import _take
from tinyddp._node import recorded
from tinyddp._tensor import Tensor, _wrap_dim
from tinyddp._tensor_forms import _broadcast_shape, _check_mv, flip


def _sizes(sizes):
    return _tensor_ops._dims(sizes)


def reshape(input, shape):
    return input.reshape(list(shape))


def unflatten(input, dim, sizes):
    """dim split into sizes (a view, as 1.13's); a -1 in sizes is inferred from dim's size, even when another dim
    is empty."""
    dim = _wrap_dim(dim, input.dim())
    if input.dim() == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    shape = list(input._shape())
    sizes_given = sizes = [int(s) for s in sizes]
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    if sizes.count(-1) > 1:   # infer_size's other errors reach the script wrapped, as 1.13's
        raise RuntimeError("unflatten got an unexpected error:\nonly one dimension can be inferred")
    for s in sizes:
        if s < -1:
            raise RuntimeError(f"unflatten got an unexpected error:\ninvalid shape dimension {s}")
    known = math.prod(s for s in sizes if s != -1)
    if sizes.count(-1) == 1 and known == 0 and shape[dim] == 0:
        raise RuntimeError(f"cannot reshape tensor of 0 elements into shape {sizes} because the unspecified "
                           "dimension size -1 can be any value and is ambiguous")
    if sizes.count(-1) == 1:
        if known and shape[dim] % known == 0:
            sizes[sizes.index(-1)] = shape[dim] // known
        elif known == 0 or shape[dim] % known != 0:
            sizes = None
    elif known != shape[dim]:
        sizes = None
    if sizes is None:   # 1.13 rewrites infer_size's "shape '[...]' is invalid" into its own words
        raise RuntimeError(f"unflatten: Provided sizes {[int(s) for s in sizes_given]} don't multiply up to the "
                           f"size of dim {dim} ({shape[dim]}) in the input tensor")
    return input.view(shape[:dim] + sizes + shape[dim + 1:])


def sum_to_size(self, *size):
    """self summed over the dims broadcasting would have expanded to reach self's shape from size."""
    size = _sizes(size)
    shape = list(self._shape())
    lead = len(shape) - len(size)
    dims = list(range(lead)) + [lead + d for d, s in enumerate(size) if s == 1 and shape[lead + d] != 1]
    out = self.sum(dims, True) if dims else self
    return out.view(size) if lead > 0 else out   # leading dims summed with keepdim, then dropped (ViewBackward0)


def tile(input, *dims):
    dims = _sizes(dims)
    if len(dims) < input.dim():
        dims = [1] * (input.dim() - len(dims)) + dims
    return _tensor_ops.repeat(input, dims)


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Each element (or slice along dim) repeated repeats times (a number, or one count per element); with a
    single tensor argument, the indices 0..n-1 repeated by its counts."""
    if repeats is None:
        counts = input.reshape([-1]).tolist()
        return _tensor.tensor([i for i, c in enumerate(counts) for _ in range(c)], dtype=_tensor.int64)
    if dim is None:
        input, dim = input.reshape([-1]), 0
    if input.dim() == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    dim = _wrap_dim(dim, input.dim())
    size = input._shape()[dim]
    counts = repeats.reshape([-1]).tolist() if isinstance(repeats, Tensor) else [int(repeats)]
    if len(counts) == 1:
        counts = counts * size
    if len(counts) != size:
        raise RuntimeError("repeats must have the same size as input along dim")
    if builtins.any(c < 0 for c in counts):
        raise RuntimeError("repeats can not be negative")
    picks = [i for i, c in enumerate(counts) for _ in range(c)]
    return recorded("IndexSelectBackward0", [input],   # 1.13's: an index_select of the repeated indices
                    lambda: _take(input, dim, _tensor.tensor(picks, dtype=_tensor.int64).reshape([len(picks)])))


def atleast_1d(*tensors):
    out = [t.reshape([1]) if t.dim() == 0 else t for t in _flat_args(tensors)]
    return out[0] if len(out) == 1 else tuple(out)


def atleast_2d(*tensors):
    out = [t.reshape([1, 1]) if t.dim() == 0 else t.unsqueeze(0) if t.dim() == 1 else t for t in _flat_args(tensors)]
    return out[0] if len(out) == 1 else tuple(out)


def atleast_3d(*tensors):
    out = []
    for t in _flat_args(tensors):
        if t.dim() == 0:
            t = t.reshape([1, 1, 1])
        elif t.dim() == 1:
            t = t.unsqueeze(0).unsqueeze(-1)
        elif t.dim() == 2:
            t = t.unsqueeze(-1)
        out.append(t)
    return out[0] if len(out) == 1 else tuple(out)


def _flat_args(tensors):
    return list(tensors[0]) if len(tensors) == 1 and not isinstance(tensors[0], Tensor) else list(tensors)


def _check_list(tensors, name):
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError(f"{name} expects a non-empty TensorList")
    return tensors


def hstack(tensors):
    tensors = [atleast_1d(t) for t in _check_list(tensors, "hstack")]
    return _C.cat(tensors, 0 if tensors[0].dim() == 1 else 1)


def vstack(tensors):
    return _C.cat([atleast_2d(t) for t in _check_list(tensors, "vstack")], 0)


row_stack = vstack


def dstack(tensors):
    return _C.cat([atleast_3d(t) for t in _check_list(tensors, "dstack")], 2)


def column_stack(tensors):
    tensors = _check_list(tensors, "column_stack")
    return _C.cat([t.reshape([t.numel(), 1]) if t.dim() <= 1 else t for t in tensors], 1)


def broadcast_shapes(*shapes):
    out = []
    for s in shapes:
        out = _broadcast_shape(out, [s] if isinstance(s, numbers.Integral) else list(s))
    return _tensor.Size(out)


def broadcast_tensors(*tensors):
    tensors = _flat_args(tensors)
    shape = list(broadcast_shapes(*[t._shape() for t in tensors]))
    return tuple(_C.expand(t, shape) for t in tensors)


def broadcast_to(input, *size):
    return _C.expand(input, _sizes(size))


_MESHGRID_WARNING = ("torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument. "
                     "(Triggered internally at  ./aten/src/ATen/native/TensorShape.cpp:3190.)")


def meshgrid(*tensors, indexing=None):
    """Grids of the 1-D tensors: out[k] has tensors[k]'s values along dim k ('ij', the default, warned about as
    1.13 does) or with the first two dims swapped ('xy')."""
    tensors = _flat_args(tensors)
    if indexing is None:   # once per process, as 1.13's TORCH_WARN_ONCE
        from tinyddp._tensor import _warn_once
        _warn_once(_MESHGRID_WARNING, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: {indexing}")
    for t in tensors:
        if t.dim() > 1:
            raise RuntimeError("torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: " + repr(t))
    swap = indexing == "xy" and len(tensors) >= 2
    order = list(tensors)
    if swap:
        order[0], order[1] = order[1], order[0]
    shape = [t.numel() for t in order]
    grids = []
    for k, t in enumerate(order):
        view = [1] * len(order)
        view[k] = shape[k]
        grids.append(_C.expand(t.view(view), shape))
    if swap:   # 'xy' is 'ij' of the first two swapped, the grids given back in the callers' order
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


def cartesian_prod(*tensors):
    tensors = _flat_args(tensors)
    if len(tensors) == 1:
        return tensors[0].clone()
    grids = meshgrid(*tensors, indexing="ij")
    return _tensor.stack([g.reshape([-1]) for g in grids], 1)


def combinations(input, r=2, with_replacement=False):
    if input.dim() != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input._shape())}")
    n = input._shape()[0]
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    rows = list(pick(range(n), r)) if r > 0 else []
    if not rows:
        return _tensor.empty([0] if r == 0 else [0, r], dtype=input.dtype)
    index = _tensor.tensor(rows, dtype=_tensor.int64).reshape([len(rows), r])
    return _take(input, 0, index)


def _index_factory(row, col, offset, lower):
    pairs = [(i, j) for i in range(row) for j in range(col) if (j - i <= offset if lower else j - i >= offset)]
    return _tensor.tensor([[p[0] for p in pairs], [p[1] for p in pairs]], dtype=_tensor.int64).reshape([2, len(pairs)])


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    return _index_factory(row, col, offset, True)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    return _index_factory(row, col, offset, False)


# ---- diagonals ----

def diagonal(input, offset=0, dim1=0, dim2=1):
    """The elements (i, i + offset) of dims dim1 and dim2, as a last dim: a view, as PyTorch's (the engine's;
    DiagonalBackward0), so writing into it writes input."""
    return _C.diagonal(input, offset, dim1, dim2)


def _diagonal(input, offset=0, dim1=0, dim2=1):
    n = input.dim()
    d1, d2 = _wrap_dim(dim1, n), _wrap_dim(dim2, n)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    rest = [d for d in range(n) if d not in (d1, d2)]
    x = _tensor_ops.permute(input, rest + [d1, d2])
    rows, cols = x._shape()[-2:]
    count = builtins.max(0, builtins.min(rows, cols - offset) if offset >= 0 else builtins.min(rows + offset, cols))
    start_r, start_c = (0, offset) if offset >= 0 else (-offset, 0)
    flat = x.reshape(list(x._shape()[:-2]) + [rows * cols])
    positions = [(start_r + i) * cols + start_c + i for i in range(count)]
    return _take(flat, flat.dim() - 1, _tensor.tensor(positions, dtype=_tensor.int64).reshape([count]))


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """The last dim of input placed on the offset-th diagonal of two new dims (zeros elsewhere;
    DiagEmbedBackward0)."""
    return recorded("DiagEmbedBackward0", [input], lambda: _diag_embed(input, offset, dim1, dim2))


def _diag_embed(input, offset, dim1, dim2):
    k = input._shape()[-1] if input.dim() else 1
    size = k + builtins.abs(offset)
    if k == 0:   # nothing to place: zeros, linked to input (whose gradient is empty)
        out = _tensor.zeros(list(input._shape()[:-1]) + [size, size], dtype=input.dtype)
        if input.requires_grad:
            out = out + input.sum() * 0
    else:
        rows = _tensor.arange(size).reshape([size, 1])
        cols = _tensor.arange(size).reshape([1, size])
        on = (cols - rows) == offset
        picks = [[builtins.min(i if offset >= 0 else j, k - 1) for j in range(size)] for i in range(size)]
        index = _tensor.tensor(picks, dtype=_tensor.int64).reshape([size, size])
        spread = _take(input, input.dim() - 1, index) if input.dim() else _take(input.reshape([1]), 0, index)
        out = _C.where(on, spread, _tensor.zeros([], dtype=input.dtype))
    n = out.dim()
    d1, d2 = _wrap_dim(dim1, n), _wrap_dim(dim2, n)
    if (d1, d2) != (n - 2, n - 1):
        out = out.movedim([n - 2, n - 1], [d1, d2])
    return out


def diag(input, diagonal=0):
    """A vector on the diagonal-th diagonal of a square matrix, or the diagonal-th diagonal of a matrix
    (DiagBackward0)."""
    if input.dim() == 1:
        return recorded("DiagBackward0", [input], lambda: _diag_embed(input, diagonal, -2, -1))
    if input.dim() == 2:
        rows, cols = input._shape()   # 1.13's diag sizes the diagonal without clamping it at 0
        if (builtins.min(rows, cols - diagonal) if diagonal >= 0 else builtins.min(rows + diagonal, cols)) < 0:
            raise RuntimeError("numel: integer multiplication overflow")
        return recorded("DiagBackward0", [input], lambda: _diagonal(input, diagonal))
    raise RuntimeError("matrix or a vector expected")


def trace(input):
    if input.dtype is _tensor.bool:
        raise RuntimeError('"trace" not implemented for \'Bool\'')
    if input.dim() != 2:
        raise RuntimeError("trace: expected a matrix, but got tensor with dim " + str(input.dim()))
    return recorded("TraceBackward0", [input], lambda: _diagonal(input).sum())


def unfold(self, dimension, size, step):
    """The windows of `size` elements every `step` along dimension, as a new last dim: a view, as PyTorch's (the
    engine's; UnfoldBackward0), so overlapping windows refuse in-place writes and others write self."""
    return _C.unfold(self, dimension, size, step)


def as_strided(input, size, stride, storage_offset=None):
    """A view of input's storage with these sizes and strides (the engine's; AsStridedBackward0)."""
    return _C.as_strided(input, list(size), list(stride), storage_offset)


def rot90(input, k=1, dims=(0, 1)):
    dims = list(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.dim() < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.dim()}")
    return recorded("Rot90Backward0", [input], lambda: _rot90(input, k, dims))


def _rot90(input, k, dims):
    d0, d1 = dims
    k %= 4
    if k == 1:
        return flip(input, [d1]).transpose(d0, d1)
    if k == 2:
        return flip(input, [d0, d1])
    if k == 3:
        return flip(input, [d0]).transpose(d0, d1)
    return input.clone()


def fliplr(input):
    if input.dim() < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, [1])


def flipud(input):
    if input.dim() < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, [0])


def block_diag(*tensors):
    return recorded("BlockDiagBackward0", list(tensors), lambda: _block_diag(tensors))


def _block_diag(tensors):
    blocks = [t.reshape([1, 1]) if t.dim() == 0 else t.reshape([1, -1]) if t.dim() == 1 else t for t in tensors]
    width = builtins.sum(b._shape()[1] for b in blocks)
    dtype = blocks[0].dtype
    for b in blocks[1:]:
        dtype = (_tensor.zeros([], dtype=dtype) + _tensor.zeros([], dtype=b.dtype)).dtype
    rows, left = [], 0
    for b in blocks:
        r, c = b._shape()
        parts = [p for p in (_tensor.zeros([r, left], dtype=dtype), b.to(dtype),
                             _tensor.zeros([r, width - left - c], dtype=dtype)) if p._shape()[1]]
        rows.append(_C.cat(parts, 1) if len(parts) > 1 else parts[0])
        left += c
    return _C.cat(rows, 0)


# ---- linear algebra forms ----

def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """beta * input + alpha * (mat1 @ mat2) (beta 0 ignores input, NaNs included, as 1.13; AddmmBackward0)."""
    return recorded("AddmmBackward0", [input, mat1, mat2], lambda: _addmm(input, mat1, mat2, beta, alpha))


def _addmm(input, mat1, mat2, beta, alpha):
    product = mat1.matmul(mat2)
    if alpha != 1:
        product = product * alpha
    # input expands to the product's shape (1.13's text when it cannot), never the other way
    input = _C.expand(input, list(product._shape()))
    if beta == 0:   # input's values ignored (NaNs too), its gradient 0, as 1.13's
        return _C.where(_tensor.ones([], dtype=_tensor.bool), product, input)
    return (input * beta if beta != 1 else input) + product


def mv(input, vec):
    _check_mv(input, vec)
    if input.dtype is _tensor.int64 and vec.dtype is _tensor.int64:
        from tinyddp._tensor_forms import _integer_product
        return _integer_product(input, vec)
    return recorded("MvBackward0", [input, vec], lambda: input.matmul(vec))


def addmv(input, mat, vec, *, beta=1, alpha=1):
    return recorded("AddmvBackward0", [input, mat, vec], lambda: _addmm(input, mat, vec, beta, alpha))


def addr(input, vec1, vec2, *, beta=1, alpha=1):
    return recorded("AddrBackward0", [input, vec1, vec2],
                    lambda: _addmm(input, vec1.reshape([-1, 1]), vec2.reshape([1, -1]), beta, alpha))


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    if batch1.dim() != 3 or batch2.dim() != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    return recorded("BaddbmmBackward0", [input, batch1, batch2], lambda: _addmm(input, batch1, batch2, beta, alpha))


def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    def composed():
        product = batch1.matmul(batch2).sum(0)
        return (input * beta if beta != 1 else input) + (product * alpha if alpha != 1 else product) if beta != 0 \
            else (product * alpha if alpha != 1 else product)
    return recorded("AddbmmBackward0", [input, batch1, batch2], composed)


_CHAIN_MATMUL_WARNING = ("torch.chain_matmul is deprecated and will be removed in a future PyTorch release. Use "
                         "torch.linalg.multi_dot instead, which accepts a list of two or more tensors rather than "
                         "multiple parameters. (Triggered internally at  ./aten/src/ATen/native/LinearAlgebra.cpp:"
                         "967.)")


def chain_matmul(*matrices):
    from tinyddp._tensor import _warn_once
    _warn_once(_CHAIN_MATMUL_WARNING, stacklevel=2)
    out = matrices[0]
    for m in matrices[1:]:
        out = out.matmul(m)
    return out if len(matrices) > 1 else out.clone()


def tensordot(a, b, dims=2):
    """The sum over dims of a and of b (the last `dims` of a with the first of b, or two lists) as one matmul."""
    if isinstance(dims, numbers.Integral):
        given_a, given_b = list(range(-dims, 0)), list(range(dims))   # as 1.13's Python tensordot lists them
    else:
        given_a, given_b = [[d] if isinstance(d, numbers.Integral) else list(d) for d in dims]
    dims_a = [_wrap_dim(d, a.dim()) for d in given_a]
    dims_b = [_wrap_dim(d, b.dim()) for d in given_b]
    for da, db, ga, gb in zip(dims_a, dims_b, given_a, given_b):
        if a._shape()[da] != b._shape()[db]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {a._shape()[da]} in dim "
                               f"{ga} and second has size {b._shape()[db]} in dim {gb}")
    free_a = [d for d in range(a.dim()) if d not in dims_a]
    free_b = [d for d in range(b.dim()) if d not in dims_b]
    k = math.prod(a._shape()[d] for d in dims_a)
    rows = math.prod(a._shape()[d] for d in free_a)
    columns = math.prod(b._shape()[d] for d in free_b)
    left = _tensor_ops.permute(a, free_a + dims_a).reshape([rows, k])   # sizes, not -1: k may be 0
    right = _tensor_ops.permute(b, dims_b + free_b).reshape([k, columns])
    return left.matmul(right).reshape([a._shape()[d] for d in free_a] + [b._shape()[d] for d in free_b])


def inner(input, other):
    if input.dim() == 0 or other.dim() == 0:
        return input * other
    if input._shape()[-1] != other._shape()[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but got shapes "
                           f"{list(input._shape())} and {list(other._shape())}")
    return tensordot(input, other, ([input.dim() - 1], [other.dim() - 1]))


def kron(input, other):
    n = builtins.max(input.dim(), other.dim())
    a = input.reshape([1] * (n - input.dim()) + list(input._shape()))
    b = other.reshape([1] * (n - other.dim()) + list(other._shape()))
    sa, sb = list(a._shape()), list(b._shape())
    out = a.reshape([x for s in sa for x in (s, 1)]) * b.reshape([x for s in sb for x in (1, s)])
    return recorded("UnsafeViewBackward0", [out], lambda: out.reshape([x * y for x, y in zip(sa, sb)]))


def cross(input, other, dim=None):
    """The cross product of 3-vectors along dim (by default the first dim of size 3; LinalgCrossBackward0)."""
    return recorded("LinalgCrossBackward0", [input, other], lambda: _cross(input, other, dim))


def _cross(input, other, dim):
    shape = _broadcast_shape(input._shape(), other._shape())
    a, b = _C.expand(input, shape), _C.expand(other, shape)
    if dim is None:
        dim = next((d for d, s in enumerate(shape) if s == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    given = dim
    if not shape:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    dim = _wrap_dim(dim, len(shape))
    if shape[dim] != 3:   # 1.13 names the dim as given
        raise RuntimeError(f"linalg.cross: inputs dimension {given} must have length 3. Got {input._shape()[dim]} "
                           f"and {other._shape()[dim]}")
    if input.dtype is _tensor.bool or other.dtype is _tensor.bool:
        raise RuntimeError('"cross" not implemented for \'Bool\'')
    p = [a.narrow(dim, i, 1) for i in range(3)]
    q = [b.narrow(dim, i, 1) for i in range(3)]
    return _C.cat([p[1] * q[2] - p[2] * q[1], p[2] * q[0] - p[0] * q[2], p[0] * q[1] - p[1] * q[0]], dim)


def diff(input, n=1, dim=-1, prepend=None, append=None):
    if input.dim() == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n == 0:   # 1.13 returns a copy before looking at dim
        return recorded("CopyBackwards", [input], lambda: input.clone())
    dim = _wrap_dim(dim, input.dim())
    if prepend is not None or append is not None:
        parts = ([prepend] if prepend is not None else []) + [input] + ([append] if append is not None else [])
        input = _C.cat(parts, dim)
    out = input
    for _ in range(n):
        size = out._shape()[dim]
        if size == 0:
            break
        out = out.narrow(dim, 1, size - 1) - out.narrow(dim, 0, size - 1) if out.dtype is not _tensor.bool else \
            out.narrow(dim, 1, size - 1).logical_xor(out.narrow(dim, 0, size - 1))
    return out


def _safe_sqrt(squares):
    """sqrt with a zero gradient where squares is 0 (1.13's distance backwards give 0 there, not NaN): the root
    is taken of 1 at those places and replaced by 0."""
    zero = squares == 0
    if not builtins.bool(zero.any()):
        return squares.sqrt()
    roots = _C.where(zero, _tensor.ones([], dtype=squares.dtype), squares).sqrt()
    return _C.where(zero, _tensor.zeros([], dtype=squares.dtype), roots)


def dist(input, other, p=2):
    return recorded("DistBackward0", [input, other], lambda: _dist(input, other, p))


def _dist(input, other, p):
    diff_ = input - other
    if p == math.inf:
        return diff_.abs().max()
    if p == 0:
        return (diff_ != 0).sum().to(diff_.dtype)
    if p == 1:
        return diff_.abs().sum()
    if p == 2:
        return _safe_sqrt((diff_ * diff_).sum())
    return (diff_.abs() ** p).sum() ** (1.0 / p)


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """The p-norm distances between the rows of x1 (.., P, M) and of x2 (.., R, M): (.., P, R)."""
    if x1._shape()[-1] != x2._shape()[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1._shape()[-1]} X2: "
                           f"{x2._shape()[-1]}")
    if p == 2 and compute_mode == "use_mm_for_euclid_dist_if_necessary" and (x1._shape()[-2] > 25 or
                                                                             x2._shape()[-2] > 25):
        # 1.13 takes the matrix-product path here: _euclidean_dist, then a view to the result's shape
        out = recorded("EuclideanDistBackward0", [x1, x2], lambda: _cdist(x1, x2, p))
        return out.view(list(out._shape()))
    return recorded("CdistBackward0", [x1, x2], lambda: _cdist(x1, x2, p))


def _cdist(x1, x2, p):
    d = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    if p == 2:
        return _safe_sqrt((d * d).sum(-1))
    if p == 1:
        return d.abs().sum(-1)
    if p == math.inf:
        return d.abs().amax(-1)
    return (d.abs() ** p).sum(-1) ** (1.0 / p)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """sum((x1 / |x1|) * (x2 / |x2|)) along dim, the norms clamped to eps without a gradient for the clamp (1.13
    clamps them in place under no_grad), after broadcasting x1 and x2 together."""
    if not (x1.is_floating_point() or x2.is_floating_point()):
        from tinyddp._tensor_reduce import result_type, scalar_name
        raise RuntimeError("expected common dtype to be floating point, yet common dtype is "
                           f"{scalar_name(result_type(x1, x2))}")
    shape = _broadcast_shape(x1._shape(), x2._shape())
    x1, x2 = _C.expand(x1, shape), _C.expand(x2, shape)

    def norm(x):   # 1.13's: linalg.vector_norm (its gradient 0 at a zero vector), clamped in place under no_grad
        from tinyddp import linalg
        n = linalg.vector_norm(x, 2, dim, True)
        return n + (n.clamp(min=eps) - n).detach()
    return ((x1 / norm(x1)) * (x2 / norm(x2))).sum(dim)


def trapezoid(y, x=None, *, dx=None, dim=-1):
    dim = _wrap_dim(dim, y.dim())
    size = y._shape()[dim]
    if x is not None:
        spacing = diff(x, dim=-1 if x.dim() == 1 else dim)
        if x.dim() == 1:
            view = [1] * y.dim()
            view[dim] = size - 1
            spacing = spacing.reshape(view)
        return (spacing * (y.narrow(dim, 1, size - 1) + y.narrow(dim, 0, size - 1))).sum(dim) / 2.0
    dx = 1 if dx is None else dx
    if size == 0:
        return y.sum(dim)
    ends = y.narrow(dim, 0, 1).squeeze(dim) + y.narrow(dim, size - 1, 1).squeeze(dim)
    summed = y.sum(dim) - ends * 0.5
    return recorded("MulBackward1", [summed], lambda: summed * dx)   # 1.13 scales by the number dx


def trapz(y, x=None, *, dx=None, dim=-1):
    return trapezoid(y, x, dx=dx, dim=dim)


# ---- einsum ----

def einsum(equation, *operands):
    """Sums of products over named dims: the operands contracted pairwise, left to right, each pair as one
    batched matmul over (shared kept dims, left's own, summed, right's own). The result is recorded under 1.13's
    last two nodes: each operand permuted, then a view dropping the summed dims (two or more operands), a product
    (two without summed letters) or a sum (one operand)."""
    operands = _flat_args(operands)
    inputs, arrow, output = equation.replace(" ", "").partition("->")
    terms = inputs.split(",")
    if len(terms) != len(operands) or not any(t.requires_grad for t in operands):
        return _einsum(equation, operands)
    letters = [c for c in inputs if c.isalpha()]
    kept = {c for c in output if c.isalpha()} if arrow else {c for c in letters if letters.count(c) == 1}
    summed = len(set(letters) - kept)
    if len(operands) == 1:
        op = operands[0]
        if not summed:
            return recorded("PermuteBackward0", [op], lambda: _einsum(equation, [op]))
        permuted = _C.permute(op, list(range(op.dim())))
        return recorded("SumBackward1", [permuted], lambda: _einsum(equation, [permuted]))
    if not summed and len(operands) == 2:
        permuted = [_C.permute(op, list(range(op.dim()))) for op in operands]
        return recorded("MulBackward0", permuted, lambda: _einsum(equation, permuted))
    spread = recorded("PermuteBackward0", operands, lambda: _with_unit_dims(_einsum(equation, operands), summed))
    return spread.view(list(spread._shape())[:spread.dim() - summed])


def _with_unit_dims(t, count):
    return t.reshape(list(t._shape()) + [1] * count)


def _einsum(equation, operands):
    equation = equation.replace(" ", "")
    inputs, arrow, output = equation.partition("->")
    terms = inputs.split(",")
    if len(terms) != len(operands):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation"
                           if len(operands) > len(terms) else
                           "einsum(): fewer operands were provided than specified in the equation")
    ellipsis_dims = builtins.max([op.dim() - len(t.replace("...", "")) for t, op in zip(terms, operands)
                                  if "..." in t] or [0])
    spare = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in equation][:ellipsis_dims]
    letters_of = []
    ops = []
    for term, op in zip(terms, operands):
        if "..." in term:
            k = op.dim() - len(term.replace("...", ""))
            term = term.replace("...", "".join(spare[ellipsis_dims - k:]))
        if len(term) != op.dim():
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({len(term)}) does not match "
                               f"the number of dimensions ({op.dim()}) for operand {len(ops)} and no ellipsis was "
                               "given")
        op, term = _einsum_diagonal(op, term)
        letters_of.append(term)
        ops.append(op)
    if arrow:
        letters = output.replace("...", "")
        for i, c in enumerate(letters):
            if c not in inputs:
                raise RuntimeError(f"einsum(): output subscript {c} does not appear in the equation for any input "
                                   "operand")
            if c in letters[:i]:
                raise RuntimeError(f"einsum(): output subscript {c} appears more than once in the output")
        out = output.replace("...", "".join(spare))
    else:   # the letters named once in the equation, in order, after the ellipsis dims
        counts = {}
        for term in terms:
            for c in term.replace("...", ""):
                counts[c] = counts.get(c, 0) + 1
        out = "".join(spare) + "".join(sorted(c for c in counts if counts[c] == 1 and c not in spare))
    sizes = {}
    for i, (term, op) in enumerate(zip(letters_of, ops)):
        for c, s in zip(term, op._shape()):
            if c in sizes and sizes[c] != s and 1 not in (s, sizes[c]):   # 1.13's texts (its "1has" too)
                if c in spare:   # counted within this operand's ellipsis dims (the last of the spare letters)
                    j = spare.index(c) - (len(spare) - builtins.sum(d in spare for d in term))
                    raise RuntimeError(f"einsum(): dimension {j} covered by ellipsis in operand {i}has "
                                       f"size {s} which does not broadcast with previously seen ellipsis with size "
                                       f"{sizes[c]} for the respective dimension")
                raise RuntimeError(f"einsum(): subscript {c} has size {s} for operand {i} which does not broadcast "
                                   f"with previously seen size {sizes[c]}")
            sizes[c] = builtins.max(sizes.get(c, 1), s)
    acc, acc_letters = ops[0], letters_of[0]
    acc, acc_letters = _sum_unused(acc, acc_letters, [out] + letters_of[1:])
    for k in range(1, len(ops)):
        right, right_letters = _sum_unused(ops[k], letters_of[k], [out, acc_letters] + letters_of[k + 1:])
        acc, acc_letters = _contract(acc, acc_letters, right, right_letters, [out] + letters_of[k + 1:], sizes)
    acc, acc_letters = _sum_unused(acc, acc_letters, [out])
    order = [acc_letters.index(c) for c in out]
    return _tensor_ops.permute(acc, order) if order != list(range(len(order))) else acc


def _einsum_diagonal(op, term):
    """A letter repeated in one operand takes the diagonal of those dims."""
    while len(set(term)) != len(term):
        c = next(c for c in term if term.count(c) > 1)
        i = term.index(c)
        j = term.index(c, i + 1)
        op = diagonal(op, 0, i, j)
        term = term[:i] + term[i + 1:j] + term[j + 1:] + c
    return op, term


def _sum_unused(op, letters, later):
    """op summed over the letters no later term or the output names."""
    needed = set("".join(later))
    dims = [d for d, c in enumerate(letters) if c not in needed]
    if not dims:
        return op, letters
    return op.sum(dims), "".join(c for c in letters if c in needed)


def _contract(a, la, b, lb, later, sizes):
    needed = set("".join(later))
    batch = [c for c in la if c in lb and c in needed]
    summed = [c for c in la if c in lb and c not in needed]
    left = [c for c in la if c not in lb]
    right = [c for c in lb if c not in la]
    a = _tensor_ops.permute(a, [la.index(c) for c in batch + left + summed])
    b = _tensor_ops.permute(b, [lb.index(c) for c in batch + summed + right])
    bshape = [builtins.max(a._shape()[i], b._shape()[i]) for i in range(len(batch))]
    a = _C.expand(a, bshape + list(a._shape()[len(batch):]))
    b = _C.expand(b, bshape + list(b._shape()[len(batch):]))
    sa, sb = list(a._shape()), list(b._shape())
    nl, ns = math.prod(sa[len(batch):len(batch) + len(left)]), math.prod(sa[len(batch) + len(left):])
    nr = math.prod(sb[len(batch) + len(summed):])
    product = a.reshape(bshape + [nl, ns]).matmul(b.reshape(bshape + [ns, nr]))
    shape = bshape + sa[len(batch):len(batch) + len(left)] + sb[len(batch) + len(summed):]
    return product.reshape(shape), "".join(batch + left + right)


def _install():
    from tinyddp._tensor_forms import _inplace
    methods = {"unflatten": unflatten, "sum_to_size": sum_to_size, "tile": tile,
               "repeat_interleave": repeat_interleave, "broadcast_to": broadcast_to, "diagonal": diagonal,
               "diag_embed": diag_embed, "diag": diag, "trace": trace, "unfold": unfold, "rot90": rot90,
               "as_strided": as_strided,
               "fliplr": fliplr, "flipud": flipud, "addmm": addmm, "mv": mv, "addmv": addmv, "addr": addr,
               "baddbmm": baddbmm, "addbmm": addbmm, "inner": inner, "kron": kron, "cross": cross, "diff": diff,
               "dist": dist}
    for name, fn in methods.items():
        setattr(Tensor, name, fn)
    for name in ("addmm", "addmv", "addr", "baddbmm", "addbmm"):
        setattr(Tensor, name + "_", _inplace(methods[name]))


_install()
