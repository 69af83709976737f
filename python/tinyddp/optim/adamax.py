"""torch.optim.Adamax: 1.13's groups, checks, state ('step', a float32 0-dim tensor, 'exp_avg', 'exp_inf') and
_single_tensor_adamax's update, in its floating-point order."""
import tinyddp
from tinyddp.optim import _functional as F
from tinyddp.optim.adam import _check
from tinyddp.optim.optimizer import Optimizer


class Adamax(Optimizer):
    _group_defaults = (("foreach", None), ("maximize", False))
    _tensor_state_keys = ("step",)

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *,
                 maximize=False):
        _check(lr, betas, eps, weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach, maximize=maximize)
        super().__init__(params, defaults)

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        with tinyddp.no_grad():
            for group in self.param_groups:
                beta1, beta2 = group["betas"]
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    state = self.state[p]
                    if len(state) == 0:
                        state["step"] = tinyddp.tensor(0.0)
                        state["exp_avg"] = tinyddp.zeros_like(p)
                        state["exp_inf"] = tinyddp.zeros_like(p)
                    grad = -p.grad if group["maximize"] else p.grad
                    step_t = state["step"]
                    step_t += 1
                    step = step_t.item()
                    if group["weight_decay"] != 0:
                        grad = F.add(grad, p, group["weight_decay"])
                    exp_avg, exp_inf = state["exp_avg"], state["exp_inf"]
                    F.add_(exp_avg.mul_(beta1), grad, 1 - beta1)
                    # the larger of the decayed norm and |g| + eps (a NaN in either wins, as amax's)
                    decayed, fresh = exp_inf.mul_(beta2), grad.abs().add_(group["eps"])
                    exp_inf.copy_(tinyddp.where((decayed >= fresh).logical_or(decayed.isnan()), decayed, fresh))
                    clr = group["lr"] / (1 - beta1 ** step)
                    F.addcdiv_(p, exp_avg, exp_inf, -clr)
        return loss

