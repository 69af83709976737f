"""torch.optim.RAdam: 1.13's groups, checks, state ('step', a float32 0-dim tensor, 'exp_avg', 'exp_avg_sq') and
_single_tensor_radam's update, in its floating-point order: the rectified step once the variance's approximated
SMA length rho_t passes 5, the plain bias-corrected momentum step before."""
import math

import tinyddp
from tinyddp.optim import _functional as F
from tinyddp.optim.adam import _check
from tinyddp.optim.optimizer import Optimizer


class RAdam(Optimizer):
    _group_defaults = (("foreach", None),)
    _tensor_state_keys = ("step",)

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None):
        _check(lr, betas, eps, weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach)
        super().__init__(params, defaults)

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        with tinyddp.no_grad():
            for group in self.param_groups:
                beta1, beta2 = group["betas"]
                lr = group["lr"]
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    state = self.state[p]
                    if len(state) == 0:
                        state["step"] = tinyddp.tensor(0.0)
                        state["exp_avg"] = tinyddp.zeros_like(p)
                        state["exp_avg_sq"] = tinyddp.zeros_like(p)
                    grad = p.grad
                    step_t = state["step"]
                    step_t += 1
                    step = step_t.item()
                    bias_correction1 = 1 - beta1 ** step
                    bias_correction2 = 1 - beta2 ** step
                    if group["weight_decay"] != 0:
                        grad = F.add(grad, p, group["weight_decay"])
                    exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                    F.add_(exp_avg.mul_(beta1), grad, 1 - beta1)
                    F.addcmul_(exp_avg_sq.mul_(beta2), grad, grad, 1 - beta2)
                    bias_corrected_exp_avg = exp_avg / bias_correction1
                    rho_inf = 2 / (1 - beta2) - 1
                    rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
                    if rho_t > 5.:
                        rect = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
                        adaptive_lr = F.rdiv(math.sqrt(bias_correction2), F.sqrt(exp_avg_sq).add_(group["eps"]))
                        F.add_(p, bias_corrected_exp_avg * lr * adaptive_lr * rect, -1.0)
                    else:
                        F.add_(p, bias_corrected_exp_avg * lr, -1.0)
        return loss
