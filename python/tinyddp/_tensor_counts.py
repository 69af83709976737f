"""torch.bincount and torch.isin, as PyTorch 1.13's (functions of torch/__init__.py's _VariableFunctions; bincount
is also a Tensor method).

bincount counts on the host, in the order 1.13's CPU kernel adds (one add per element, in the weights' dtype:
float32 sums are float32's, int64 weights count in float64 as 1.13's); its result has no history (1.13 records a
node whose backward is not implemented). isin compares every element with every test element with the engine's
eq (NaN is in nothing), so its memory is elements x test elements.
"""
import numbers

from tinyddp import _tensor
from tinyddp._tensor import Tensor

_C10_NAMES = {"float32": "Float", "float64": "Double", "int64": "Long", "bool": "Bool"}


def bincount(input, weights=None, minlength=0):
    """How often each value 0..max(input) occurs in the 1-D int64 `input` (at least minlength bins), or the sum of
    `weights` over the elements holding each value."""
    import numpy as np
    if input.dtype is not _tensor.int64:
        raise RuntimeError(f"\"bincount_cpu\" not implemented for '{_C10_NAMES[str(input.dtype)[6:]]}'")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    values = input.detach().numpy()
    if input.dim() != 1 or (values.size and values.min() < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is not None and (weights.dim() != 1 or weights.shape[0] != input.shape[0]):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    bins = max(int(values.max()) + 1 if values.size else 0, int(minlength))
    if weights is None:
        return _tensor.from_numpy(np.bincount(values, minlength=bins).astype(np.int64))
    out_dtype = weights.dtype if weights.is_floating_point() else _tensor.float64
    sums = np.zeros(bins, dtype=np.float32 if out_dtype is _tensor.float32 else np.float64)
    np.add.at(sums, values, weights.detach().numpy().astype(sums.dtype))   # in element order, in the sum's dtype
    return _tensor.from_numpy(sums)


def _isin_operand(value):
    return value if isinstance(value, Tensor) else _tensor.tensor(value)


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """A bool tensor of elements' shape: whether each element equals some test element."""
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError(
            f"isin() received an invalid combination of arguments - got ({type(elements).__name__}, "
            f"{type(test_elements).__name__}), but expected one of:\n"
            " * (Tensor elements, Tensor test_elements, *, bool assume_unique, bool invert, Tensor out)\n"
            " * (Number element, Tensor test_elements, *, bool assume_unique, bool invert, Tensor out)\n"
            " * (Tensor elements, Number test_element, *, bool assume_unique, bool invert, Tensor out)\n")
    for value in (elements, test_elements):
        if not isinstance(value, (Tensor, numbers.Number)):
            raise TypeError(f"isin(): argument 'elements' must be Tensor, not {type(value).__name__}")
    elements, test_elements = _isin_operand(elements), _isin_operand(test_elements)
    for t in (elements, test_elements):
        if t.dtype is _tensor.bool:
            raise RuntimeError("Unsupported input type encountered for isin(): Bool")
    test = test_elements.detach().reshape(-1)
    found = (elements.detach().unsqueeze(-1) == test).any(-1)
    return ~found if invert else found


Tensor.bincount = bincount
