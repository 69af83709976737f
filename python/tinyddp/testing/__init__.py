"""torch.testing.assert_close, as 1.13 compares: None, bools, Python numbers and tensors (or what as_tensor takes
of directly related types), recursing into sequences and mappings (keys sorted); attribute checks (shape,
layout, stride, device, dtype), then isclose with the dtypes' default tolerances, and 1.13's messages (mismatch
statistics, "The failure occurred for item [...]", msg= as a string or a callable)."""
import cmath
import collections.abc

import tinyddp as torch

__all__ = ["assert_close"]

# {dtype: (rtol, atol)}; every other dtype compares exactly
_DTYPE_PRECISIONS = {torch.float16: (0.001, 1e-5), torch.bfloat16: (0.016, 1e-5), torch.float32: (1.3e-6, 1e-5),
                     torch.float64: (1e-7, 1e-7)}
_NUMBER_DTYPES = {int: torch.int64, float: torch.float64}


class _Unsupported(Exception):
    pass


class _ErrorMeta(Exception):
    def __init__(self, type, msg, id=()):  # noqa: A002
        super().__init__(msg)
        self.type, self.msg, self.id = type, msg, id

    def to_error(self, msg=None):
        if not isinstance(msg, str):
            generated = self.msg
            if self.id:
                generated += f"\n\nThe failure occurred for item {''.join(str([item]) for item in self.id)}"
            msg = msg(generated) if callable(msg) else generated
        return self.type(msg)


def _type_repr(obj):
    cls = type(obj)
    if isinstance(obj, torch.Tensor) and cls is torch.Tensor:
        return "<class 'torch.Tensor'>"
    module = cls.__module__
    if module.startswith("tinyddp"):
        module = "torch" + module[len("tinyddp"):]
    return f"<class '{cls.__qualname__}'>" if module == "builtins" else f"<class '{module}.{cls.__qualname__}'>"


def _tolerances(dtypes, rtol, atol, id):
    if (rtol is None) ^ (atol is None):
        raise _ErrorMeta(ValueError, "Both 'rtol' and 'atol' must be either specified or omitted, but got no "
                                     f"{'rtol' if rtol is None else 'atol'}.", id)
    if rtol is not None:
        return rtol, atol
    rtols, atols = zip(*[_DTYPE_PRECISIONS.get(d, (0.0, 0.0)) for d in dtypes])
    return max(rtols), max(atols)


def _mismatch_msg(default_identifier, abs_diff, atol, rel_diff, rtol, extra=None, abs_idx=None, rel_idx=None):
    equality = rtol == 0 and atol == 0

    def diff_msg(kind, diff, idx, tol):
        msg = f"{kind.title()} difference: {diff}" if idx is None else f"Greatest {kind} difference: {diff} at index {idx}"
        return msg + ("" if equality else f" (up to {tol} allowed)") + "\n"
    msg = f"{default_identifier} are not {'equal' if equality else 'close'}!\n\n"
    if extra:
        msg += f"{extra.strip()}\n"
    msg += diff_msg("absolute", abs_diff, abs_idx, atol) + diff_msg("relative", rel_diff, rel_idx, rtol)
    return msg.strip()


def _scalar_msg(actual, expected, rtol, atol):
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return _mismatch_msg("Scalars", abs_diff, atol, rel_diff, rtol)


def _tensor_msg(actual, expected, mismatches, rtol, atol):
    def unravel(flat):
        index = []
        for size in reversed(mismatches.shape):
            flat, mod = divmod(flat, size)
            index.append(mod)
        return tuple(reversed(index))
    total, n = int(mismatches.sum().item()), mismatches.numel()
    extra = f"Mismatched elements: {total} / {n} ({total / n:.1%})"
    a, b = actual.flatten(), expected.flatten()
    matches = ~mismatches.flatten()
    abs_diff = (a - b).abs()
    abs_diff[matches] = 0
    max_abs, abs_idx = torch.max(abs_diff, 0)
    rel_diff = abs_diff / b.abs()
    rel_diff[matches] = 0
    max_rel, rel_idx = torch.max(rel_diff, 0)
    return _mismatch_msg("Tensor-likes", max_abs.item(), atol, max_rel.item(), rtol, extra,
                         unravel(int(abs_idx)), unravel(int(rel_idx)))


