"""torch.optim.lr_scheduler: PyTorch 1.13's learning-rate schedules, pure Python as PyTorch's are. A scheduler
writes each parameter group's 'lr' and the optimizer reads it at its next step.

  sched = StepLR(opt, step_size=2, gamma=0.1)   # sets group['initial_lr'] and takes step 0 (lr unchanged)
  for epoch in range(n):
      ...; opt.step(); sched.step()            # last_epoch += 1, then every group's lr for that epoch
  sched.get_last_lr()                           # the lrs the last step() wrote

Two forms, as in 1.13: step() updates the lr from the group's current value (the "chainable" form, so that
schedulers compose and outside changes to group['lr'] persist); step(epoch) jumps to epoch with the closed form
(from base_lrs) where the schedule has one, and warns that the argument is deprecated. The two round differently,
so each schedule here computes both exactly as 1.13 writes them.

A scheduler's state_dict() is its __dict__ without the optimizer (1.13's layout, keys in its order), so the
attributes below are assigned in 1.13's order and no others are kept on the instance.
"""
import math
import types
import warnings
from bisect import bisect_right
from collections import Counter

from tinyddp.optim.optimizer import Optimizer

__all__ = ["LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR", "ConstantLR", "LinearLR", "ExponentialLR",
           "SequentialLR", "CosineAnnealingLR", "ChainedScheduler", "PolynomialLR"]

EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being deprecated where possible. Please use "
    "`scheduler.step()` to step the scheduler. During the deprecation, if epoch is different from None, the closed "
    "form is used instead of the new chainable form, where available. Please open an issue if you are unable to "
    "replicate your use case: https://github.com/pytorch/pytorch/issues/new/choose.")

_SEE_HOW_TO = "See more details at https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate"


class _LRScheduler:
    def __init__(self, optimizer, last_epoch=-1, verbose=False):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        groups = optimizer.param_groups
        if last_epoch == -1:   # a fresh schedule starts from each group's lr
            for group in groups:
                group.setdefault("initial_lr", group["lr"])
        else:                  # resuming: the optimizer's groups must carry their starting lr
            for i, group in enumerate(groups):
                if "initial_lr" not in group:
                    raise KeyError(f"param 'initial_lr' is not specified in param_groups[{i}] when resuming an "
                                   "optimizer")
        self.base_lrs = [group["initial_lr"] for group in groups]
        self.last_epoch = last_epoch
        self.verbose = verbose
        self._initial_step()

    def _initial_step(self):
        # Counts the optimizer's steps from here (Optimizer subclasses' step() adds to _step_count once it is
        # set), so that the first step() after this one can tell whether optimizer.step() came before it.
        self.optimizer._step_count = 0
        self._step_count = 0
        self.step()

    def state_dict(self):
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)

    def get_last_lr(self):
        return self._last_lr

    def get_lr(self):
        raise NotImplementedError

    def _warn_unless_in_step(self):
        # 1.13's get_lr() computes the next epoch's lrs from the current ones, so calling it directly is a mistake
        if not self._get_lr_called_within_step:
            warnings.warn("To get the last learning rate computed by the scheduler, please use `get_last_lr()`.",
                          UserWarning)

    def print_lr(self, is_verbose, group, lr, epoch=None):
        if not is_verbose:
            return
        if epoch is None:
            print(f"Adjusting learning rate of group {group} to {lr:.4e}.")
        else:
            epoch_str = ("%.2f" if isinstance(epoch, float) else "%.5d") % epoch
            print(f"Epoch {epoch_str}: adjusting learning rate of group {group} to {lr:.4e}.")

    def step(self, epoch=None):
        if self._step_count == 1:   # the first step() after the constructor's
            if not getattr(self.optimizer.step, "_with_counter", False):
                warnings.warn("Seems like `optimizer.step()` has been overridden after learning rate scheduler "
                              "initialization. Please, make sure to call `optimizer.step()` before "
                              "`lr_scheduler.step()`. " + _SEE_HOW_TO, UserWarning)
            elif self.optimizer._step_count < 1:
                warnings.warn("Detected call of `lr_scheduler.step()` before `optimizer.step()`. In PyTorch 1.1.0 "
                              "and later, you should call them in the opposite order: `optimizer.step()` before "
                              "`lr_scheduler.step()`.  Failure to do this will result in PyTorch skipping the first "
                              "value of the learning rate schedule. " + _SEE_HOW_TO, UserWarning)
        self._step_count += 1
        self._get_lr_called_within_step = True
        try:
            if epoch is None:
                self.last_epoch += 1
                lrs = self.get_lr()
            else:
                warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning)
                self.last_epoch = epoch
                closed_form = getattr(self, "_get_closed_form_lr", None)
                lrs = closed_form() if closed_form is not None else self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        for i, (group, lr) in enumerate(zip(self.optimizer.param_groups, lrs)):
            group["lr"] = lr
            self.print_lr(self.verbose, i, lr, epoch)
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def _current_lrs(self):
        return [group["lr"] for group in self.optimizer.param_groups]

    def _scaled(self, factor):
        return [group["lr"] * factor for group in self.optimizer.param_groups]


