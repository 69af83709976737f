"""repr of tensors in PyTorch's layout (torch/_tensor_str.py with its default print options): precision 4,
line width 80, summarized with 3 edge items above 1000 elements."""
import math

PRECISION, LINEWIDTH, THRESHOLD, EDGEITEMS = 4, 80, 1000, 3
SCI_MODE = None   # None: chosen per tensor; True/False: forced (set_printoptions(sci_mode=...))


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None):
    """torch.set_printoptions: the options above, or a profile's ("default", "short", "full"), as 1.13's;
    the options not given keep their values, except sci_mode, which is always set."""
    global PRECISION, LINEWIDTH, THRESHOLD, EDGEITEMS, SCI_MODE
    if profile is not None:
        PRECISION, THRESHOLD, EDGEITEMS, LINEWIDTH = {"default": (4, 1000, 3, 80), "short": (2, 1000, 2, 80),
                                                      "full": (4, math.inf, 3, 80)}[profile]
    if precision is not None:
        PRECISION = precision
    if threshold is not None:
        THRESHOLD = threshold
    if edgeitems is not None:
        EDGEITEMS = edgeitems
    if linewidth is not None:
        LINEWIDTH = linewidth
    SCI_MODE = sci_mode


class _Formatter:
    """One width and one notation for all shown elements, chosen as PyTorch chooses them."""

    def __init__(self, values, floating):
        self.floating, self.int_mode, self.sci_mode = floating, True, False
        if floating:
            finite = [v for v in values if math.isfinite(v)]
            nonzero = [abs(v) for v in finite if v != 0]
            self.int_mode = all(v == math.ceil(v) for v in finite)
            if nonzero:
                lo, hi = min(nonzero), max(nonzero)
                if self.int_mode:
                    self.sci_mode = hi / lo > 1000.0 or hi > 1.0e8
                else:
                    self.sci_mode = hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4
        # The width is the widest nonzero finite element's (all elements' for integers), at least 1; a wider
        # nan, inf or zero is not padded, as PyTorch's.
        shown = [v for v in values if math.isfinite(v) and v != 0] if floating else values
        self.width = max((len(self._plain(v)) for v in shown), default=1)
        # A forced notation changes how elements print, not the width chosen above (as PyTorch's), and only
        # where some element is nonzero and finite.
        if SCI_MODE is not None and floating and shown:
            self.sci_mode = SCI_MODE

    def _plain(self, v):
        if not self.floating:
            return str(v)
        if self.sci_mode:
            return f"{v:.{PRECISION}e}"
        if self.int_mode:
            return f"{v:.0f}" + ("" if math.isinf(v) or math.isnan(v) else ".")
        return f"{v:.{PRECISION}f}"

    def format(self, v):
        s = self._plain(v)
        return " " * (self.width - len(s)) + s


def _summarized(nested, dims, summarize):
    """The elements that will be shown, flattened."""
    if dims == 0:
        return [nested]
    items = nested
    if summarize and len(nested) > 2 * EDGEITEMS:
        items = nested[:EDGEITEMS] + nested[-EDGEITEMS:]
    out = []
    for item in items:
        out.extend(_summarized(item, dims - 1, summarize))
    return out


def _vector(values, indent, summarize, fmt):
    per_line = max(1, int(math.floor((LINEWIDTH - indent) / (fmt.width + 2))))
    if summarize and len(values) > 2 * EDGEITEMS:
        shown = [fmt.format(v) for v in values[:EDGEITEMS]] + [" ..."] + [fmt.format(v) for v in values[-EDGEITEMS:]]
    else:
        shown = [fmt.format(v) for v in values]
    lines = [", ".join(shown[i:i + per_line]) for i in range(0, len(shown), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _nested(nested, dims, indent, summarize, fmt):
    if dims == 1:
        return _vector(nested, indent, summarize, fmt)
    if summarize and len(nested) > 2 * EDGEITEMS:
        slices = ([_nested(x, dims - 1, indent + 1, summarize, fmt) for x in nested[:EDGEITEMS]] + ["..."] +
                  [_nested(x, dims - 1, indent + 1, summarize, fmt) for x in nested[-EDGEITEMS:]])
    else:
        slices = [_nested(x, dims - 1, indent + 1, summarize, fmt) for x in nested]
    return "[" + ("," + "\n" * (dims - 1) + " " * (indent + 1)).join(slices) + "]"


def tensor_repr(t, prefix="tensor("):
    dtype = t.dtype
    suffixes = []
    if t.numel() == 0:
        body = "[]"
        if t.dim() != 1:
            suffixes.append("size=" + str(tuple(t.shape)))
        if repr(dtype) != "torch.float32":
            suffixes.append("dtype=" + repr(dtype))
    else:
        nested = t.detach().tolist()
        summarize = t.numel() > THRESHOLD
        fmt = _Formatter(_summarized(nested, t.dim(), summarize), dtype.is_floating_point)
        body = fmt.format(nested) if t.dim() == 0 else _nested(nested, t.dim(), len(prefix), summarize, fmt)
        if repr(dtype) not in ("torch.float32", "torch.int64", "torch.bool"):
            suffixes.append("dtype=" + repr(dtype))
    if t.grad_fn is not None:
        # the node's type name, as 1.13's repr (name() spells C++-only nodes with their namespace)
        suffixes.append(f"grad_fn=<{t.grad_fn.name().replace('torch::autograd::', '')}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    out = prefix + body
    last_line = len(out) - out.rfind("\n") + 1
    for suffix in suffixes:
        if last_line + len(suffix) + 2 > LINEWIDTH:
            out += ",\n" + " " * len(prefix) + suffix
            last_line = len(prefix) + len(suffix)
        else:
            out += ", " + suffix
            last_line += len(suffix) + 2
    return out + ")"