def _compare_tensors(actual, expected, id, allow_subclasses, rtol, atol, equal_nan, check_dtype, check_stride):
    if not (isinstance(actual, type(expected)) or isinstance(expected, type(actual))):
        raise _Unsupported()
    if not allow_subclasses and type(actual) is not type(expected):
        raise _Unsupported()
    try:
        actual, expected = [t if isinstance(t, torch.Tensor) else torch.as_tensor(t) for t in (actual, expected)]
    except Exception:
        raise _Unsupported()
    rtol, atol = _tolerances([actual.dtype, expected.dtype], rtol, atol, id)

    def mismatch(name, a, b):
        raise _ErrorMeta(AssertionError, f"The values for attribute '{name}' do not match: {a} != {b}.", id)
    if actual.shape != expected.shape:
        mismatch("shape", actual.shape, expected.shape)
    if check_stride and actual.stride() != expected.stride():
        mismatch("stride()", actual.stride(), expected.stride())
    if check_dtype and actual.dtype != expected.dtype:
        mismatch("dtype", actual.dtype, expected.dtype)
    if actual.dtype != expected.dtype:   # promoted to the wider of tinyddp's dtypes
        order = [torch.bool, torch.int64, torch.float32, torch.float64]
        dtype = max(actual.dtype, expected.dtype, key=order.index)
        actual, expected = actual.to(dtype), expected.to(dtype)
    # compared in the widest dtype of the category, as 1.13's _promote_for_comparison (bool counts as integral)
    wide = torch.float64 if actual.is_floating_point() else torch.int64
    actual, expected = actual.detach().to(wide), expected.detach().to(wide)
    matches = torch.isclose(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan)
    if bool(matches.all()):
        return
    if actual.shape == torch.Size([]):
        msg = _scalar_msg(actual.item(), expected.item(), rtol, atol)
    else:
        msg = _tensor_msg(actual, expected, ~matches, rtol, atol)
    raise _ErrorMeta(AssertionError, msg, id)


def _compare_numbers(actual, expected, id, rtol, atol, equal_nan, check_dtype):
    numbers = (int, float)
    if not all(isinstance(x, numbers) and not isinstance(x, bool) for x in (actual, expected)):
        raise _Unsupported()
    rtol, atol = _tolerances([_NUMBER_DTYPES[type(x)] for x in (actual, expected)], rtol, atol, id)
    if check_dtype and type(actual) is not type(expected):
        raise _ErrorMeta(AssertionError, f"The (d)types do not match: {type(actual)} != {type(expected)}.", id)
    if actual == expected:
        return
    if equal_nan and cmath.isnan(actual) and cmath.isnan(expected):
        return
    abs_diff = abs(actual - expected)
    if cmath.isfinite(abs_diff) and abs_diff <= atol + rtol * abs(expected):
        return
    raise _ErrorMeta(AssertionError, _scalar_msg(actual, expected, rtol, atol), id)


def _pairs(actual, expected, id, options):
    """The leaf comparisons (closures), 1.13's originate_pairs: sequences by index, mappings by sorted key."""
    seq = collections.abc.Sequence
    if isinstance(actual, seq) and not isinstance(actual, str) and isinstance(expected, seq) \
            and not isinstance(expected, str):
        if len(actual) != len(expected):
            raise _ErrorMeta(AssertionError, f"The length of the sequences mismatch: {len(actual)} != {len(expected)}",
                             id)
        return [p for i in range(len(actual)) for p in _pairs(actual[i], expected[i], (*id, i), options)]
    mapping = collections.abc.Mapping
    if isinstance(actual, mapping) and isinstance(expected, mapping):
        a_keys, e_keys = set(actual.keys()), set(expected.keys())
        if a_keys != e_keys:
            raise _ErrorMeta(AssertionError, "The keys of the mappings do not match:\n"
                                             f"Missing keys in the actual mapping: {sorted(e_keys - a_keys)}\n"
                                             f"Additional keys in the actual mapping: {sorted(a_keys - e_keys)}", id)
        keys = a_keys
        try:
            keys = sorted(keys)
        except Exception:
            pass
        return [p for k in keys for p in _pairs(actual[k], expected[k], (*id, k), options)]
    if actual is None or expected is None:
        def none_pair():
            if not (actual is None and expected is None):
                raise _ErrorMeta(AssertionError, f"None mismatch: {actual} is not {expected}", id)
        return [none_pair]
    if isinstance(actual, bool) and isinstance(expected, bool):
        def bool_pair():
            if actual is not expected:
                raise _ErrorMeta(AssertionError, f"Booleans mismatch: {actual} is not {expected}", id)
        return [bool_pair]
    for compare, keys in ((_compare_numbers, ("rtol", "atol", "equal_nan", "check_dtype")),
                          (_compare_tensors, ("allow_subclasses", "rtol", "atol", "equal_nan", "check_dtype",
                                              "check_stride"))):
        kwargs = {k: options[k] for k in keys}
        try:
            compare(actual, expected, id, **kwargs)
            return [lambda: None]
        except _Unsupported:
            continue
        except _ErrorMeta as error:
            if error.type is ValueError:   # bad tolerances are raised at construction, before any comparison
                raise

            def failing(error=error):
                raise error
            return [failing]
    raise _ErrorMeta(TypeError, f"No comparison pair was able to handle inputs of type {_type_repr(actual)} and "
                                f"{_type_repr(expected)}.", id)


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None, equal_nan=False, check_device=True,
                 check_dtype=True, check_layout=True, check_stride=False, msg=None):
    options = dict(allow_subclasses=allow_subclasses, rtol=rtol, atol=atol, equal_nan=equal_nan,
                   check_dtype=check_dtype, check_stride=check_stride)
    try:
        pairs = _pairs(actual, expected, (), options)
    except _ErrorMeta as error_meta:
        raise error_meta.to_error(msg) from None
    for pair in pairs:
        try:
            pair()
        except _ErrorMeta as error_meta:
            raise error_meta.to_error(msg) from None
