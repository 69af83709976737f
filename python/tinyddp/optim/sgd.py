"""torch.optim.SGD over models/optim/sgd.h (PyTorch 1.13's update, step for step)."""
from tinyddp import _C
from tinyddp.optim.optimizer import Optimizer, required


class SGD(Optimizer):
    def __init__(self, params, lr=required, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
                 maximize=False, foreach=None, differentiable=False):
        lr = float("nan") if lr is required else float(lr)   # models/optim: NaN means "not given"
        self.defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                             nesterov=nesterov, maximize=maximize)
        super().__init__(params, lambda ps: _C._optim.SGD(ps, lr, float(momentum), float(dampening),
                                                          float(weight_decay), bool(nesterov), bool(maximize)))
