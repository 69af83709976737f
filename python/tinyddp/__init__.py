"""tinyddp: a PyTorch-1.13-shaped front end over tinyddp's C++ engine, reducer and models.

A script restricted to the subset in docs/python.md runs with ``import tinyddp as torch``. The compiled half
is ``tinyddp._C``; the modules here give it PyTorch's names, one Python module per PyTorch module.
"""
import sys as _sys

from tinyddp import _C
from tinyddp._device import device
from tinyddp._tensor_str import set_printoptions
from tinyddp._tensor import (Size, Tensor, abs, bool, cat, dtype, empty, eq, exp, flatten, float32,
                             float64, from_numpy, full, ge, gt, int64, is_tensor, le, log, logical_not, lt,
                             matmul, max, maximum, ne, ones, ones_like, rand, randint, randn, randperm, relu,
                             sigmoid, sqrt, squeeze, stack, tanh, tensor, unsqueeze, zeros, zeros_like)
from tinyddp._tensor_ops import (allclose, arange, argsort, chunk, clamp, equal, eye, floor_divide, gather,
                                 isclose, linspace, log_softmax, minimum, norm, permute, remainder, softmax, sort,
                                 split, std, topk, tril, triu, var, where)
from tinyddp._tensor_ops import clamp as clip
from tinyddp import _indexing  # noqa: F401  (Tensor.__getitem__ and __setitem__)
from tinyddp._tensor_reduce import (aminmax, all, any, argmax, argmin, count_nonzero, cummax, cummin,  # noqa: A004
                                    cumprod, cumsum, logcumsumexp, mean, min, msort, prod, sum)
from tinyddp import return_types  # noqa: E402
from tinyddp._tensor_forms import (add, amax, amin, bmm, clone, div, dot, empty_like, flip,
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
                                  atan, atan2, atanh, bucketize, corrcoef, cosh, cov, exp2, fmod, heaviside, histc,
                                  hypot, kthvalue, lerp, log10, log2, logaddexp, logaddexp2, logical_and, logical_or,
                                  logical_xor, logit, median, mode, nan_to_num, nanmean, nanmedian, nanquantile,
                                  nansum, quantile, searchsorted, sinh, std_mean, tan, var_mean, xlogy)
from tinyddp._tensor_random import bernoulli, multinomial, normal  # noqa: E402
from tinyddp._tensor_shape import (addbmm, addmm, addmv, addr, atleast_1d, atleast_2d, atleast_3d,  # noqa: E402
                                   baddbmm, block_diag, broadcast_shapes, broadcast_tensors, broadcast_to,
                                   cartesian_prod, cdist, chain_matmul, column_stack, combinations, cross, diag,
                                   diag_embed, diagonal, diff, dist, dstack, einsum, fliplr, flipud, hstack, inner,
                                   kron, meshgrid, mv, repeat_interleave, reshape, rot90, row_stack, tensordot, tile,
                                   trace, trapezoid, trapz, tril_indices, triu_indices, unflatten, vstack)
from tinyddp._tensor_shape import as_strided  # noqa: E402
from tinyddp._tensor_scatter import (index_add, index_copy, index_fill, masked_scatter, put,  # noqa: E402
                                     renorm, scatter, scatter_add, scatter_reduce, take)
