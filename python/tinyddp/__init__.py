"""tinyddp: a PyTorch-1.13-shaped front end over tinyddp's C++ engine, reducer and models.

A script restricted to the subset in docs/python.md runs with ``import tinyddp as torch``. The compiled half
is ``tinyddp._C``; the modules here give it PyTorch's names, one Python module per PyTorch module.
"""
from tinyddp import _C
from tinyddp._device import device
from tinyddp._tensor_str import set_printoptions
from tinyddp._tensor import (Size, Tensor, abs, argmax, bool, cat, dtype, empty, eq, exp, flatten, float32,
                             float64, from_numpy, full, ge, gt, int64, is_tensor, le, log, logical_not, lt,
                             matmul, max, maximum, mean, ne, ones, ones_like, rand, randint, randn, randperm, relu,
                             sigmoid, sqrt, squeeze, stack, sum, tanh, tensor, unsqueeze, zeros, zeros_like)
from tinyddp._tensor_ops import (allclose, arange, argmin, argsort, chunk, clamp, equal, eye, floor_divide, gather,
                                 isclose, linspace, log_softmax, minimum, norm, permute, remainder, softmax, sort,
                                 split, std, topk, tril, triu, var, where)
from tinyddp._tensor_ops import clamp as clip, min  # noqa: A004
from tinyddp import _indexing  # noqa: F401  (Tensor.__getitem__ and __setitem__)
from tinyddp._tensor_forms import (add, amax, amin, bmm, clone, count_nonzero, cumsum, div, dot, empty_like, flip,
                                   full_like, index_select, isfinite, isinf, isnan, logsumexp, masked_select, mm,
                                   movedim, moveaxis, mul, narrow, neg, negative, nonzero, numel, outer, pow,
                                   rand_like, randn_like, reciprocal, roll, rsqrt, select, sign, square, sub,
                                   swapaxes, swapdims, t, transpose, true_divide, unbind, sin, cos, erf, log1p, expm1,
                                   floor, ceil, trunc, round, unique)
from tinyddp._tensor_forms import div as divide, mul as multiply, sub as subtract  # noqa: E402
from tinyddp._tensor_forms import clamp_max, clamp_min  # noqa: E402
from tinyddp._legacy import BoolTensor, DoubleTensor, FloatTensor, LongTensor
from tinyddp.random import Generator, get_rng_state, initial_seed, manual_seed, seed, set_rng_state
from tinyddp.autograd.grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
# they import the names above
from tinyddp import autograd, cuda, futures, nn, optim, distributed, multiprocessing, random, utils  # noqa: E402
from tinyddp.serialization import load, save  # noqa: E402

float = float32    # PyTorch's aliases  # noqa: A001
double = float64
long = int64

__all__ = ["abs", "add", "allclose", "amax", "amin", "arange", "argmax", "argmin", "argsort", "autograd", "bmm", "bool",
           "BoolTensor", "cat", "ceil", "chunk", "clamp", "clamp_max", "clamp_min", "clip", "clone", "cos", "count_nonzero", "cuda", "cumsum",
           "device", "distributed", "div", "divide", "dot", "double", "DoubleTensor", "dtype", "empty", "empty_like",
           "enable_grad", "eq", "equal", "erf", "exp", "expm1", "eye", "flatten", "flip", "float", "float32", "float64",
           "FloatTensor", "floor", "floor_divide", "from_numpy", "full", "full_like", "futures", "gather", "ge",
           "Generator", "get_rng_state", "gt", "index_select", "initial_seed", "int64", "is_grad_enabled", "is_tensor",
           "isclose", "isfinite", "isinf", "isnan", "le", "linspace", "load", "log", "log1p", "log_softmax",
           "logical_not", "logsumexp", "long", "LongTensor", "lt", "manual_seed", "masked_select", "matmul", "max",
           "maximum", "mean", "min", "minimum", "mm", "moveaxis", "movedim", "mul", "multiply", "multiprocessing",
           "narrow", "ne", "neg", "negative", "nn", "no_grad", "nonzero", "norm", "numel", "ones", "ones_like", "optim",
           "outer", "permute", "pow", "rand", "rand_like", "randint", "randn", "randn_like", "random", "randperm",
           "reciprocal", "relu", "remainder", "roll", "round", "rsqrt", "save", "seed", "select", "set_grad_enabled",
           "set_printoptions", "set_rng_state", "sigmoid", "sign", "sin", "Size", "softmax", "sort", "split", "sqrt",
           "square", "squeeze", "stack", "std", "sub", "subtract", "sum", "swapaxes", "swapdims", "t", "tanh", "Tensor",
           "tensor", "topk", "transpose", "tril", "triu", "true_divide", "trunc", "unbind", "unique", "unsqueeze",
           "utils", "var", "where", "zeros", "zeros_like"]
