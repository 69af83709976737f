"""tinyddp: a PyTorch-1.13-shaped front end over tinyddp's C++ engine, reducer and models.

A script restricted to the subset in docs/python.md runs with ``import tinyddp as torch``. The compiled half
is ``tinyddp._C``; the modules here give it PyTorch's names, one Python module per PyTorch module.
"""
from tinyddp import _C
from tinyddp._device import device
from tinyddp._tensor import (Size, Tensor, abs, argmax, bool, cat, dtype, empty, eq, exp, flatten, float32,
                             float64, from_numpy, full, ge, gt, int64, is_tensor, le, log, logical_not, lt,
                             matmul, max, maximum, mean, ne, ones, ones_like, rand, randint, randn, randperm, relu,
                             sigmoid, sqrt, squeeze, stack, sum, tanh, tensor, unsqueeze, zeros, zeros_like)
from tinyddp._tensor_ops import (allclose, arange, argmin, argsort, chunk, clamp, equal, eye, floor_divide, gather,
                                 isclose, linspace, log_softmax, minimum, norm, permute, remainder, softmax, sort,
                                 split, std, topk, tril, triu, var, where)
from tinyddp._tensor_ops import clamp as clip, min  # noqa: A004
from tinyddp import _indexing  # noqa: F401  (Tensor.__getitem__ and __setitem__)
from tinyddp.random import Generator, get_rng_state, initial_seed, manual_seed, seed, set_rng_state
from tinyddp.autograd.grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
# they import the names above
from tinyddp import autograd, cuda, futures, nn, optim, distributed, multiprocessing, random, utils  # noqa: E402

float = float32    # PyTorch's aliases  # noqa: A001
double = float64
long = int64

__all__ = ["abs", "allclose", "arange", "argmax", "argmin", "argsort", "autograd", "bool", "cat", "chunk", "clamp",
           "clip", "cuda", "device", "distributed", "double", "dtype", "empty", "enable_grad", "eq", "equal", "exp",
           "eye", "flatten", "float", "float32", "float64", "floor_divide", "from_numpy", "full", "futures", "gather",
           "ge", "Generator", "get_rng_state", "gt", "initial_seed", "int64", "is_grad_enabled", "is_tensor",
           "isclose", "le", "linspace", "log", "log_softmax", "logical_not", "long", "lt", "manual_seed", "matmul",
           "max", "maximum", "mean", "min", "minimum", "multiprocessing", "ne", "nn", "no_grad", "norm", "ones",
           "ones_like", "optim", "permute", "rand", "randint", "randn", "random", "randperm", "relu", "remainder",
           "seed", "set_grad_enabled", "set_rng_state", "sigmoid", "Size", "softmax", "sort", "split", "sqrt",
           "squeeze", "stack", "std", "sum", "tanh", "Tensor", "tensor", "topk", "tril", "triu", "unsqueeze", "utils",
           "var", "where", "zeros", "zeros_like"]
