# The nn.Module API that model-surgery code leans on: load_state_dict(strict=False) and its _IncompatibleKeys,
# size-mismatch and missing-key errors, state_dict(prefix, keep_vars), a shared submodule in named_modules and
# parameters (deduplicated), Sequential built from an OrderedDict with slicing / negative indexing / append /
# insert / extend / del, ModuleList and ParameterList edits, add_module / register_module / register_parameter(None),
# extra_repr, attribute errors, zero_grad(set_to_none=...), requires_grad_ on a module, and to(dtype).
from collections import OrderedDict

import tinyddp as torch
import tinyddp.nn as nn
import tinyddp.nn.functional as F

torch.manual_seed(0)


class Scale(nn.Module):
    def __init__(self, n, init=1.0):
        super().__init__()
        self.n = n
        self.weight = nn.Parameter(torch.full((n,), init))
        self.register_parameter("bias", None)

    def forward(self, x):
        return x * self.weight

    def extra_repr(self):
        return f"n={self.n}, bias={self.bias is not None}"


shared = nn.Linear(4, 4)
model = nn.Sequential(OrderedDict([("inp", shared), ("act", nn.ReLU()), ("again", shared), ("scale", Scale(4))]))
print(model)
print("modules:", [n for n, _ in model.named_modules()])
print("modules with duplicates:", len(list(model.named_modules(remove_duplicate=False))))
print("params:", [n for n, _ in model.named_parameters()], sum(p.numel() for p in model.parameters()))
print("state_dict keys:", list(model.state_dict().keys()))
print("prefixed:", list(model.state_dict(prefix="net.").keys())[:2])
print("keep_vars:", type(model.state_dict(keep_vars=True)["scale.weight"]).__name__,
      type(model.state_dict()["scale.weight"]).__name__, model.state_dict()["scale.weight"].requires_grad)
print("slice:", model[1:3], "last:", model[-1])
print("by name:", model.inp is model.again, model.scale.bias)

seq = nn.Sequential(nn.Linear(3, 5), nn.Tanh())
seq.append(nn.Linear(5, 2))
seq.insert(1, nn.LayerNorm(5))
seq.extend([nn.Softmax(dim=-1)])
print(seq)
del seq[1]
print("after del:", [type(m).__name__ for m in seq], len(seq))
seq.add_module("out", nn.Identity())
seq.register_module("extra", nn.Dropout(0.1))
print("names:", [n for n, _ in seq.named_children()])
print("sums to one:", torch.allclose(seq[:4](torch.randn(2, 3)).sum(-1), torch.ones(2)))
popped = seq.pop(-1)
seq[0] = nn.Linear(3, 5, bias=False)
twice = nn.Sequential(nn.ReLU(), nn.Tanh()) * 2
both = seq[:2] + nn.Sequential(nn.Sigmoid())
del both[0:2]
print("pop/setitem:", popped, seq[0], "dir has digits:", any(k.isdigit() for k in dir(seq)))
print("mul:", [n for n, _ in twice.named_children()], twice[0] is twice[2], "add+del:", both)
for bad in (lambda: seq + [nn.ReLU()], lambda: twice * 0, lambda: seq.insert(9, nn.ReLU())):
    try:
        bad()
    except (ValueError, IndexError) as e:
        print(type(e).__name__ + ":", e)

ml = nn.ModuleList([nn.Linear(2, 2) for _ in range(2)])
ml.append(nn.ReLU())
ml.insert(0, nn.Identity())
ml += nn.ModuleList([nn.Sigmoid()])
print("ModuleList:", [type(m).__name__ for m in ml], ml[-2])
pl = nn.ParameterList([nn.Parameter(torch.zeros(2))])
pl.append(nn.Parameter(torch.ones(3)))
pl.extend([nn.Parameter(torch.ones(1))])
print("ParameterList:", len(pl), [tuple(p.shape) for p in pl], sum(p.numel() for p in pl.parameters()))

src = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
dst = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2), nn.Linear(2, 1))
result = dst.load_state_dict(src.state_dict(), strict=False)
print(result)
print("missing:", result.missing_keys, "unexpected:", result.unexpected_keys)
print("copied:", torch.equal(dst[0].weight, src[0].weight))
sd = src.state_dict()
sd["extra.weight"] = torch.zeros(1)
try:
    src.load_state_dict(sd)
except RuntimeError as e:
    print("RuntimeError:", e)
print(src.load_state_dict(sd, strict=False))
try:
    nn.Linear(4, 2).load_state_dict(nn.Linear(4, 3).state_dict())
except RuntimeError as e:
    print("RuntimeError:", e)
try:
    dst.load_state_dict(src.state_dict())
except RuntimeError as e:
    print("RuntimeError:", e)
try:
    model.missing_layer
except AttributeError as e:
    print("AttributeError:", e)
try:
    model.scale.register_parameter("weight2", torch.zeros(2))
except TypeError as e:
    print("TypeError:", e)
try:
    nn.Sequential(nn.ReLU())[3]
except IndexError as e:
    print("IndexError:", e)

x = torch.randn(6, 4)
F.mse_loss(model(x), torch.zeros(6, 4)).backward()
print("shared grad: %.5f" % shared.weight.grad.abs().sum().item())
model.zero_grad(set_to_none=False)
print("zeroed:", shared.weight.grad.abs().sum().item(), model.scale.weight.grad)
model.zero_grad()
print("none:", shared.weight.grad)
model.requires_grad_(False)
print("frozen:", [p.requires_grad for p in model.parameters()])
model.requires_grad_()
d = model.to(torch.float64)
print("to(float64):", d is model, model.inp.weight.dtype, model(x.double()).dtype)
model.float()
print("float:", model.scale.weight.dtype, model.scale.weight.requires_grad, type(model.scale.weight).__name__)
