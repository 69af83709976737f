# Analysis code around a trained model: torch.autograd.functional's jacobian of a model's outputs with respect
# to its inputs (input sensitivity), the hessian of a loss in a few parameters, hvp / vhp for a Newton step on a
# quadratic, vjp and jvp, plus the small helpers such code uses: fill_diagonal_ to regularise a covariance,
# unique_consecutive for run-length encoding predictions, sgn / frac, the layout flags, and an old script's
# torch.set_default_tensor_type(torch.FloatTensor).
import tinyddp as torch
import tinyddp.nn as nn
import tinyddp.nn.functional as F
from tinyddp.autograd.functional import hessian, hvp, jacobian, jvp, vhp, vjp

torch.set_default_tensor_type(torch.FloatTensor)
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 2))
X = torch.randn(20, 3)
Y = (X[:, :1] - X[:, 1:2] > 0).long().squeeze(1)
opt = torch.optim.SGD(model.parameters(), lr=0.5)
for _ in range(30):
    opt.zero_grad()
    F.cross_entropy(model(X), Y).backward()
    opt.step()
print("trained loss: %.5f" % F.cross_entropy(model(X), Y).item())

x0 = X[0]
J = jacobian(lambda inp: model(inp).softmax(-1), x0)
print("jacobian:", tuple(J.shape), J.requires_grad)
print(J)
print("rows sum to zero:", torch.allclose(J.sum(0), torch.zeros(3), atol=1e-6))
Jb = jacobian(lambda a, b: (model(a) * b).sum(-1), (X[:2], torch.ones(2, 2)))
print("tuple jacobian:", [tuple(j.shape) for j in Jb])

w = model[2].weight.detach().clone()


def loss_in_w(w):
    return F.cross_entropy(F.linear(torch.tanh(model[0](X)), w, model[2].bias.detach()), Y)


H = hessian(loss_in_w, w)
print("hessian:", tuple(H.shape), "symmetric:", torch.allclose(H.reshape(16, 16), H.reshape(16, 16).T, atol=1e-6))
print("hessian diag[:4]:", H.reshape(16, 16).diagonal()[:4])

A = torch.tensor([[3.0, 1.0], [1.0, 2.0]])
b = torch.tensor([1.0, -1.0])


def quad(v):
    return 0.5 * v @ A @ v - b @ v


v0 = torch.zeros(2)
value, hv = hvp(quad, v0, torch.tensor([1.0, 0.0]))
print("hvp:", value, hv)
_, vh = vhp(quad, v0, torch.tensor([0.0, 1.0]))
print("vhp:", vh)
step = torch.stack([hvp(quad, v0, e)[1] for e in torch.eye(2)])
print("hessian from hvp:", step)
h11, h12, h22 = step[0, 0], step[0, 1], step[1, 1]
g = A @ v0 - b
newton = v0 - torch.stack([h22 * g[0] - h12 * g[1], h11 * g[1] - h12 * g[0]]) / (h11 * h22 - h12 * h12)
print("newton step:", newton, "gradient there:", A @ newton - b)
out, vj = vjp(lambda t: t.exp() * 2, torch.tensor([0.0, 1.0]), torch.tensor([1.0, 0.5]))
print("vjp:", out, vj)
out, jv = jvp(lambda t: t.exp() * 2, torch.tensor([0.0, 1.0]), torch.tensor([1.0, 0.5]))
print("jvp:", out, jv)
try:
    hessian(lambda t: model(t), x0)
except RuntimeError as e:
    print("RuntimeError:", e)
try:
    vjp(lambda t: model(t), x0)
except RuntimeError as e:
    print("RuntimeError:", e)

feats = torch.tanh(model[0](X)).detach()
cov = (feats - feats.mean(0)).T @ (feats - feats.mean(0)) / (feats.shape[0] - 1)
reg = cov.clone().fill_diagonal_(1.0)
print("cov diag before/after:", cov.diagonal()[:3], reg.diagonal()[:3])
print("off-diagonal kept:", torch.equal(reg - torch.diag(reg.diagonal()), cov - torch.diag(cov.diagonal())))
tall = torch.zeros(7, 3).fill_diagonal_(2.0, wrap=True)
print(tall)
preds = model(X).argmax(1)
values, counts = torch.unique_consecutive(preds, return_counts=True)
print("runs:", list(zip(values.tolist(), counts.tolist())))
vals, inverse = torch.unique_consecutive(torch.tensor([[1, 2], [1, 2], [0, 0], [1, 2]]), dim=0, return_inverse=True)
print(vals, inverse)
pairs = torch.stack([preds, Y], dim=1)
uniq, inv, cnt = torch.unique(pairs, dim=0, return_inverse=True, return_counts=True)
print("(pred, label) pairs:", uniq.tolist(), cnt.tolist(), inv[:6].tolist())
z = torch.tensor([-2.5, -0.0, 0.75, 3.0])
print(z.sgn(), z.frac(), torch.frac(z), z.sign())
print(z.layout, z.is_sparse, torch.strided)
