"""torch.optim.NAdam: 1.13's groups, checks, state ('step' and 'mu_product', float32 0-dim tensors, 'exp_avg',
'exp_avg_sq') and _single_tensor_nadam's update, in its floating-point order (mu_product is a float32 tensor, so
its products round in float32)."""
import tinyddp
from tinyddp.optim import _functional as F
from tinyddp.optim.adam import _check
from tinyddp.optim.optimizer import Optimizer


class NAdam(Optimizer):
    _group_defaults = (("foreach", None),)
    _tensor_state_keys = ("step", "mu_product")

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
                 foreach=None):
        _check(lr, betas, eps, weight_decay)
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, momentum_decay=momentum_decay,
                        foreach=foreach)
        super().__init__(params, defaults)

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        with tinyddp.no_grad():
            for group in self.param_groups:
                beta1, beta2 = group["betas"]
                lr, momentum_decay = group["lr"], group["momentum_decay"]
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    state = self.state[p]
                    if len(state) == 0:
                        state["step"] = tinyddp.tensor(0.0)
                        state["mu_product"] = tinyddp.tensor(1.0)
                        state["exp_avg"] = tinyddp.zeros_like(p)
                        state["exp_avg_sq"] = tinyddp.zeros_like(p)
                    grad = p.grad
                    step_t, mu_product = state["step"], state["mu_product"]
                    step_t += 1
                    step = step_t.item()
                    bias_correction2 = 1 - beta2 ** step
                    if group["weight_decay"] != 0:
                        grad = F.add(grad, p, group["weight_decay"])
                    # the momentum schedule mu_t of Dozat's NAdam, at this step and the next
                    mu = beta1 * (1. - 0.5 * (0.96 ** (step * momentum_decay)))
                    mu_next = beta1 * (1. - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
                    mu_product *= mu
                    mu_product_next = mu_product * mu * mu_next
                    exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                    F.add_(exp_avg.mul_(beta1), grad, 1 - beta1)
                    F.addcmul_(exp_avg_sq.mul_(beta2), grad, grad, 1 - beta2)
                    denom = F.sqrt(exp_avg_sq.div(bias_correction2)).add_(group["eps"])
                    F.addcdiv_(p, grad, denom, -lr * (1. - mu) / (1. - mu_product.item()))
                    F.addcdiv_(p, exp_avg, denom, -lr * mu_next / (1. - mu_product_next.item()))
        return loss
