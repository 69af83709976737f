"""How an api_more case runs, shared by gen_api_more.py (with torch) and tests/python/test_api_more.py (with
tinyddp): snippet_cases.py's run; results encoded as below, warnings as (category name, message).
"""
from snippet_cases import backward_and_leaf_grads, execute, flatten


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
    scope, caught = execute(torch_module, code)
    outs = flatten(scope["out"])
    return (outs, backward_and_leaf_grads(torch_module, outs, scope),
            [[w.category.__name__, str(w.message)] for w in caught])
