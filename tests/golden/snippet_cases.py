"""The one way a snippet case runs, for the snippet goldens (tensor_math, advanced_indexing, api_more, edge_cases):
their gen_*.py run it with torch and their tests/python/test_*.py with tinyddp, through the *_cases.py module of
each, which only chooses how results and warnings are written down.

A snippet is Python run with `torch` (and `math`, and what the case module adds) bound to the library under test;
it binds `out`: a tensor, a Python value, or a tuple of them (lists too where a module says so), opened
recursively. When some results require grad, loss = sum over those results o of (o * c).sum(), with
c = ((k % 7) - 3) / 2 for element k (so every element's gradient differs), is backpropagated, and the .grad of
every leaf the snippet's scope names is recorded. An exception the snippet lets out is the case's error.
"""
import builtins
import math
import warnings


def coefficient(n):
    return [((k % 7) - 3) / 2 for k in range(n)]


def flatten(out, lists=False):
    """The results as a flat list: tuples (return_types included), and lists when `lists`, opened recursively."""
    if isinstance(out, tuple) or (lists and isinstance(out, list)):
        return [v for item in out for v in flatten(item, lists)]
    return [out]


def execute(torch_module, code, **extra):
    """Runs the snippet with torch_module as `torch` (and math, and `extra`): (its scope, the warnings it raised,
    every one recorded). Raises what the snippet raises."""
    scope = {"torch": torch_module, "math": math, "__builtins__": _builtins_importing_torch_as(torch_module), **extra}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exec(code, scope)
    return scope, caught


def _builtins_importing_torch_as(torch_module):
    """The builtins with an __import__ that reads `torch` and `torch.x.y` in a snippet's import statements as
    torch_module and its submodules, so `import torch.multiprocessing as mp` imports the library under test."""
    def import_(name, globals=None, locals=None, fromlist=(), level=0):
        if level == 0 and (name == "torch" or name.startswith("torch.")):
            name = torch_module.__name__ + name[len("torch"):]
        return builtins.__import__(name, globals, locals, fromlist, level)
    return dict(vars(builtins), __import__=import_)


def backward_and_leaf_grads(torch_module, outs, scope):
    """The backward of sum((o * c).sum()) over the results o that require grad, then {leaf name: .grad} for the
    scope's leaves that got one ({} when no result requires grad). Raises what the backward raises."""
    floating = [o for o in outs if isinstance(o, torch_module.Tensor) and o.requires_grad]
    if not floating:
        return {}
    loss = None
    for o in floating:
        c = torch_module.tensor(coefficient(o.numel()), dtype=o.dtype).reshape(list(o.shape))
        term = (o * c).sum()
        loss = term if loss is None else loss + term
    loss.backward()
    return {name: v.grad for name, v in sorted(scope.items())
            if isinstance(v, torch_module.Tensor) and v.is_leaf and v.grad is not None}
