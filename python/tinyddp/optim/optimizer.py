"""torch.optim.Optimizer over models/optim's Optimizer: the update rules run in C++ on the parameter handles."""
import warnings

from tinyddp._tensor import Tensor
from tinyddp.autograd.grad_mode import enable_grad


class _RequiredParameter:
    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


class Optimizer:
    def __init__(self, params, make_impl):
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, but got "
                            + type(params).__name__)
        params = list(params)
        if params and isinstance(params[0], dict):
            raise NotImplementedError("parameter groups (dicts) are not supported by tinyddp's optimizers yet; pass "
                                      "one iterable of tensors.")
        for p in params:
            if not isinstance(p, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is " + type(p).__name__)
        if len(set(map(id, params))) != len(params):
            # PyTorch's text; its step then updates the parameter once per occurrence, models/optim does not
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in future, this will cause "
                          "an error; see github.com/pytorch/pytorch/issues/40967 for more information", stacklevel=2)
        self._params = params
        # PyTorch keeps every parameter and skips, at each step, those whose .grad is None (models/optim does
        # too); one that does not require grad never gets a .grad, and models/optim refuses it, so it is left
        # out here. (A parameter that starts requiring grad after construction is therefore not stepped.)
        try:
            self._impl = make_impl([p for p in params if p.requires_grad])
        except RuntimeError as e:   # PyTorch's optimizers check their arguments in Python, with ValueError
            raise ValueError(str(e)) from None

    def zero_grad(self, set_to_none=False):
        self._impl.zero_grad(set_to_none)

    def step(self, closure=None):
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        self._impl.step()
        return loss
