"""The NumPy-style keyword names 1.13's argument parser accepts for the `dim` and `keepdim` of every native op
(torch/csrc/utils/python_arg_parser.cpp, numpy_compatibility_arg_names): `x.sum(axis=0, keepdims=True)`,
`torch.cat(tensors, axis=1)`. Ops that 1.13 writes in Python (Tensor.split, Tensor.norm, F.softmax, torch.unique)
take only `dim`, as there.

The lists are the ops tinyddp has among those whose 1.13 schema has a `dim` or `keepdim` argument. The same
wrapper reads a Python number type given as `dtype=` as the dtype it stands for (`x.sum(dtype=float)` sums in
float64), as the parser does; the factories read it in tinyddp._tensor._c_dtype.

Two more things 1.13's parser gives every native op, added here by one wrapper each: a size or dims list may be
passed by its schema's name (`torch.zeros(size=(2, 3))`, `x.view(size=...)`, `x.permute(dims=...)`), and an op
with an out= overload writes its result into a given tensor (`torch.add(a, b, out=c)`), with 1.13's checks."""
import functools
import inspect
import warnings

from tinyddp._tensor import Tensor
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


# ---- sizes and dims by their schema names ----

# op -> the names, in order, of the arguments it otherwise takes as *args (1.13's schema names)
_VARARG_NAMES_OF_METHODS = {
    "view": ("size",), "reshape": ("shape",), "expand": ("size",), "permute": ("dims",), "repeat": ("repeats",),
    "transpose": ("dim0", "dim1"), "split": ("split_size",), "new_zeros": ("size",), "new_ones": ("size",),
    "new_empty": ("size",), "tile": ("dims",), "flip": ("dims",)}
_VARARG_NAMES_OF_FUNCTIONS = {
    "zeros": ("size",), "ones": ("size",), "empty": ("size",), "randn": ("size",), "rand": ("size",),
    "permute": ("input", "dims"), "reshape": ("input", "shape"), "tile": ("input", "dims"), "flip": ("input", "dims")}


def _accepting_vararg_names(fn, names, own_tensor):
    """fn, whose arguments after its own tensor (own_tensor: 1 for a method, else 0) may also be given by `names`,
    the names 1.13's schema gives them: x.view(size=(2, 3)), torch.zeros(size=[4])."""
    @functools.wraps(fn)
    def op(*args, **kwargs):
        if kwargs and any(n in kwargs for n in names):
            args = list(args)
            for n in names[len(args) - own_tensor:]:
                if n not in kwargs:
                    break
                args.append(kwargs.pop(n))
        return fn(*args, **kwargs)
    return op


# ---- out= ----

def _requires_grad(args, kwargs):
    values = list(args) + list(kwargs.values())
    for v in values:
        if isinstance(v, (list, tuple)):
            values.extend(v)
        elif getattr(v, "requires_grad", False):
            return True
    return False


def _write_out(out, result):
    """1.13's out= protocol: a result of a type out cannot hold is refused; an out of another shape is resized (with
    1.13's deprecation warning unless it was empty); then the result is copied in (one version bump)."""
    from tinyddp._aliases import check_cast
    from tinyddp._tensor_reduce import resized_warning
    check_cast(result.dtype, out.dtype)
    shape = list(result.shape)
    if list(out.shape) != shape:
        if out.numel() != 0:
            warnings.warn(resized_warning(list(out.shape), shape), UserWarning, stacklevel=3)
        out.resize_(shape)
    out.copy_(result)
    return out


def _kernel_name(name, args):
    """The op whose out= overload 1.13 reaches (and names in its errors): matmul folds into dot, mv, mm or bmm."""
    if name != "matmul" or len(args) < 2 or not all(isinstance(a, Tensor) for a in args[:2]):
        return name
    a, b = args[0].dim(), args[1].dim()
    if b == 1:
        return "dot" if a == 1 else "mv"
    return "mm" if b == 2 else "bmm"