from tinyddp._tensor_math import (acos, acosh, addcdiv, addcmul, arccos, arcsin, arctan, arctan2, asin, asinh,  # noqa
                                  atan, atan2, atanh, bucketize, cosh, cumprod, exp2, fmod, heaviside, histc, hypot,
                                  kthvalue, lerp, log10, log2, logaddexp, logaddexp2, logical_and, logical_or,
                                  logical_xor, logit, median, mode, nan_to_num, nanmean, nanmedian, nanquantile,
                                  nansum, prod, quantile, searchsorted, sinh, std_mean, tan, var_mean, xlogy)
from tinyddp._tensor_random import bernoulli, multinomial, normal  # noqa: E402
from tinyddp._tensor_shape import (addbmm, addmm, addmv, addr, atleast_1d, atleast_2d, atleast_3d,  # noqa: E402
                                   baddbmm, block_diag, broadcast_shapes, broadcast_tensors, broadcast_to,
                                   cartesian_prod, cdist, chain_matmul, column_stack, combinations, cross, diag,
                                   diag_embed, diagonal, diff, dist, dstack, einsum, fliplr, flipud, hstack, inner,
                                   kron, meshgrid, mv, repeat_interleave, reshape, rot90, row_stack, tensordot, tile,
                                   trace, trapezoid, trapz, tril_indices, triu_indices, unflatten, vstack)
from tinyddp._tensor_scatter import (index_add, index_copy, index_fill, index_put, masked_scatter, put,  # noqa: E402
                                     renorm, scatter, scatter_add, scatter_reduce, take)
from tinyddp._tensor_shape import cosine_similarity  # noqa: E402
from tinyddp._tensor_ops import masked_fill  # noqa: E402


def all(input, dim=None, keepdim=False):  # noqa: A001
    return input.all(dim, keepdim)


def any(input, dim=None, keepdim=False):  # noqa: A001
    return input.any(dim, keepdim)


def is_floating_point(input):
    return input.is_floating_point()


def as_tensor(data, dtype=None, device=None):
    """data itself when it is a tensor of dtype (converted otherwise), else a new tensor of it."""
    if isinstance(data, Tensor):
        return data if dtype is None or data.dtype is dtype else data.to(dtype)
    return tensor(data, dtype=dtype)


__all__ += ["acos", "acosh", "addbmm", "addcdiv", "addcmul", "addmm", "addmv", "addr", "all", "any", "arccos", "arcsin",
            "arctan", "arctan2", "as_tensor", "asin", "asinh", "atan", "atan2", "atanh", "atleast_1d", "atleast_2d",
            "atleast_3d", "baddbmm", "bernoulli", "block_diag", "broadcast_shapes", "broadcast_tensors",
            "broadcast_to", "bucketize", "cartesian_prod", "cdist", "chain_matmul", "column_stack", "combinations",
            "cosh", "cosine_similarity", "cross", "cumprod", "diag", "diag_embed", "diagonal", "diff", "dist",
            "dstack", "einsum", "exp2", "fliplr", "flipud", "fmod", "heaviside", "histc", "hstack", "hypot",
            "index_add", "index_copy", "index_fill", "index_put", "inner", "is_floating_point", "kron", "kthvalue",
            "lerp", "log10", "log2", "logaddexp", "logaddexp2", "logical_and", "logical_or", "logical_xor", "logit",
            "masked_fill", "masked_scatter", "median", "meshgrid", "mode", "multinomial", "mv", "nan_to_num",
            "nanmean", "nanmedian", "nanquantile", "nansum", "normal", "prod", "put", "quantile", "renorm",
            "repeat_interleave", "reshape", "rot90", "row_stack", "scatter", "scatter_add", "scatter_reduce",
            "searchsorted", "sinh", "std_mean", "take", "tan", "tensordot", "tile", "trace", "trapezoid", "trapz",
            "tril_indices", "triu_indices", "unflatten", "var_mean", "vstack", "xlogy"]
