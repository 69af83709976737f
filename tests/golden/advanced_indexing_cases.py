"""How an advanced_indexing case runs, shared by gen_advanced_indexing.py (with torch) and
tests/python/test_advanced_indexing.py (with tinyddp), so both sides do exactly the same thing with a snippet.

A snippet builds its inputs (literals, or randn after manual_seed, which tinyddp reproduces bitwise), indexes or
assigns, and binds `out` (a tensor, a Python value, or a tuple of them). When some output requires grad, loss = sum over
those outputs o of (o * c).sum(), c = ((k % 7) - 3) / 2 for element k (so every element's gradient differs), is
backpropagated, and the .grad of every leaf local that requires grad is recorded.
"""
import math
import warnings

import numpy as np


def coefficient(n):
    return [((k % 7) - 3) / 2 for k in range(n)]


def flatten(out):
    """The case's result as a flat list (tuples opened recursively)."""
    if isinstance(out, tuple):
        return [v for item in out for v in flatten(item)]
    return [out]


def run(torch_module, code):
    """Runs a case's snippet with `torch_module` as `torch`: (its results, flattened; the gradients of its leaves by
    name after the backward above; the texts of the warnings it raised), or raises the case's error."""
    scope = {"torch": torch_module, "math": math, "np": np}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exec(code, scope)
    outs = flatten(scope["out"])
    floating = [o for o in outs if isinstance(o, torch_module.Tensor) and o.requires_grad]
    grads = {}
    if floating:
        loss = None
        for o in floating:
            c = torch_module.tensor(coefficient(o.numel()), dtype=o.dtype).reshape(o.shape)
            term = (o * c).sum()
            loss = term if loss is None else loss + term
        loss.backward()
        for name, v in sorted(scope.items()):
            if isinstance(v, torch_module.Tensor) and v.is_leaf and v.grad is not None:
                grads[name] = v.grad
    return outs, grads, [str(w.message) for w in caught]
