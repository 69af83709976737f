"""How a tensor_math case runs, shared by gen_tensor_math.py (with torch) and tests/python/test_tensor_math.py
(with tinyddp): snippet_cases.py's run, results as they are, warnings by their text."""
from snippet_cases import backward_and_leaf_grads, execute, flatten


def run(torch_module, code):
    """Runs a case's snippet with `torch_module` as `torch`: (its results, flattened; the gradients of its leaves by
    name; the texts of the warnings it raised), or raises the case's error."""
    scope, caught = execute(torch_module, code)
    outs = flatten(scope["out"])
    return outs, backward_and_leaf_grads(torch_module, outs, scope), [str(w.message) for w in caught]