from tinyddp._indexing import index_put  # noqa: E402
from tinyddp._tensor_shape import cosine_similarity  # noqa: E402
from tinyddp._tensor_ops import masked_fill  # noqa: E402


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
            "broadcast_to", "bucketize", "corrcoef", "cov", "cartesian_prod", "cdist", "chain_matmul", "column_stack", "combinations",
            "cosh", "cosine_similarity", "cross", "cumprod", "diag", "diag_embed", "diagonal", "diff", "dist",
            "dstack", "einsum", "exp2", "fliplr", "flipud", "fmod", "heaviside", "histc", "hstack", "hypot",
            "index_add", "index_copy", "index_fill", "index_put", "inner", "is_floating_point", "kron", "kthvalue",
            "lerp", "log10", "log2", "logaddexp", "logaddexp2", "logical_and", "logical_or", "logical_xor", "logit",
            "masked_fill", "masked_scatter", "median", "meshgrid", "mode", "multinomial", "mv", "nan_to_num",
            "nanmean", "nanmedian", "nanquantile", "nansum", "normal", "prod", "put", "quantile", "renorm",
            "repeat_interleave", "reshape", "rot90", "row_stack", "scatter", "scatter_add", "scatter_reduce",
            "searchsorted", "sinh", "std_mean", "take", "tan", "tensordot", "tile", "trace", "trapezoid", "trapz",
            "tril_indices", "triu_indices", "unflatten", "var_mean", "vstack", "xlogy"]

# ---- torch.linalg, inference mode, autocast and AMP, dtypes, versions, backends and process-wide settings ----
from tinyddp import amp, backends, cpu, linalg  # noqa: E402
from tinyddp._tensor import (bfloat16, complex32, complex64, complex128, float16, int8, int16, int32,  # noqa: E402
                             uint8)
from tinyddp._finfo import finfo, iinfo  # noqa: E402
from tinyddp._runtime import (are_deterministic_algorithms_enabled, get_default_dtype,  # noqa: E402
                              get_deterministic_debug_mode, get_float32_matmul_precision,
                              set_float32_matmul_precision, get_num_interop_threads, get_num_threads,
                              is_deterministic_algorithms_warn_only_enabled, set_default_dtype,
                              set_deterministic_debug_mode, set_num_interop_threads, set_num_threads,
                              use_deterministic_algorithms)
from tinyddp._tensor_counts import bincount, isin  # noqa: E402
from tinyddp._tensor_ops import logspace  # noqa: E402
from tinyddp.amp.autocast_mode import (autocast, autocast_decrement_nesting,  # noqa: E402
                                       autocast_increment_nesting, clear_autocast_cache, get_autocast_cpu_dtype,
                                       get_autocast_gpu_dtype, is_autocast_cache_enabled, is_autocast_cpu_enabled,
                                       is_autocast_enabled, set_autocast_cache_enabled, set_autocast_cpu_dtype,
                                       set_autocast_cpu_enabled, set_autocast_enabled, set_autocast_gpu_dtype)
from tinyddp.autograd.grad_mode import inference_mode  # noqa: E402
from tinyddp import torch_version, version  # noqa: E402
from tinyddp.torch_version import __version__  # noqa: E402

is_inference_mode_enabled = _C.is_inference_mode_enabled
is_anomaly_enabled = _C.is_anomaly_enabled
half = float16
int = int32  # noqa: A001
short = int16
cfloat = complex64
cdouble = complex128
chalf = complex32


def is_inference(input):
    return input.is_inference()


__all__ += ["amp", "are_deterministic_algorithms_enabled", "autocast", "backends", "bfloat16", "bincount", "cdouble",
            "cfloat", "chalf", "complex128", "complex32", "complex64", "cpu", "finfo", "float16",
            "get_autocast_cpu_dtype", "get_autocast_gpu_dtype", "get_default_dtype", "get_deterministic_debug_mode",
            "get_float32_matmul_precision", "set_float32_matmul_precision",
            "get_num_interop_threads", "get_num_threads", "half", "iinfo", "inference_mode", "int", "int16", "int32",
            "int8", "is_autocast_cpu_enabled", "is_autocast_enabled", "is_deterministic_algorithms_warn_only_enabled",
            "is_anomaly_enabled", "is_inference", "is_inference_mode_enabled", "isin", "linalg", "logspace",
            "set_default_dtype", "set_deterministic_debug_mode", "set_num_interop_threads", "set_num_threads", "short", "uint8",
            "use_deterministic_algorithms", "version"]

