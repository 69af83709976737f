"""torch.optim.RMSprop: 1.13's groups, checks, state ('step' an int, 'square_avg', 'momentum_buffer' with
momentum > 0, 'grad_avg' when centered) and _single_tensor_rmsprop's update, in its floating-point order
(_functional.py rounds each step as 1.13's CPU kernels do)."""
import tinyddp
from tinyddp.optim import _functional as F
from tinyddp.optim.optimizer import Optimizer


class RMSprop(Optimizer):
    _group_defaults = (("momentum", 0), ("centered", False), ("foreach", None),
                       ("maximize", False), ("differentiable", False))

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 foreach=None, maximize=False, differentiable=False):
        for name, value in (("learning rate", lr), ("epsilon value", eps), ("momentum value", momentum),
                            ("weight_decay value", weight_decay), ("alpha value", alpha)):
            if not 0.0 <= value:
                raise ValueError(f"Invalid {name}: {value}")
        if differentiable:
            raise NotImplementedError("tinyddp's RMSprop has no differentiable variant; leave differentiable False.")
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered, weight_decay=weight_decay,
                        foreach=foreach, maximize=maximize, differentiable=differentiable)
        super().__init__(params, defaults)

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        with tinyddp.no_grad():
            for group in self.param_groups:
                lr, alpha, eps, momentum = group["lr"], group["alpha"], group["eps"], group["momentum"]
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    state = self.state[p]
                    if len(state) == 0:
                        state["step"] = 0
                        state["square_avg"] = tinyddp.zeros_like(p)
                        if momentum > 0:
                            state["momentum_buffer"] = tinyddp.zeros_like(p)
                        if group["centered"]:
                            state["grad_avg"] = tinyddp.zeros_like(p)
                    state["step"] += 1
                    grad = -p.grad if group["maximize"] else p.grad
                    if group["weight_decay"] != 0:
                        grad = F.add(grad, p, group["weight_decay"])
                    square_avg = state["square_avg"]
                    F.addcmul_(square_avg.mul_(alpha), grad, grad, 1 - alpha)
                    if group["centered"]:
                        grad_avg = F.add_(state["grad_avg"].mul_(alpha), grad, 1 - alpha)
                        avg = F.sqrt(F.addcmul_(square_avg.clone(), grad_avg, grad_avg, -1))
                    else:
                        avg = F.sqrt(square_avg)
                    avg = avg.add_(eps)
                    if momentum > 0:
                        buf = F.addcdiv_(state["momentum_buffer"].mul_(momentum), grad, avg, 1)
                        F.add_(p, buf, -lr)
                    else:
                        F.addcdiv_(p, grad, avg, -lr)
        return loss