def _per_group(optimizer, lr_lambda):
    if isinstance(lr_lambda, (list, tuple)):
        if len(lr_lambda) != len(optimizer.param_groups):
            raise ValueError(f"Expected {len(optimizer.param_groups)} lr_lambdas, but got {len(lr_lambda)}")
        return list(lr_lambda)
    return [lr_lambda] * len(optimizer.param_groups)


class _LambdaState:
    """state_dict for the schedules holding functions: a plain function or lambda is saved as None, a callable
    object as a copy of its __dict__ (which load_state_dict updates the held object's with)."""

    def state_dict(self):
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = [None if isinstance(fn, types.FunctionType) else fn.__dict__.copy()
                               for fn in self.lr_lambdas]
        return state

    def load_state_dict(self, state_dict):
        lr_lambdas = state_dict.pop("lr_lambdas")
        self.__dict__.update(state_dict)
        state_dict["lr_lambdas"] = lr_lambdas   # the caller's dict is left as it was
        for fn, saved in zip(self.lr_lambdas, lr_lambdas):
            if saved is not None:
                fn.__dict__.update(saved)


class LambdaLR(_LambdaState, _LRScheduler):
    """lr = initial_lr * lr_lambda(epoch) (closed form only)."""

    def __init__(self, optimizer, lr_lambda, last_epoch=-1, verbose=False):
        self.optimizer = optimizer
        self.lr_lambdas = _per_group(optimizer, lr_lambda)
        super().__init__(optimizer, last_epoch, verbose)

    def get_lr(self):
        self._warn_unless_in_step()
        return [base_lr * fn(self.last_epoch) for fn, base_lr in zip(self.lr_lambdas, self.base_lrs)]


class MultiplicativeLR(_LambdaState, _LRScheduler):
    """lr *= lr_lambda(epoch) at each epoch after the first."""

    def __init__(self, optimizer, lr_lambda, last_epoch=-1, verbose=False):
        self.optimizer = optimizer
        self.lr_lambdas = _per_group(optimizer, lr_lambda)
        super().__init__(optimizer, last_epoch, verbose)

    def get_lr(self):
        self._warn_unless_in_step()
        if self.last_epoch <= 0:
            return self._current_lrs()
        return [group["lr"] * fn(self.last_epoch) for fn, group in zip(self.lr_lambdas, self.optimizer.param_groups)]


