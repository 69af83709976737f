"""torch.linalg: the norms, as PyTorch 1.13's (torch/linalg/__init__.py binds ATen's linalg_* functions).

vector_norm is the engine's op (engine/ops/norm.cpp: LinalgVectorNormBackward0, 1.13's gradient, 0 at a zero norm);
matrix_norm and norm route their orders to it as 1.13's ATen does ('fro': a vector 2-norm over the two dims; 1 and
inf: the largest column or row sum of |A|). The orders that need singular values (2, -2, 'nuc') and the
decompositions and solvers of torch.linalg (svd, inv, solve, ...) are not in tinyddp.
"""
import numbers

from tinyddp import _C
from tinyddp._tensor import _c_dtype, _wrap_dim, bool as _bool, float32, float64, int64
from tinyddp._tensor_forms import amax, amin

_INF = float("inf")
_SCALAR_NAMES = {float32: "Float", float64: "Double", int64: "Long", _bool: "Bool"}   # c10's, as messages print


def _dim_list(dim, fn):
    """dim as 1.13's parser reads it: None, an int or a sequence of ints (a list)."""
    if dim is None:
        return None
    if isinstance(dim, bool) or not isinstance(dim, (numbers.Integral, tuple, list)) or (
            not isinstance(dim, numbers.Integral) and not all(isinstance(d, numbers.Integral) for d in dim)):
        raise TypeError(f"{fn}(): argument 'dim' must be tuple of ints, not {type(dim).__name__}")
    return [int(dim)] if isinstance(dim, numbers.Integral) else [int(d) for d in dim]


def _optional_dtype(dtype):
    return None if dtype is None else _c_dtype(dtype)


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    """The vector ord-norm of x over dim (all elements when None): (sum |x|^ord)^(1/ord); inf / -inf the
    largest / smallest |x|; 0 the number of nonzero elements."""
    if not isinstance(ord, numbers.Number):
        raise TypeError(f"linalg_vector_norm(): argument 'ord' must be Number, not {type(ord).__name__}")
    if out is not None:
        raise NotImplementedError("tinyddp: linalg.vector_norm(out=...) is not supported; use the returned tensor")
    dims = _dim_list(dim, "linalg_vector_norm")
    return _C._linalg_vector_norm(x, float(ord), dims or [], bool(keepdim), _optional_dtype(dtype))


def _matrix_norm_checks(A, dim, dtype):
    """1.13's _linalg_matrix_norm_checks: A is a floating batch of matrices, dim two different dims."""
    if A.dim() < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
    if not A.is_floating_point():
        raise RuntimeError("linalg.matrix_norm: Expected a floating point or complex tensor as input. Got "
                           + _SCALAR_NAMES[A.dtype])
    if len(dim) != 2:
        raise RuntimeError("linalg.matrix_norm: dim must be a 2-tuple. Got " + " ".join(str(d) for d in dim))
    wrapped = [_wrap_dim(d, A.dim()) for d in dim]
    if wrapped[0] == wrapped[1]:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({wrapped[0]}, {wrapped[1]})")
    if dtype is not None:   # 1.13's check_linalg_norm_dtype
        if not dtype.is_floating_point:
            raise RuntimeError(f"linalg.matrix_norm: dtype should be floating point or complex, but got "
                               f"{_SCALAR_NAMES[dtype]}")
        if A.dtype is float64 and dtype is float32:
            raise RuntimeError("linalg.matrix_norm: the dtype of the input (Double) should be convertible without "
                               "narrowing to the specified dtype (Float)")
    return wrapped


def _no_singular_values(ord):
    raise NotImplementedError(f"tinyddp: linalg.matrix_norm with ord={ord!r} needs singular values, which tinyddp "
                              "does not compute; the supported orders are 'fro', 1, -1, inf and -inf.")


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):
    """The matrix ord-norm over the two dims of dim: 'fro' (the 2-norm of the elements), 1 / -1 (the largest /
    smallest column sum of |A|), inf / -inf (the same over rows)."""
    if out is not None:
        raise NotImplementedError("tinyddp: linalg.matrix_norm(out=...) is not supported; use the returned tensor")
    dims = _dim_list(dim, "linalg_matrix_norm")
    if isinstance(ord, str):
        if ord not in ("fro", "nuc"):
            raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
        dims = _matrix_norm_checks(A, dims, dtype)
        if ord == "nuc":
            _no_singular_values(ord)
        return vector_norm(A, 2, dims, keepdim, dtype=dtype)
    if not isinstance(ord, numbers.Number):
        raise TypeError(f"linalg_matrix_norm(): argument 'ord' must be Number, not {type(ord).__name__}")
    if abs(ord) not in (1, 2, _INF):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord:g} not supported.")
    dims = _matrix_norm_checks(A, dims, dtype)
    if abs(ord) == 2:
        _no_singular_values(ord)
    if abs(ord) == _INF:   # the inf norm is the 1 norm of the transpose
        dims = [dims[1], dims[0]]
    if not keepdim and dims[0] < dims[1]:   # the first reduction removes a dim in front of the second
        dims[1] -= 1
    column_sums = vector_norm(A, 1, dims[0], keepdim, dtype=dtype)
    return (amax if ord > 0 else amin)(column_sums, dims[1], keepdim)


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None, out=None):
    """A vector norm (ord None or a number, over one dim or a 1-D input) or a matrix norm (a string ord, two dims,
    or a number ord of a 2-D input), chosen as 1.13's linalg.norm chooses."""
    dims = _dim_list(dim, "linalg_norm")
    if isinstance(ord, str):
        if dims is not None:
            if len(dims) not in (1, 2):   # 1.13's text, its typo included
                raise RuntimeError(f"linalg.norm: If dim is specified, it mut be of length 1 or 2. Got {dims}")
        elif A.dim() not in (1, 2):
            raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got "
                               f"{A.dim()}D.")
        return matrix_norm(A, ord, dims if dims is not None else [0, 1], keepdim, dtype=dtype, out=out)
    if dims is not None:
        if len(dims) not in (1, 2):
            raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. Got {dims}")
    elif ord is not None and A.dim() not in (1, 2):
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got "
                           f"{A.dim()}D.")
    if ord is not None and ((dims is not None and len(dims) == 2) or (dims is None and A.dim() == 2)):
        return matrix_norm(A, ord, dims if dims is not None else [0, 1], keepdim, dtype=dtype, out=out)
    return vector_norm(A, 2 if ord is None else ord, dims, keepdim, dtype=dtype, out=out)


# torch.linalg's other functions: an AttributeError that says what tinyddp's torch.linalg has.
_NOT_IN_TINYDDP = {"cholesky", "cholesky_ex", "cond", "cross", "det", "diagonal", "eig", "eigh", "eigvals",
                   "eigvalsh", "householder_product", "inv", "inv_ex", "ldl_factor", "ldl_factor_ex", "ldl_solve",
                   "lstsq", "lu", "lu_factor", "lu_factor_ex", "lu_solve", "matmul", "matrix_exp", "matrix_power",
                   "matrix_rank", "multi_dot", "pinv", "qr", "slogdet", "solve", "solve_ex", "solve_triangular",
                   "svd", "svdvals", "tensorinv", "tensorsolve", "vander", "vecdot"}


def __getattr__(name):
    if name in _NOT_IN_TINYDDP:
        raise AttributeError(f"module 'tinyddp.linalg' has no attribute '{name}': tinyddp's torch.linalg has "
                             "norm, vector_norm and matrix_norm only")
    raise AttributeError(f"module 'tinyddp.linalg' has no attribute '{name}'")


__all__ = ["matrix_norm", "norm", "vector_norm"]
