"""torch.optim.SGD over models/optim/sgd.h (PyTorch 1.13's update, step for step)."""
from tinyddp import _C
from tinyddp.optim.optimizer import Optimizer, required


class SGD(Optimizer):
    def __init__(self, params, lr=required, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
                 maximize=False, foreach=None, differentiable=False):
        # 1.13's checks and texts, on the values as given (so 1 prints as 1 and 1.0 as 1.0)
        if lr is not required and lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        self.defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                             nesterov=nesterov, maximize=maximize)

        def make(ps):   # after the parameters' checks, where 1.13's add_param_group finds lr missing
            if lr is required:
                raise ValueError("parameter group didn't specify a value of required optimization parameter lr")
            return _C._optim.SGD(ps, float(lr), float(momentum), float(dampening), float(weight_decay),
                                 bool(nesterov), bool(maximize))

        super().__init__(params, make)
