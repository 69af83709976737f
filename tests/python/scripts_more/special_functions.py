# Special functions scripts use (priors, VAEs, Bayesian layers, truncated-normal init): erfc, lgamma, digamma and
# polygamma(1), erfinv with first and second derivatives, their poles and infinities, torch.special's names,
# nn.init.trunc_normal_ (through erfinv), and Normal.icdf.
import tinyddp as torch
import tinyddp.nn as nn
from tinyddp import special
torch.manual_seed(0)
x = torch.tensor([-3.5, 0.3, 1.0, 2.5, 7.0, 30.0], requires_grad=True)
for name in ("erfc", "lgamma", "digamma"):
    y = getattr(torch, name)(x)
    g, = torch.autograd.grad(y.sum(), x)
    print(name, [f"{v:.5f}" for v in y.tolist()], [f"{v:.5f}" for v in g.tolist()], y.grad_fn.name())
p = torch.tensor([-0.9, -0.5, 0.0, 0.3, 0.8], requires_grad=True)
y = torch.erfinv(p)
g, = torch.autograd.grad(y.sum(), p, create_graph=True)
h, = torch.autograd.grad(g.sum(), p)
print("erfinv", [f"{v:.5f}" for v in y.tolist()], [f"{v:.4f}" for v in g.tolist()],
      [f"{v:.3f}" for v in h.tolist()], y.grad_fn.name())
print(torch.erfinv(torch.tensor([1.0, -1.0, 1.5])), torch.lgamma(torch.tensor([0.0, -1.0, -2.5])),
      torch.digamma(torch.tensor([0.0, -0.0, -2.0, -2.5])))
print(torch.polygamma(1, torch.tensor([0.5, 3.0, -1.5])), x.polygamma(0)[:2], torch.tensor([2.0]).lgamma_())
print(special.expit(torch.tensor([0.0, 2.0])), special.gammaln(torch.tensor([5.0])), special.psi(torch.tensor([1.0])),
      special.erfc(torch.tensor([0.5])))
print(special.logit(torch.tensor([0.25])), special.xlogy(torch.tensor([0.0, 2.0]), torch.tensor([0.0, 3.0])),
      special.log_softmax(torch.tensor([1.0, 2.0]), 0))
print(special.logsumexp(torch.tensor([[1.0, 2.0]]), 1), special.round(torch.tensor([2.5, 3.5])),
      special.exp2(torch.tensor([3.0])))
w = torch.empty(1000)
nn.init.trunc_normal_(w, std=0.02)
print(f"{w.sum().item():.6f} {w.abs().max().item():.6f}", w[:3])
print(torch.distributions.Normal(0., 1.).icdf(torch.tensor([0.1, 0.5, 0.975])))
