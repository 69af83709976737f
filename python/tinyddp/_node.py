"""One autograd node with PyTorch 1.13's name for an op tinyddp composes of engine ops (engine/ops/composite.h).

    return recorded("NormBackward1", [input], lambda: (input * input).sum(dim, keepdim).sqrt())

The composition runs as it always did; its graph is then hidden behind one node named as 1.13's, whose
next_functions are the edges of `inputs` (the tensors 1.13's node has edges to, in its order; None or a number
where 1.13's has no edge to a tensor), so `y.grad_fn` and a walk of `next_functions` show 1.13's graph, while
values and gradients, second derivatives included, stay the composition's.
"""
from tinyddp import _C


def recorded(name, inputs, fn, saved_outputs=(), saved_inputs=()):
    """fn() (a tensor, or a tuple of tensors and Nones, a return_types tuple included) recorded as one node named
    `name` with edges to `inputs`; fn's result as is where no graph is recorded (no grad mode, or no input that
    requires grad). saved_outputs, saved_inputs: the indices of the results and inputs 1.13's node saves (an
    in-place change of one before the backward raises 1.13's error)."""
    inputs = [t if isinstance(t, _C.Tensor) else None for t in inputs]
    if not _C.is_grad_enabled() or not any(t is not None and t.requires_grad for t in inputs):
        return fn()
    form = []

    def run():
        out = fn()
        form.append(type(out))
        return out
    out = _C._composite(name, inputs, run, list(saved_outputs), list(saved_inputs))
    if isinstance(out, tuple) and form[0] is not tuple:
        out = form[0](out)
    return out
