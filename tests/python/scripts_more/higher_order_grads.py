# Higher-order derivatives with create_graph: d2y/dx2 of a polynomial by hand, a Hessian-vector product by double
# backward checked against torch.autograd.functional.hessian, a WGAN-GP gradient penalty on a tiny critic
# trained a few steps, allow_unused and grad_outputs, and the errors a missing create_graph gives.
import tinyddp as torch
import tinyddp.nn as nn
from tinyddp.autograd.functional import hessian

torch.manual_seed(0)

# y = x^3 - 2x^2 at x = 2: dy/dx = 3x^2 - 4x = 4, d2y/dx2 = 6x - 4 = 8, d3y/dx3 = 6
x = torch.tensor(2.0, requires_grad=True)
y = x ** 3 - 2 * x ** 2
(dy,) = torch.autograd.grad(y, x, create_graph=True)
(d2y,) = torch.autograd.grad(dy, x, create_graph=True)
(d3y,) = torch.autograd.grad(d2y, x)
print("derivatives:", dy.item(), d2y.item(), d3y.item())
print("dy:", dy, "d2y:", d2y)
print("grad_fn of dy:", type(dy.grad_fn).__name__, "requires_grad:", dy.requires_grad, d3y.requires_grad)

# backward(create_graph=True) leaves a .grad with history
x.grad = None
y = x ** 3
y.backward(create_graph=True)
print("x.grad:", x.grad, x.grad.requires_grad)
g = x.grad
x.grad = None
g.backward()
print("second derivative via backward:", x.grad)


def f(w):
    return (w.sin() * w.pow(2)).sum() + (w[0] * w[1]) ** 2


w = torch.tensor([0.3, -1.2, 2.0], requires_grad=True)
v = torch.tensor([1.0, 0.5, -1.0])
(gw,) = torch.autograd.grad(f(w), w, create_graph=True)
(hv,) = torch.autograd.grad(gw, w, grad_outputs=v, retain_graph=True)
print("gradient:", [round(t, 4) for t in gw.tolist()])
print("Hv:", [round(t, 4) for t in hv.tolist()])
H = hessian(f, w.detach())
print("H @ v:", [round(t, 4) for t in (H @ v).tolist()], torch.allclose(H @ v, hv, atol=1e-5))
(gv,) = torch.autograd.grad(gw @ v, w)
print("same via grad of g.v:", torch.allclose(gv, hv))

# WGAN-GP: penalize (||d critic / d x_hat|| - 1)^2 at points between real and fake samples
critic = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 1))
opt = torch.optim.Adam(critic.parameters(), lr=1e-2, betas=(0.5, 0.9))
real = torch.randn(8, 2) + torch.tensor([2.0, 0.0])
fake = torch.randn(8, 2)
for step in range(4):
    alpha = torch.rand(8, 1)
    x_hat = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
    scores = critic(x_hat)
    grads = torch.autograd.grad(outputs=scores, inputs=x_hat, grad_outputs=torch.ones_like(scores),
                                create_graph=True, retain_graph=True)[0]
    penalty = ((grads.norm(2, dim=1) - 1) ** 2).mean()
    loss = critic(fake).mean() - critic(real).mean() + 10 * penalty
    opt.zero_grad()
    loss.backward()
    gnorm = sum(p.grad.norm() ** 2 for p in critic.parameters()) ** 0.5
    opt.step()
    print(f"step {step}: loss {loss.item():.4f} penalty {penalty.item():.4f} grad norm {gnorm.item():.4f}")
print("penalty grad_fn:", type(penalty.grad_fn).__name__, type(grads.grad_fn).__name__)

a = torch.tensor([1.0, 2.0], requires_grad=True)
b = torch.tensor([3.0, 4.0], requires_grad=True)
out = (a * 2).sum()
ga, gb = torch.autograd.grad(out, [a, b], allow_unused=True, retain_graph=True)
print("allow_unused:", ga, gb)
try:
    torch.autograd.grad(out, [a, b], retain_graph=True)
except RuntimeError as e:
    print("RuntimeError:", e)
(g1,) = torch.autograd.grad(out, a)
print("first-order grad:", g1, g1.requires_grad, g1.grad_fn)
try:
    torch.autograd.grad(g1.sum(), a)
except RuntimeError as e:
    print("RuntimeError:", e)
try:
    torch.autograd.grad(a * b, a)
except RuntimeError as e:
    print("RuntimeError:", e)
(gm,) = torch.autograd.grad(a * b, a, grad_outputs=torch.tensor([1.0, 10.0]))
print("vector-Jacobian product:", gm)
