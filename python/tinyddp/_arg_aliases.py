"""The NumPy-style keyword names 1.13's argument parser accepts for the `dim` and `keepdim` of every native op
(torch/csrc/utils/python_arg_parser.cpp, numpy_compatibility_arg_names): `x.sum(axis=0, keepdims=True)`,
`torch.cat(tensors, axis=1)`. Ops that 1.13 writes in Python (Tensor.split, Tensor.norm, F.softmax, torch.unique)
take only `dim`, as there.

The lists are the ops tinyddp has among those whose 1.13 schema has a `dim` or `keepdim` argument. The same
wrapper reads a Python number type given as `dtype=` as the dtype it stands for (`x.sum(dtype=float)` sums in
float64), as the parser does; the factories read it in tinyddp._tensor._c_dtype."""
import functools

from tinyddp._tensor import dtype as _dtype

_METHODS = (
    "all", "amax", "amin", "aminmax", "any", "argmax", "argmin", "argsort", "chunk", "count_nonzero", "cross",
    "cummax", "cummin", "cumprod", "cumprod_", "cumsum", "cumsum_", "diff", "gather", "index_add", "index_add_",
    "index_copy", "index_copy_", "index_fill", "index_fill_", "index_select", "kthvalue", "log_softmax",
    "logcumsumexp", "logsumexp", "max", "mean", "median", "min", "mode", "nanmean", "nanmedian", "nanquantile",
    "nansum", "narrow", "prod", "quantile", "renorm", "renorm_", "repeat_interleave", "scatter", "scatter_",
    "scatter_add", "scatter_add_", "scatter_reduce", "scatter_reduce_", "select", "size", "softmax", "sort",
    "squeeze", "squeeze_", "std", "stride", "sum", "take_along_dim", "tensor_split", "topk", "unbind", "unsqueeze",
    "unsqueeze_", "var")
_FUNCTIONS = (
    "all", "amax", "amin", "aminmax", "any", "argmax", "argmin", "argsort", "cat", "chunk", "cosine_similarity",
    "count_nonzero", "cross", "cummax", "cummin", "cumprod", "cumsum", "diff", "gather", "index_add", "index_copy",
    "index_fill", "index_select", "kthvalue", "log_softmax", "logcumsumexp", "logsumexp", "max", "mean", "median",
    "min", "mode", "nanmean", "nanmedian", "nanquantile", "nansum", "narrow", "prod", "quantile", "renorm",
    "repeat_interleave", "scatter", "scatter_add", "scatter_reduce", "select", "softmax", "sort", "squeeze", "stack",
    "std", "std_mean", "sum", "take_along_dim", "tensor_split", "topk", "trapezoid", "trapz", "unbind", "unflatten",
    "unsqueeze", "var", "var_mean")


def _accepting_numpy_names(fn):
    """fn, also called with axis= for dim=, keepdims= for keepdim= and a Python number type for dtype=."""
    @functools.wraps(fn)
    def op(*args, **kwargs):
        if "axis" in kwargs:
            kwargs["dim"] = kwargs.pop("axis")
        if "keepdims" in kwargs:
            kwargs["keepdim"] = kwargs.pop("keepdims")
        if "dtype" in kwargs:
            kwargs["dtype"] = _dtype._read(kwargs["dtype"])
        return fn(*args, **kwargs)
    op._numpy_names = True
    return op


def install(module, tensor_class):
    for name in _METHODS:
        method = getattr(tensor_class, name)
        if not getattr(method, "_numpy_names", False):
            setattr(tensor_class, name, _accepting_numpy_names(method))
    for name in _FUNCTIONS:
        function = getattr(module, name)
        if not getattr(function, "_numpy_names", False):
            setattr(module, name, _accepting_numpy_names(function))
