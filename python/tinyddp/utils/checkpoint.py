"""torch.utils.checkpoint.checkpoint over engine/autograd/checkpoint.h: the segment's activations are not kept
but recomputed in the backward, in 1.13's two forms (reentrant, the default, and use_reentrant=False), with
PyTorch's warning "None of the inputs have requires_grad=True. Gradients will be None" as a UserWarning."""
from tinyddp import _C
from tinyddp._tensor import Tensor
from tinyddp.utils._pytree import flatten


def checkpoint(function, *args, use_reentrant=True, **kwargs):
    """Runs function(*args) without saving its intermediate values; the backward runs it again to get them.

    `function` is any callable (a Module, a lambda) taking the arguments and returning a tensor or a (nested)
    tuple of tensors. Arguments that are not tensors are passed through unchanged, to the recomputation too.
    Keywords: preserve_rng_state=True (replay this thread's random stream in the recomputation); with
    use_reentrant=False, the others are passed to `function`, as 1.13 does."""
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
    layout = []   # the first call's (the forward's) output layout; the recomputation's tensors go in the same order

    def run(*tensors):
        full = list(args)
        for i, t in zip(positions, tensors):
            full[i] = t
        flat = []
        rebuild = flatten(function(*full, **kwargs), flat)
        if not layout:
            layout.append(rebuild)
        return flat

    flat = _C._checkpoint(run, [args[i] for i in positions], bool(use_reentrant), bool(preserve))
    return layout[0](flat)


def checkpoint_sequential(functions, segments, input, **kwargs):
    """Runs `functions` (an nn.Sequential or a list of callables) in order on `input`, in `segments` chunks of
    len(functions) // segments: every chunk but the last under (reentrant) checkpoint, the rest, the last chunk,
    as usual. Keywords: preserve_rng_state only (1.13's checkpoint_sequential has no use_reentrant)."""
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    from tinyddp.nn.modules.container import Sequential
    if isinstance(functions, Sequential):
        functions = list(functions.children())

    def chunk(first, last):   # functions[first..last], inclusive
        def forward(x):
            for f in functions[first:last + 1]:
                x = f(x)
            return x
        return forward

    size = len(functions) // segments
    last = -1
    for first in range(0, size * (segments - 1), size):
        last = first + size - 1
        input = checkpoint(chunk(first, last), input, preserve_rng_state=preserve)
    return chunk(last + 1, len(functions) - 1)(input)


__all__ = ["checkpoint", "checkpoint_sequential"]
