"""How an edge_cases case runs, shared by gen_edge_cases.py (with torch) and tests/python/test_edge_cases.py (with
tinyddp), so both sides do exactly the same thing with a case's snippet.

A case is a snippet run with `torch` bound to the library under test (and `math`); it binds `out` (a tensor, a
Python value, or a tuple/list of them, torch.return_types included). Each result is described by its type name and,
for a tensor, its shape, dtype, values, requires_grad and grad_fn name. When results require grad, loss = sum over
floating results o that require grad of (o * c).sum(), c = ((k % 7) - 3) / 2 for element k, is backpropagated and
the .grad of every leaf local that requires grad is recorded (or the backward's error). Warnings are recorded too.
"""
import math
import warnings


def coefficient(n):
    return [((k % 7) - 3) / 2 for k in range(n)]


def flatten(out):
    """The results as a flat list: tuples and lists (return_types included) opened recursively."""
    if isinstance(out, (tuple, list)) and not isinstance(out, str):
        return [v for item in out for v in flatten(item)]
    return [out]


def describe(torch_module, value):
    """A result as JSON-able data: tensors by shape, dtype, values, requires_grad and grad_fn's name; torch.Size as
    a list; other Python values as they are (with their type's name)."""
    if isinstance(value, torch_module.Tensor):
        gf = value.grad_fn   # its class name in 1.13 (what scripts print); tinyddp's nodes give it as name()
        name = None if gf is None else (gf.name() if type(gf).__name__ == "Node" else type(gf).__name__)
        return {"shape": list(value.shape), "dtype": str(value.dtype), "values": value.detach().reshape(-1).tolist(),
                "requires_grad": value.requires_grad, "grad_fn": name}
    if isinstance(value, torch_module.Size):
        return {"size": list(value)}
    return {"py": value, "type": type(value).__name__}


def run(torch_module, code):
    """Runs a case's snippet with `torch_module` as `torch`: (its results, flattened and described; the kind of
    its `out` (the class name of a return_types tuple, else the Python type); the gradients of its leaves by name,
    or {"error": [type, text]} when the backward raises; the warnings' texts), or raises the case's error."""
    scope = {"torch": torch_module, "math": math}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exec(code, scope)
    out = scope["out"]
    kind = type(out).__name__
    outs = flatten(out)
    described = [describe(torch_module, o) for o in outs]
    floating = [o for o in outs if isinstance(o, torch_module.Tensor) and o.requires_grad]
    grads = {}
    if floating:
        try:
            loss = None
            for o in floating:
                c = torch_module.tensor(coefficient(o.numel()), dtype=o.dtype).reshape(list(o.shape))
                term = (o * c).sum()
                loss = term if loss is None else loss + term
            loss.backward()
            for name, v in sorted(scope.items()):
                if isinstance(v, torch_module.Tensor) and v.is_leaf and v.grad is not None:
                    grads[name] = {"shape": list(v.grad.shape), "values": v.grad.reshape(-1).tolist()}
        except Exception as e:  # noqa: BLE001  (the backward's own error is part of the case)
            grads = {"error": [type(e).__name__, str(e)]}
    return described, kind, grads, [str(w.message) for w in caught]
