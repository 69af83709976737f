"""How a tensor_math case runs, shared by gen_tensor_math.py (with torch) and tests/python/test_tensor_math.py
(with tinyddp), so both sides do exactly the same thing with a case's snippet."""
import math
import warnings


def coefficient(n):
    return [((k % 7) - 3) / 2 for k in range(n)]


def flatten(out):
    """The case's result as a flat list (tuples, return_types included, opened recursively)."""
    if isinstance(out, tuple):
        return [v for item in out for v in flatten(item)]
    return [out]


def run(torch_module, code):
    """Runs a case's snippet with `torch_module` as `torch`: (its results, flattened; the gradients of its leaves by
    name, after a backward of sum(result * coefficient) over the results that require grad; the texts of the
    warnings it raised), or raises the case's error."""
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
    return outs, grads, [str(w.message) for w in caught]
