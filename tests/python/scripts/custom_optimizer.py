# A hand-written optimizer as research code writes them: Adam's moments with lerp_ and addcmul_, the step with
# addcdiv_, a sign-based (Lion-like) variant, decoupled weight decay, and a per-parameter state dict, training a
# small regression MLP.
import math

import tinyddp as torch
import tinyddp.nn as nn


class HandAdam(torch.optim.Optimizer):
    def __init__(self, params, lr=1e-2, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay))

    @torch.no_grad()
    def step(self):
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if not state:
                    state["step"] = 0
                    state["exp_avg"] = torch.zeros_like(p)
                    state["exp_avg_sq"] = torch.zeros_like(p)
                state["step"] += 1
                if group["weight_decay"]:
                    p.mul_(1 - group["lr"] * group["weight_decay"])
                state["exp_avg"].lerp_(p.grad, 1 - beta1)
                state["exp_avg_sq"].mul_(beta2).addcmul_(p.grad, p.grad, value=1 - beta2)
                bias1 = 1 - beta1 ** state["step"]
                bias2 = 1 - beta2 ** state["step"]
                denom = (state["exp_avg_sq"].sqrt() / math.sqrt(bias2)).add_(group["eps"])
                p.addcdiv_(state["exp_avg"], denom, value=-group["lr"] / bias1)


class HandLion(torch.optim.Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.99)):
        super().__init__(params, dict(lr=lr, betas=betas))

    @torch.no_grad()
    def step(self):
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            for p in group["params"]:
                state = self.state[p]
                if "m" not in state:
                    state["m"] = torch.zeros_like(p)
                update = state["m"].lerp(p.grad, 1 - beta1).sign()
                p.add_(update, alpha=-group["lr"])
                state["m"].lerp_(p.grad, 1 - beta2)


def train(opt_cls, **kwargs):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))
    x = torch.randn(32, 3)
    y = (x * torch.tensor([1.5, -2.0, 0.5])).sum(1, keepdim=True) + 0.1
    opt = opt_cls(model.parameters(), **kwargs)
    for step in range(6):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        print(opt_cls.__name__, step, f"{loss.item():.4f}")
    state = opt.state[model[0].weight]
    print(sorted(state))
    return model


model = train(HandAdam, lr=0.05, weight_decay=0.01)
print(model[2].weight.detach())
model = train(HandLion, lr=0.01)
print(model[2].bias.detach())

a = torch.tensor([1.0, 2.0, 3.0])
b = torch.tensor([4.0, 5.0, 6.0])
print(torch.addcmul(a, a, b, value=0.5), torch.addcdiv(a, a, b, value=2), torch.lerp(a, b, 0.25))
print(a.clone().addcmul_(b, b), a.clone().addcdiv_(b, a), a.clone().lerp_(b, torch.tensor([0.0, 0.5, 1.0])))
