"""torch.optim.Adadelta: 1.13's groups, checks, state ('step' an int, 'square_avg', 'acc_delta') and
_single_tensor_adadelta's update, in its floating-point order."""
import tinyddp
from tinyddp.optim import _functional as F
from tinyddp.optim.optimizer import Optimizer


class Adadelta(Optimizer):
    _group_defaults = (("foreach", None), ("maximize", False))

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *, maximize=False):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize, foreach=foreach)
        super().__init__(params, defaults)

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        with tinyddp.no_grad():
            for group in self.param_groups:
                lr, rho, eps = group["lr"], group["rho"], group["eps"]
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    state = self.state[p]
                    if len(state) == 0:
                        state["step"] = 0
                        state["square_avg"] = tinyddp.zeros_like(p)
                        state["acc_delta"] = tinyddp.zeros_like(p)
                    state["step"] += 1
                    grad = -p.grad if group["maximize"] else p.grad
                    if group["weight_decay"] != 0:
                        grad = F.add(grad, p, group["weight_decay"])
                    square_avg, acc_delta = state["square_avg"], state["acc_delta"]
                    F.addcmul_(square_avg.mul_(rho), grad, grad, 1 - rho)
                    std = F.sqrt(square_avg.add(eps))
                    delta = F.sqrt(acc_delta.add(eps)).div_(std).mul_(grad)
                    F.addcmul_(acc_delta.mul_(rho), delta, delta, 1 - rho)
                    F.add_(p, delta, -lr)
        return loss
