"""How an api_more case runs, shared by gen_api_more.py (with torch) and tests/python/test_api_more.py (with
tinyddp), so both sides do exactly the same thing with a case's snippet.

A case is a snippet run with `torch` bound to the library under test. It binds `out`: a tensor, a Python value or
a tuple of them (opened recursively). When some result requires grad, loss = sum over those results o of
(o * c).sum(), c = ((k % 7) - 3) / 2 for element k, is backpropagated and the .grad of every leaf local is
recorded. Warnings are recorded as (category name, message); an exception the snippet lets out is the case's
error (its type and message).
"""
import math
import warnings


def coefficient(n):
    return [((k % 7) - 3) / 2 for k in range(n)]


def flatten(out):
    """The case's result as a flat list (tuples, return_types included, opened recursively)."""
    if isinstance(out, tuple):
        return [v for item in out for v in flatten(item)]
    return [out]


def encode(torch_module, value):
    """A result as JSON: a tensor by shape, dtype, values, requires_grad, grad_fn's name and is_inference; a
    torch.Size or a Python value as itself; anything else (dtypes, finfo, ...) by its repr."""
    if isinstance(value, torch_module.Tensor):
        return {"shape": list(value.shape), "dtype": str(value.dtype), "requires_grad": value.requires_grad,
                "grad_fn": value.grad_fn.name() if value.grad_fn is not None else None,
                "is_inference": value.is_inference(), "values": value.detach().reshape(-1).tolist()}
    if isinstance(value, torch_module.Size):
        return {"py": list(value)}
    if value is None or isinstance(value, (bool, int, float, str)) or (
            isinstance(value, (list, dict)) and _plain(value)):
        return {"py": value}
    return {"repr": repr(value)}


def _plain(value):
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_plain(v) for v in value)
    return value is None or isinstance(value, (bool, int, float, str))


def run(torch_module, code):
    """Runs a case's snippet with `torch_module` as `torch`: (its results, flattened; the gradients of its leaves by
    name; the warnings it raised as [category, message]), or raises the case's error."""
    scope = {"torch": torch_module, "math": math}
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
    return outs, grads, [[w.category.__name__, str(w.message)] for w in caught]