def _accepting_out(fn, name, factory):
    """fn, also called with out=: the result written into `out` and `out` returned (for the ops returning values
    and indices, out is a pair and the result 1.13's `<op>_out` pair). Like 1.13's out= overloads these record no
    graph, so an argument that requires grad is refused (under grad mode); a factory takes out's dtype when none
    is given."""
    @functools.wraps(fn)
    def op(*args, out=None, **kwargs):
        if out is None:
            return fn(*args, **kwargs)
        from tinyddp import _C, return_types
        from tinyddp.autograd.grad_mode import no_grad
        outs = tuple(out) if isinstance(out, (tuple, list)) else (out,)
        if _C.is_grad_enabled() and (any(o.requires_grad for o in outs) or _requires_grad(args, kwargs)):
            raise RuntimeError(f"{_kernel_name(name, args)}(): functions with out=... arguments don't support "
                               f"automatic differentiation, but one of the arguments requires grad.")
        if factory and kwargs.get("dtype") is None:
            kwargs["dtype"] = out.dtype
        with no_grad():
            result = fn(*args, **kwargs)
            if not isinstance(out, (tuple, list)):
                return _write_out(out, result)
            if not isinstance(result, tuple) or len(result) != len(outs):
                raise TypeError(f"{name}(): out= takes a tensor here, got a {type(out).__name__}")
            return getattr(return_types, name + "_out")(tuple(_write_out(o, r) for o, r in zip(outs, result)))
    return op


# the functions with an out= overload in 1.13 (those that take out= themselves are left as they are)
_OUT_FUNCTIONS = (
    "abs", "acos", "acosh", "add", "addbmm", "addcdiv", "addcmul", "addmm", "addmv", "addr", "amax", "amin", "angle",
    "argmax", "argmin", "asin", "asinh", "atan", "atan2", "atanh", "baddbmm", "bitwise_and", "bitwise_not",
    "bitwise_or", "bitwise_xor", "bmm", "cat", "ceil", "clamp", "clamp_max", "clamp_min", "clip", "cos", "cosh",
    "cross", "cumprod", "cumsum", "deg2rad", "diag", "diff", "digamma", "div", "divide", "dot", "eq", "erf", "erfc",
    "erfinv", "exp", "exp2", "expm1", "floor", "floor_divide", "fmax", "fmin", "fmod", "frac", "gather", "gcd",
    "ge", "greater", "greater_equal", "gt", "heaviside", "hypot", "index_select", "inner", "isin", "kron", "lcm",
    "le", "lerp", "less", "less_equal", "lgamma", "log", "log10", "log1p", "log2", "logaddexp", "logaddexp2",
    "logcumsumexp", "logical_and", "logical_not", "logical_or", "logical_xor", "logit", "logsumexp", "lt",
    "masked_select", "matmul", "maximum", "mean", "minimum", "mm", "msort", "mul", "multiply", "mv", "nan_to_num",
    "nanmean", "nansum", "ne", "neg", "negative", "nextafter", "not_equal", "outer", "polygamma", "pow", "prod",
    "rad2deg", "reciprocal", "remainder", "round", "rsqrt", "searchsorted", "sgn", "sigmoid", "sign", "signbit",
    "sin", "sinc", "sinh", "sqrt", "square", "stack", "std", "sub", "subtract", "sum", "take", "tan", "tanh",
    "tensordot", "tril", "triu", "true_divide", "trunc", "var", "vstack", "hstack", "dstack", "where", "xlogy",
    # out=(values, indices)
    "cummax", "cummin", "kthvalue", "max", "median", "min", "mode", "sort", "topk")
_OUT_FACTORIES = ("arange", "empty", "eye", "full", "linspace", "logspace", "ones", "rand", "randint", "randn",
                  "randperm", "zeros")


def _takes_out(fn):
    try:
        return "out" in inspect.signature(fn).parameters
    except (TypeError, ValueError):   # a pybind11 builtin: no Python signature, and no out=
        return False


