# A float64 model: model.double(), float64 data, a finite-difference check of one gradient, parameter surgery
# through .data (EMA weights, re-initialization), and model.float() back.

import tinyddp as torch
import tinyddp.nn as nn

torch.manual_seed(4)
model = nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 1)).double()
print([p.dtype for p in model.parameters()], model[0].weight.is_leaf)
x = torch.randn(4, 3, dtype=torch.float64)
y = torch.randn(4, 1, dtype=torch.float64)
loss = nn.functional.mse_loss(model(x), y)
loss.backward()
w = model[0].weight
analytic = w.grad[1, 2].item()
eps = 1e-6
with torch.no_grad():
    w[1, 2] += eps
    up = nn.functional.mse_loss(model(x), y).item()
    w[1, 2] -= 2 * eps
    down = nn.functional.mse_loss(model(x), y).item()
    w[1, 2] += eps
print(f"{analytic:.8f} {(up - down) / (2 * eps):.8f} {abs(analytic - (up - down) / (2 * eps)) < 1e-7}")
opt = torch.optim.SGD(model.parameters(), lr=0.1)
ema = [p.detach().clone() for p in model.parameters()]
for step in range(3):
    opt.zero_grad()
    nn.functional.mse_loss(model(x), y).backward()
    opt.step()
    for e, p in zip(ema, model.parameters()):
        e.mul_(0.9).add_(p.detach(), alpha=0.1)
print([f"{e.sum().item():.8f}" for e in ema])
model[2].bias.data = torch.zeros(1, dtype=torch.float64)
print(model[2].bias, model[2].bias.requires_grad)
model[2].weight.data.fill_(0.25)
print(f"{model(x).sum().item():.8f}")
model.float()
print(model[0].weight.dtype, model[0].weight.grad.dtype, model(x.float()).dtype)
print(model[2].weight)
