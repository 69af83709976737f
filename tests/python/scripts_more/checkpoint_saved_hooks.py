# Memory-saving autograd tools side by side: torch.utils.checkpoint with use_reentrant=True and False (same
# gradients, how many times the block's forward runs, the warning when no input requires grad), saved-tensor
# hooks that count and log what the graph keeps, and detect_anomaly finding the op that made a NaN.
import warnings

import tinyddp as torch
import tinyddp.nn as nn
from tinyddp.utils.checkpoint import checkpoint

torch.manual_seed(0)

calls = {"n": 0}


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin1 = nn.Linear(4, 8)
        self.lin2 = nn.Linear(8, 4)

    def forward(self, x):
        calls["n"] += 1
        return x + self.lin2(torch.tanh(self.lin1(x)))


block = Block()
inp = torch.randn(3, 4, requires_grad=True)
ref = block(inp).pow(2).sum()
ref.backward()
ref_grads = [p.grad.clone() for p in block.parameters()] + [inp.grad.clone()]
print("plain forward calls:", calls["n"], "loss %.4f" % ref.item())
for reentrant in (True, False):
    block.zero_grad()
    inp.grad = None
    calls["n"] = 0
    out = checkpoint(block, inp, use_reentrant=reentrant)
    print(f"use_reentrant={reentrant}: out grad_fn {type(out.grad_fn).__name__}, calls after forward {calls['n']}")
    out.pow(2).sum().backward()
    grads = [p.grad for p in block.parameters()] + [inp.grad]
    print("  calls after backward", calls["n"], "same grads:", all(torch.allclose(a, b) for a, b in zip(grads, ref_grads)))

frozen = torch.randn(3, 4)
block.zero_grad()
out = checkpoint(block, frozen, use_reentrant=True)
print("reentrant, input without grad: requires_grad", out.requires_grad)
out = checkpoint(block, frozen, use_reentrant=False)
print("non-reentrant, input without grad: requires_grad", out.requires_grad)
out.sum().backward()
print("lin1 grad set:", block.lin1.weight.grad is not None)

saved = []


def pack(t):
    saved.append(tuple(t.shape))
    return t


def unpack(t):
    return t


x = torch.randn(5, requires_grad=True)
with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
    y = (x.exp() * x).sin().sum()
print("saved shapes:", saved)
y.backward()
print("x.grad:", [round(v, 4) for v in x.grad.tolist()])

unpacked = []


def pack_scaled(t):
    return ("packed", t.detach().clone())


def unpack_scaled(p):
    unpacked.append(p[0])
    return p[1]


with torch.autograd.graph.saved_tensors_hooks(pack_scaled, unpack_scaled):
    w = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    z = (w * w).sum()
z.backward()
print("w.grad:", w.grad, "unpacked:", len(unpacked))

with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    with torch.autograd.detect_anomaly():
        a = torch.tensor([1.0, 0.0, 4.0], requires_grad=True)
        b = a.sqrt() * 0
        try:
            (b / b.detach().clamp(min=0)).sum().backward()
        except RuntimeError as e:
            print("RuntimeError:", e)
print(len(caught) > 0, str(caught[0].message)[:40])
print(torch.is_anomaly_enabled())
with torch.autograd.set_detect_anomaly(True):
    print("inside:", torch.is_anomaly_enabled())
c = torch.tensor([0.0, 1.0], requires_grad=True)
(c.sqrt()).sum().backward()
print("without anomaly mode:", c.grad)
