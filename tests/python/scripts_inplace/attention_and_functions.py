# In-place writes users make around attention and custom Functions: a causal mask written with masked_fill_
# (-inf) before softmax, dropout(inplace=True) after it (1.13's error: the softmax's output is saved), padding
# rows zeroed with setitem, a custom in-place Function with ctx.mark_dirty in a model, the same Function without
# mark_dirty, and a Function returning its input whose output is then written in place.
import tinyddp as torch
import tinyddp.nn as nn
import tinyddp.nn.functional as F


class ScaleInPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        ctx.scale = scale
        x.mul_(scale)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.scale, None


class Forgetful(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x.mul_(2)
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad * 2


class Identity(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad


torch.manual_seed(0)
q_proj, k_proj, v_proj = nn.Linear(4, 4), nn.Linear(4, 4), nn.Linear(4, 4)
x = torch.randn(2, 3, 4)
q, k, v = q_proj(x), k_proj(x), v_proj(x)
scores = q @ k.transpose(-2, -1) / 2.0
mask = torch.ones(3, 3).triu(1).bool()
scores.masked_fill_(mask, float("-inf"))
print("scores", scores.grad_fn.name(), scores._version)
attn = scores.softmax(-1)
out = attn @ v
out[:, 2] = 0.0   # a padded position
out.sum().backward()
print("attn row", [f"{a:.4f}" for a in attn[0, 1].tolist()])
print("q grad", [f"{g:.4f}" for g in q_proj.weight.grad.view(-1).tolist()[:6]])

attn = (q_proj(x) @ k_proj(x).transpose(-2, -1)).softmax(-1)
F.dropout(attn, 0.1, training=True, inplace=True)
try:
    attn.sum().backward()
except RuntimeError as e:
    print("dropout error:", e)

lin = nn.Linear(4, 4)
h = lin(x)
h2 = ScaleInPlace.apply(h, 3.0)
print("mark_dirty:", h2 is h, h.grad_fn.name(), h._version)
h.sum().backward()
print("lin grad", [f"{g:.4f}" for g in lin.bias.grad.tolist()])

h = lin(x)
r = Forgetful.apply(h)
print("no mark_dirty:", r is h, r._is_view(), r.grad_fn.name(), h.grad_fn.name(), h._version)

r = Identity.apply(lin(x))
try:
    r.relu_()
except RuntimeError as e:
    print("view error:", e)
leaf = torch.ones(3, requires_grad=True)
try:
    ScaleInPlace.apply(leaf, 2.0)
except RuntimeError as e:
    print("leaf error:", e)
