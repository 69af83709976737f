"""The tensors inside a nested output (a tensor, tuple, list, namedtuple or dict), flattened depth first, and the
way back: what DDP's unused-parameter search and checkpoint's C++ side take is a flat list of tensors."""
from tinyddp._tensor import Tensor


def flatten(obj, out):
    """Appends the tensors of `obj` to `out`, depth first; returns a function that rebuilds `obj` from a list
    with the same layout (other leaves are kept as they are)."""
    if isinstance(obj, Tensor):
        i = len(out)
        out.append(obj)
        return lambda flat: flat[i]
    if isinstance(obj, (tuple, list)):
        builders = [flatten(x, out) for x in obj]
        kind = type(obj)
        if isinstance(obj, tuple) and hasattr(obj, "_fields"):   # a namedtuple
            return lambda flat: kind(*[b(flat) for b in builders])
        return lambda flat: kind(b(flat) for b in builders)
    if isinstance(obj, dict):
        builders = [(k, flatten(v, out)) for k, v in obj.items()]
        kind = type(obj)
        return lambda flat: kind((k, b(flat)) for k, b in builders)
    return lambda flat: obj