# ---- Tensor-only arguments ----

# ops whose 1.13 schema takes only tensors for these arguments (no Scalar overload): op -> the names, in order
_TENSOR_ARGUMENTS = {
    "maximum": ("input", "other"), "minimum": ("input", "other"), "hypot": ("input", "other"),
    "atan2": ("input", "other"), "logaddexp": ("input", "other"), "logaddexp2": ("input", "other"),
    "logical_and": ("input", "other"), "logical_or": ("input", "other"), "logical_xor": ("input", "other"),
    "allclose": ("input", "other"), "kron": ("input", "other"), "cross": ("input", "other"),
    "matmul": ("input", "other"), "mm": ("input", "mat2"), "bmm": ("input", "mat2"), "mv": ("input", "vec"),
    "dot": ("input", "tensor"), "outer": ("input", "vec2"), "inner": ("input", "other"),
    "ldexp": ("input", "other"), "fmax": ("input", "other"), "fmin": ("input", "other"),
    "isclose": ("input", "other"), "nextafter": ("input", "other")}
# the comparisons take (Tensor, Tensor) or (Tensor, Number): a number first matches neither
_COMPARISONS = ("eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less", "less_equal", "not_equal",
                "fmod", "copysign")


def _comparing_a_tensor(fn, name):
    @functools.wraps(fn)
    def op(input, *args, **kwargs):
        if not isinstance(input, Tensor) and args and isinstance(args[0], Tensor):
            raise TypeError(f"{name}() received an invalid combination of arguments - got "
                            f"({type(input).__name__}, Tensor), but expected one of:\n"
                            f" * (Tensor input, Tensor other, *, Tensor out)\n"
                            f" * (Tensor input, Number other, *, Tensor out)\n")
        return fn(input, *args, **kwargs)
    return op


def _requiring_tensors(fn, name, names, own_tensor):
    """fn, refusing a non-tensor in `names` with the parser's TypeError (positions count from 1 after the
    method's own tensor)."""
    @functools.wraps(fn)
    def op(*args, **kwargs):
        for position, value in enumerate(args[:len(names)]):
            if not isinstance(value, Tensor):
                raise TypeError(f"{name}(): argument '{names[position]}' (position {position + 1 - own_tensor}) "
                                f"must be Tensor, not {type(value).__name__}")
        return fn(*args, **kwargs)
    return op



def install(module, tensor_class):
    for name in _COMPARISONS:
        function = getattr(module, name, None)
        if function is not None:
            setattr(module, name, _comparing_a_tensor(function, name))
    for name, names in _TENSOR_ARGUMENTS.items():
        function = getattr(module, name, None)
        if function is not None:
            setattr(module, name, _requiring_tensors(function, name, names, 0))
        method = getattr(tensor_class, name, None)
        if method is not None:
            setattr(tensor_class, name, _requiring_tensors(method, name, names, 1))
    for name, names in _VARARG_NAMES_OF_METHODS.items():
        setattr(tensor_class, name, _accepting_vararg_names(getattr(tensor_class, name), names, 1))
    for name, names in _VARARG_NAMES_OF_FUNCTIONS.items():
        setattr(module, name, _accepting_vararg_names(getattr(module, name), names, 0))
    for name in _METHODS:
        method = getattr(tensor_class, name)
        if not getattr(method, "_numpy_names", False):
            setattr(tensor_class, name, _accepting_numpy_names(method))
    for name in _FUNCTIONS:
        function = getattr(module, name)
        if not getattr(function, "_numpy_names", False):
            setattr(module, name, _accepting_numpy_names(function))
    for names, factory in ((_OUT_FUNCTIONS, False), (_OUT_FACTORIES, True)):
        for name in names:
            function = getattr(module, name, None)
            if function is not None and not _takes_out(function):
                setattr(module, name, _accepting_out(function, name, factory))
