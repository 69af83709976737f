"""torch.optim.Rprop: 1.13's groups, checks, state ('step' an int, 'prev', 'step_size' filled with lr) and
_single_tensor_rprop's update: each element's step size grows by etaplus while its gradient keeps its sign,
shrinks by etaminus when it flips (and that element then skips its step), clamped to step_sizes."""
import tinyddp
from tinyddp.optim.optimizer import Optimizer


class Rprop(Optimizer):
    _group_defaults = (("foreach", None), ("maximize", False))

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), foreach=None, maximize=False):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach, maximize=maximize)
        super().__init__(params, defaults)

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        with tinyddp.no_grad():
            for group in self.param_groups:
                etaminus, etaplus = group["etas"]
                step_size_min, step_size_max = group["step_sizes"]
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    state = self.state[p]
                    if len(state) == 0:
                        state["step"] = 0
                        state["prev"] = tinyddp.zeros_like(p)
                        state["step_size"] = tinyddp.full_like(p.grad, group["lr"])
                    state["step"] += 1
                    grad = -p.grad if group["maximize"] else p.grad
                    prev, step_size = state["prev"], state["step_size"]
                    agreement = grad.mul(prev).sign()
                    flipped = agreement < 0
                    # etaplus, etaminus or 1 by the sign (a NaN stays NaN, as 1.13's masked writes leave it)
                    factor = tinyddp.where(agreement > 0, tinyddp.full_like(agreement, etaplus),
                                           tinyddp.where(flipped, tinyddp.full_like(agreement, etaminus),
                                                         tinyddp.where(agreement == 0, tinyddp.ones_like(agreement),
                                                                       agreement)))
                    step_size.mul_(factor).clamp_(step_size_min, step_size_max)
                    grad = grad.masked_fill(flipped, 0)
                    p.sub_(grad.sign() * step_size)   # addcmul_ with value -1: the product of a sign is exact
                    prev.copy_(grad)
        return loss
