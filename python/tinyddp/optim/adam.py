"""torch.optim.Adam and AdamW: 1.13's groups, checks and lazily created state ('step', a float32 0-dim tensor,
'exp_avg', 'exp_avg_sq' and, with amsgrad, 'max_exp_avg_sq'); each step runs models/optim/adam.h's update (1.13's
_single_tensor_adam / _single_tensor_adamw, in their floating-point order) with the group's values."""
import tinyddp
from tinyddp import _C
from tinyddp.optim.optimizer import Optimizer


def _check(lr, betas, eps, weight_decay):
    # 1.13's checks and texts, on the values as given (so 1 prints as 1 and 1.0 as 1.0)
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")
    for i in (0, 1):
        if not 0.0 <= betas[i] < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {betas[i]}")
    if not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")


class Adam(Optimizer):
    _decoupled_weight_decay = False
    _group_defaults = (("amsgrad", False), ("maximize", False), ("foreach", None), ("capturable", False),
                       ("differentiable", False), ("fused", False))
    _tensor_state_keys = ("step",)

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=False):
        _check(lr, betas, eps, weight_decay)
        if capturable or fused or differentiable:
            raise NotImplementedError("tinyddp's Adam has no capturable (CUDA graph), fused (CUDA) or differentiable "
                                      "variant; leave capturable, fused and differentiable False.")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad, maximize=maximize,
                        foreach=foreach, capturable=capturable, differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            params, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps = [], [], [], [], []
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if len(state) == 0:   # lazy initialization, as 1.13's
                    state["step"] = tinyddp.tensor(0.0)
                    state["exp_avg"] = tinyddp.zeros_like(p)
                    state["exp_avg_sq"] = tinyddp.zeros_like(p)
                    if group["amsgrad"]:
                        state["max_exp_avg_sq"] = tinyddp.zeros_like(p)
                params.append(p)
                exp_avgs.append(state["exp_avg"])
                exp_avg_sqs.append(state["exp_avg_sq"])
                if group["amsgrad"]:
                    max_exp_avg_sqs.append(state["max_exp_avg_sq"])
                steps.append(state["step"])
            # step_t += 1, then its value as a Python float (1.13's step_t.item()): counted in float32
            for step_t in steps:
                step_t += 1
            beta1, beta2 = group["betas"]
            _C._optim.adam(params, [p.grad for p in params], exp_avgs, exp_avg_sqs, max_exp_avg_sqs,
                           [s.item() for s in steps], float(group["lr"]), float(beta1), float(beta2),
                           float(group["eps"]), float(group["weight_decay"]), bool(group["amsgrad"]),
                           bool(group["maximize"]), self._decoupled_weight_decay)
        return loss


class AdamW(Adam):
    """Adam with decoupled weight decay, p *= 1 - lr * weight_decay before the moments (1.13's default 1e-2)."""
    _decoupled_weight_decay = True
    _group_defaults = (("amsgrad", False), ("maximize", False), ("foreach", None), ("capturable", False))

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False, foreach=None, capturable=False):
        _check(lr, betas, eps, weight_decay)
        if capturable:
            raise NotImplementedError("tinyddp's AdamW has no capturable (CUDA graph) variant; leave capturable "
                                      "False.")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad, foreach=foreach,
                        maximize=maximize, capturable=capturable)
        Optimizer.__init__(self, params, defaults)