class StepLR(_LRScheduler):
    """lr *= gamma every step_size epochs."""

    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1, verbose=False):
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch, verbose)

    def get_lr(self):
        self._warn_unless_in_step()
        if self.last_epoch != 0 and self.last_epoch % self.step_size == 0:
            return self._scaled(self.gamma)
        return self._current_lrs()

    def _get_closed_form_lr(self):
        return [base_lr * self.gamma ** (self.last_epoch // self.step_size) for base_lr in self.base_lrs]


class MultiStepLR(_LRScheduler):
    """lr *= gamma at each milestone (a milestone listed k times multiplies by gamma ** k)."""

    def __init__(self, optimizer, milestones, gamma=0.1, last_epoch=-1, verbose=False):
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch, verbose)

    def get_lr(self):
        self._warn_unless_in_step()
        if self.last_epoch in self.milestones:
            return self._scaled(self.gamma ** self.milestones[self.last_epoch])
        return self._current_lrs()

    def _get_closed_form_lr(self):
        passed = bisect_right(sorted(self.milestones.elements()), self.last_epoch)
        return [base_lr * self.gamma ** passed for base_lr in self.base_lrs]


class ConstantLR(_LRScheduler):
    """lr = initial_lr * factor for the first total_iters epochs, then initial_lr."""

    def __init__(self, optimizer, factor=1.0 / 3, total_iters=5, last_epoch=-1, verbose=False):
        if factor > 1.0 or factor < 0:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor = factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch, verbose)

    def get_lr(self):
        self._warn_unless_in_step()
        if self.last_epoch == 0:
            return self._scaled(self.factor)
        if self.last_epoch == self.total_iters:
            return self._scaled(1.0 / self.factor)
        return self._current_lrs()

    def _get_closed_form_lr(self):
        done = self.last_epoch >= self.total_iters
        return [base_lr * (self.factor + done * (1 - self.factor)) for base_lr in self.base_lrs]


class LinearLR(_LRScheduler):
    """The factor on initial_lr goes linearly from start_factor to end_factor over total_iters epochs."""

    def __init__(self, optimizer, start_factor=1.0 / 3, end_factor=1.0, total_iters=5, last_epoch=-1,
                 verbose=False):
        if start_factor > 1.0 or start_factor < 0:
            raise ValueError("Starting multiplicative factor expected to be between 0 and 1.")
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch, verbose)

    def get_lr(self):
        self._warn_unless_in_step()
        if self.last_epoch == 0:
            return self._scaled(self.start_factor)
        if self.last_epoch > self.total_iters:
            return self._current_lrs()
        # the ratio of this epoch's factor to the previous one's
        slope = self.end_factor - self.start_factor
        ratio = 1.0 + slope / (self.total_iters * self.start_factor + (self.last_epoch - 1) * slope)
        return self._scaled(ratio)

    def _get_closed_form_lr(self):
        progress = min(self.total_iters, self.last_epoch)
        return [base_lr * (self.start_factor + (self.end_factor - self.start_factor) * progress / self.total_iters)
                for base_lr in self.base_lrs]


class ExponentialLR(_LRScheduler):
    """lr *= gamma every epoch."""

    def __init__(self, optimizer, gamma, last_epoch=-1, verbose=False):
        self.gamma = gamma
        super().__init__(optimizer, last_epoch, verbose)

    def get_lr(self):
        self._warn_unless_in_step()
        if self.last_epoch == 0:
            return self._current_lrs()
        return self._scaled(self.gamma)

    def _get_closed_form_lr(self):
        return [base_lr * self.gamma ** self.last_epoch for base_lr in self.base_lrs]


class PolynomialLR(_LRScheduler):
    """lr = initial_lr * (1 - epoch / total_iters) ** power, reaching 0 at total_iters."""

    def __init__(self, optimizer, total_iters=5, power=1.0, last_epoch=-1, verbose=False):
        self.total_iters = total_iters
        self.power = power
        super().__init__(optimizer, last_epoch, verbose)

    def get_lr(self):
        self._warn_unless_in_step()
        if self.last_epoch == 0 or self.last_epoch > self.total_iters:
            return self._current_lrs()
        remaining_now = 1.0 - self.last_epoch / self.total_iters
        remaining_before = 1.0 - (self.last_epoch - 1) / self.total_iters
        return self._scaled((remaining_now / remaining_before) ** self.power)

    def _get_closed_form_lr(self):
        remaining = 1.0 - min(self.total_iters, self.last_epoch) / self.total_iters
        return [base_lr * remaining ** self.power for base_lr in self.base_lrs]


