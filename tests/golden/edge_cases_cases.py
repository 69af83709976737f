"""How an edge_cases case runs, shared by gen_edge_cases.py (with torch) and tests/python/test_edge_cases.py (with
tinyddp): snippet_cases.py's run, `out` opened through lists too; each result described by its type name and, for a
tensor, its shape, dtype, values, requires_grad and grad_fn name; the backward's error recorded as the gradients.
"""
from snippet_cases import backward_and_leaf_grads, execute, flatten


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
    """Runs a case's snippet with `torch_module` as `torch`: (its results, flattened (lists too) and described; the
    kind of its `out` (the class name of a return_types tuple, else the Python type); the gradients of its leaves
    by name, or {"error": [type, text]} when the backward raises; the warnings' texts), or raises the case's error."""
    scope, caught = execute(torch_module, code)
    out = scope["out"]
    outs = flatten(out, lists=True)
    described = [describe(torch_module, o) for o in outs]   # before the backward, as the goldens were recorded
    try:
        grads = {name: {"shape": list(g.shape), "values": g.reshape(-1).tolist()}
                 for name, g in backward_and_leaf_grads(torch_module, outs, scope).items()}
    except Exception as e:  # noqa: BLE001  (the backward's own error is part of the case)
        grads = {"error": [type(e).__name__, str(e)]}
    return described, type(out).__name__, grads, [str(w.message) for w in caught]
