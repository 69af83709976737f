"""torch.optim.SGD: 1.13's groups and checks; each step runs models/optim/sgd.h's update (1.13's
_single_tensor_sgd, step for step) on every parameter of a group that has a .grad, with the group's values."""
from tinyddp import _C
from tinyddp.optim.optimizer import Optimizer, required


class SGD(Optimizer):
    _group_defaults = (("nesterov", False), ("maximize", False), ("foreach", None),
                       ("differentiable", False))

    def __init__(self, params, lr=required, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
                 maximize=False, foreach=None, differentiable=False):
        # 1.13's checks and texts, on the values as given (so 1 prints as 1 and 1.0 as 1.0)
        if lr is not required and lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay, nesterov=nesterov,
                        maximize=maximize, foreach=foreach, differentiable=differentiable)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        if differentiable:
            raise NotImplementedError("tinyddp's SGD has no differentiable variant (its update runs in C++ under "
                                      "no_grad); leave differentiable False.")
        super().__init__(params, defaults)

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            params = [p for p in group["params"] if p.grad is not None]
            # 1.13 reads each buffer before the group's update and stores the list back after it, so a parameter
            # repeated in a group starts each occurrence from the buffer the step began with.
            buffers = [self.state[p].get("momentum_buffer") for p in params]
            buffers = _C._optim.sgd(params, [p.grad for p in params], buffers, float(group["lr"]),
                                    float(group["momentum"]), float(group["dampening"]), float(group["weight_decay"]),
                                    bool(group["nesterov"]), bool(group["maximize"]))
            for p, buf in zip(params, buffers):
                self.state[p]["momentum_buffer"] = buf
        return loss
