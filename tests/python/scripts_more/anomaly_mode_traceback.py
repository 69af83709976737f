# Anomaly mode as a user reaches for it after "one of the variables needed for gradient computation has been
# modified by an inplace operation ... Hint: enable anomaly detection": the warning that names the failing node
# and the forward line that made it, the hint that changes with the mode, grad_fn.metadata["traceback_"], a NaN
# caught at its node, an error raised in a tensor hook, an in-place op inside a Module's forward, and a node made
# before the mode was turned on. The warnings carry file paths, which differ between libraries and machines, so
# the script catches them itself and prints their first line, the frames that are in this file (line and code)
# and their last line.
import os
import warnings

import tinyddp as torch
import tinyddp.nn as nn

SCRIPT = os.path.basename(__file__)


def frames_here(text):
    """(line, code) of the stack frames in this file, in order; the library's own frames differ and are left out."""
    lines = text.split("\n")
    out = []
    for i, line in enumerate(lines):
        if line.startswith('  File "') and os.path.basename(line.split('"')[1]) == SCRIPT:
            number = int(line.split(", line ")[1].split(",")[0])
            out.append((number, lines[i + 1].strip() if i + 1 < len(lines) else ""))
    return out


def show(caught):
    for w in caught:
        text = str(w.message)
        print(" ", w.category.__name__ + ":", text.split("\n")[0])
        if "\n" in text:
            print("    frames here:", frames_here(text))
            print("    ends:", text.rsplit("\n", 1)[1])


def backward_reporting(loss, title):
    print(title)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            loss.backward()
            print("  no error")
        except (RuntimeError, ValueError) as e:
            print("  " + type(e).__name__ + ":", e)
    show(caught)


torch.manual_seed(0)
x = torch.randn(4, requires_grad=True)

# 1. The version-counter error, with the mode on: the warning points at the line that made the failing node.
with torch.autograd.set_detect_anomaly(True):
    s = x.sigmoid()
    s.mul_(2)
    backward_reporting(s.sum(), "in-place on a saved output, anomaly mode on")

# The same mistake with the mode off: the hint asks for anomaly mode, and nothing is warned.
s = x.sigmoid()
s.mul_(2)
backward_reporting(s.sum(), "the same, anomaly mode off")

# 2. grad_fn.metadata keeps the stack of the node's creation while the mode is on (the in-place op makes a new node).
with torch.autograd.set_detect_anomaly(True):
    y = x * 2
    z = torch.exp(y)
    z.add_(1)
print("metadata keys:", sorted(z.grad_fn.metadata.keys()), "| made with the mode off:", (x * 3).grad_fn.metadata)
print("z.grad_fn:", z.grad_fn.name(), frames_here("".join(z.grad_fn.metadata["traceback_"])))
print("y.grad_fn:", y.grad_fn.name(), frames_here("".join(y.grad_fn.metadata["traceback_"])))

# 3. A NaN caught at the node that produced it, under detect_anomaly() (which warns as it starts).
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    with torch.autograd.detect_anomaly():
        a = torch.tensor([4.0, 0.0, 1.0], requires_grad=True)
        r = a.sqrt() * 0
        try:
            (r / r).sum().backward()
        except RuntimeError as e:
            print("NaN: RuntimeError:", e)
show(caught)


# 4. An in-place op inside a Module's forward: the stack runs through the script's call and the forward's line.
class Gate(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 3)

    def forward(self, inp):
        g = torch.sigmoid(self.lin(inp))
        g.mul_(0.5)
        return g


def run_gate(model, inp):
    return model(inp)


with torch.autograd.set_detect_anomaly(True):
    out = run_gate(Gate(), torch.randn(2, 4))
    backward_reporting(out.sum(), "in-place inside a Module's forward")

# 5. An error raised by a tensor hook is reported at the node the hook belongs to.
def bad_hook(grad):
    raise ValueError("the hook refuses this gradient")


with torch.autograd.set_detect_anomaly(True):
    b = x * 3
    b.register_hook(bad_hook)
    backward_reporting(b.sum(), "a hook that raises")

# 6. A node made before the mode was on has no stack to show.
s = x.sigmoid()
s.mul_(2)
with torch.autograd.set_detect_anomaly(True):
    backward_reporting(s.sum(), "graph made before the mode was on")
print("anomaly mode at the end:", torch.is_anomaly_enabled())
