"""torch.optim.Adam over models/optim/adam.h (PyTorch 1.13's update, in its floating-point order)."""
from tinyddp import _C
from tinyddp.optim.optimizer import Optimizer


class Adam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=False):
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
        self.defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                             maximize=maximize)
        super().__init__(params, lambda ps: _C._optim.Adam(ps, float(lr), float(betas[0]), float(betas[1]), float(eps),
                                                           float(weight_decay), bool(amsgrad), bool(maximize)))
