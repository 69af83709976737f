"""torch.optim.ASGD: 1.13's groups, checks, state ('step', 'eta' and 'mu', float32 0-dim tensors, and 'ax', the
running average) and _single_tensor_asgd's update, in its floating-point order."""
import math

import tinyddp
from tinyddp.optim import _functional as F
from tinyddp.optim.optimizer import Optimizer


class ASGD(Optimizer):
    _group_defaults = (("foreach", None), ("maximize", False))
    _tensor_state_keys = ("step", "eta", "mu")

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, foreach=None,
                 maximize=False):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize)
        super().__init__(params, defaults)

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        with tinyddp.no_grad():
            for group in self.param_groups:
                lr, lambd, alpha = group["lr"], group["lambd"], group["alpha"]
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    state = self.state[p]
                    if len(state) == 0:
                        state["step"] = tinyddp.tensor(0.0)
                        state["eta"] = tinyddp.tensor(lr)
                        state["mu"] = tinyddp.tensor(1.0)
                        state["ax"] = tinyddp.zeros_like(p)
                    grad = -p.grad if group["maximize"] else p.grad
                    step_t, eta, mu, ax = state["step"], state["eta"], state["mu"], state["ax"]
                    step_t += 1
                    step = step_t.item()
                    if group["weight_decay"] != 0:
                        grad = F.add(grad, p, group["weight_decay"])
                    p.mul_(1 - lambd * eta.item())
                    F.add_(p, grad, -eta.item())
                    if mu.item() != 1:
                        ax.add_(p.sub(ax).mul(mu))
                    else:
                        ax.copy_(p)
                    eta.copy_(tinyddp.tensor(lr / math.pow((1 + lambd * lr * step), alpha)))
                    mu.copy_(tinyddp.tensor(1 / max(1, step - group["t0"])))
        return loss
