"""torch.optim.Adagrad: 1.13's groups and checks; its state ('step', a float32 0-dim tensor, and 'sum', filled
with initial_accumulator_value) is made for every parameter when the optimizer is built, as 1.13 does; each step
is _single_tensor_adagrad's, in its floating-point order."""
import tinyddp
from tinyddp.optim import _functional as F
from tinyddp.optim.optimizer import Optimizer


class Adagrad(Optimizer):
    _group_defaults = (("foreach", None), ("maximize", False))
    _tensor_state_keys = ("step",)

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False):
        for name, value in (("learning rate", lr), ("lr_decay value", lr_decay),
                            ("weight_decay value", weight_decay),
                            ("initial_accumulator_value value", initial_accumulator_value), ("epsilon value", eps)):
            if not 0.0 <= value:
                raise ValueError(f"Invalid {name}: {value}")
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach, maximize=maximize)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = tinyddp.tensor(0.0)
                state["sum"] = tinyddp.full_like(p, initial_accumulator_value)

    def share_memory(self):
        pass   # tinyddp's processes share nothing (the state stays this process's)

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        with tinyddp.no_grad():
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    state = self.state[p]
                    step_t = state["step"]
                    step_t += 1
                    step = step_t.item()
                    grad = -p.grad if group["maximize"] else p.grad
                    if group["weight_decay"] != 0:
                        grad = F.add(grad, p, group["weight_decay"])
                    clr = group["lr"] / (1 + (step - 1) * group["lr_decay"])
                    state_sum = F.addcmul_(state["sum"], grad, grad, 1)
                    std = F.sqrt(state_sum).add_(group["eps"])
                    F.addcdiv_(p, grad, std, -clr)
        return loss