class CosineAnnealingLR(_LRScheduler):
    """lr = eta_min + (initial_lr - eta_min) * (1 + cos(pi * epoch / T_max)) / 2, computed from the previous lr
    at each step (SGDR without restarts; past T_max it rises again, period 2 T_max)."""

    def __init__(self, optimizer, T_max, eta_min=0, last_epoch=-1, verbose=False):
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch, verbose)

    def get_lr(self):
        self._warn_unless_in_step()
        groups, eta_min, t_max, epoch = self.optimizer.param_groups, self.eta_min, self.T_max, self.last_epoch
        if epoch == 0:
            return self._current_lrs()
        if self._step_count == 1 and epoch > 0:   # resumed at last_epoch > 0: the closed form for the first value
            return [eta_min + (base_lr - eta_min) * (1 + math.cos(epoch * math.pi / t_max)) / 2
                    for base_lr in self.base_lrs]
        if (epoch - 1 - t_max) % (2 * t_max) == 0:   # leaving the minimum: cos's ratio form would divide by 0
            return [group["lr"] + (base_lr - eta_min) * (1 - math.cos(math.pi / t_max)) / 2
                    for base_lr, group in zip(self.base_lrs, groups)]
        ratio = (1 + math.cos(math.pi * epoch / t_max)) / (1 + math.cos(math.pi * (epoch - 1) / t_max))
        return [ratio * (group["lr"] - eta_min) + eta_min for group in groups]

    def _get_closed_form_lr(self):
        return [self.eta_min + (base_lr - self.eta_min) * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
                for base_lr in self.base_lrs]


class _Composite:
    """state_dict for the schedules made of others: their own state, with each inner scheduler's state_dict."""

    def state_dict(self):
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return state

    def load_state_dict(self, state_dict):
        saved = state_dict.pop("_schedulers")
        self.__dict__.update(state_dict)
        state_dict["_schedulers"] = saved
        for s, s_state in zip(self._schedulers, saved):
            s.load_state_dict(s_state)


class SequentialLR(_Composite, _LRScheduler):
    """schedulers[i] drives the lr from milestones[i - 1] on; each starts again from epoch 0 at its milestone."""

    def __init__(self, optimizer, schedulers, milestones, last_epoch=-1, verbose=False):
        for i, s in enumerate(schedulers):
            if s.optimizer != optimizer:
                raise ValueError("Sequential Schedulers expects all schedulers to belong to the same optimizer, but "
                                 f"got schedulers at index {i} to be different than the optimizer passed in.")
            if s.optimizer != schedulers[0].optimizer:
                raise ValueError("Sequential Schedulers expects all schedulers to belong to the same optimizer, but "
                                 f"got schedulers at index 0 and {i} to be different.")
        if len(milestones) != len(schedulers) - 1:
            raise ValueError("Sequential Schedulers expects number of schedulers provided to be one more than the "
                             f"number of milestone points, but got number of schedulers {len(schedulers)} and the "
                             f"number of milestones to be equal to {len(milestones)}")
        self._schedulers = schedulers
        self._milestones = milestones
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        # Undo what the inner schedulers' constructors did to the lrs and epochs, then start the first one again.
        for group in optimizer.param_groups:
            group["lr"] = group["initial_lr"]
        for s in schedulers:
            s.last_epoch -= 1
        schedulers[0]._initial_step()
        self._last_lr = schedulers[0].get_last_lr()

    def step(self):
        self.last_epoch += 1
        i = bisect_right(self._milestones, self.last_epoch)
        current = self._schedulers[i]
        if i > 0 and self._milestones[i - 1] == self.last_epoch:
            current.step(0)   # restart at its milestone (closed form at epoch 0, with the deprecation warning)
        else:
            current.step()
        self._last_lr = current.get_last_lr()


class ChainedScheduler(_Composite, _LRScheduler):
    """Steps every scheduler in turn at each step(), so that their (chainable) changes multiply."""

    def __init__(self, schedulers):
        for i in range(1, len(schedulers)):
            if schedulers[i].optimizer != schedulers[0].optimizer:
                raise ValueError("ChainedScheduler expects all schedulers to belong to the same optimizer, but got "
                                 f"schedulers at index 0 and {i} to be different")
        self._schedulers = list(schedulers)
        self.optimizer = schedulers[0].optimizer
        self._last_lr = [group["lr"] for group in self._schedulers[-1].optimizer.param_groups]

    def step(self):
        for s in self._schedulers:
            s.step()
        self._last_lr = [group["lr"] for group in self._schedulers[-1].optimizer.param_groups]