from tinyddp._tensor_more import (argwhere, is_complex, is_nonzero, randint_like, range,  # noqa: E402
                                  take_along_dim, tensor_split, typename, frac, sgn, unique_consecutive,
                                  set_default_tensor_type, layout, strided, fmax, fmin, copysign, sinc, ldexp,
                                  fix, positive, hsplit, vsplit, dsplit, nextafter)

__all__ += ["aminmax", "cummax", "cummin", "logcumsumexp", "msort", "return_types"]
__all__ += ["argwhere", "is_complex", "is_nonzero", "randint_like", "range",
            "take_along_dim", "tensor_split", "typename", "frac", "sgn", "unique_consecutive",
            "set_default_tensor_type", "layout", "strided", "fmax", "fmin", "copysign", "sinc", "ldexp", "fix",
            "positive", "hsplit", "vsplit", "dsplit", "nextafter"]



def _inplace_function(method):
    """torch.NAME_(input, *args): input.NAME_(*args), 1.13's function form of an in-place method."""
    def function(input, *args, **kwargs):
        return getattr(input, method)(*args, **kwargs)
    function.__name__ = function.__qualname__ = method
    return function


for _name in ("abs_", "acos_", "acosh_", "addmv_", "arccos_", "arccosh_", "arcsin_", "arcsinh_", "arctan_",
              "arctanh_", "asin_", "asinh_", "atan_", "atanh_", "ceil_", "clamp_", "clamp_max_", "clamp_min_", "cos_",
              "cosh_", "deg2rad_", "detach_", "erf_", "erfc_", "exp2_", "exp_", "expm1_", "fill_", "fix_", "floor_",
              "frac_", "gcd_", "i0_", "index_put_", "lcm_", "ldexp_", "log10_", "log1p_", "log2_", "log_", "logit_",
              "nan_to_num_", "neg_", "negative_", "rad2deg_", "reciprocal_", "relu_", "round_", "rsqrt_", "sigmoid_",
              "sin_", "sinc_", "sinh_", "sqrt_", "square_", "tan_", "tanh_", "trunc_", "xlogy_", "zero_"):
    if hasattr(Tensor, _name):
        globals()[_name] = _inplace_function(_name)
        __all__.append(_name)
del _name
clip_ = clamp_  # noqa: F821 (defined by the loop above)
selu_, celu_, rrelu_, threshold_ = nn.functional.selu_, nn.functional.celu_, nn.functional.rrelu_, \
    nn.functional.threshold_


def dropout_(input, p, train):
    return nn.functional.dropout(input, p, train, inplace=True)


def alpha_dropout_(input, p, train):
    return nn.functional.alpha_dropout(input, p, train, inplace=True)


__all__ += ["as_strided", "alpha_dropout_", "celu_", "clip_", "dropout_", "rrelu_", "selu_", "threshold_"]
from tinyddp._tensor_special import digamma, erfc, erfinv, lgamma, polygamma  # noqa: E402
from tinyddp import special  # noqa: E402
__all__ += ["digamma", "erfc", "erfinv", "lgamma", "polygamma", "special"]
from tinyddp import _tensor_bitwise  # noqa: E402  (& | ^ ~ << >> on integers, x OP= y in place)
_tensor_bitwise.install(_sys.modules[__name__])
from tinyddp import _aliases  # noqa: E402  (torch.concat, torch.inf, result_type, ...: 1.13's other names)
_aliases.install(_sys.modules[__name__])
# every op above with a dim also takes 1.13's NumPy keyword names (axis=, keepdims=)
from tinyddp import _arg_aliases  # noqa: E402
_arg_aliases.install(_sys.modules[__name__], Tensor)
from tinyddp import distributions, testing  # noqa: E402  (pure Python over everything above, as torch imports them)


def __getattr__(name):
    """torch.default_generator: the calling thread's default generator (tinyddp's are per thread, so that each
    spawn rank seeds its own, as each process does in PyTorch)."""
    if name == "default_generator":
        return _C.default_generator()
    raise AttributeError(f"module 'tinyddp' has no attribute '{name}'")
