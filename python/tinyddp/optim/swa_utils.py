"""torch.optim.swa_utils: AveragedModel (a copy of a model whose parameters, and optionally buffers, are the running
average of the model's at each update_parameters), SWALR (anneals each group's lr to its swa_lr over
anneal_epochs, by cosine or linearly) and update_bn (recomputes BatchNorm statistics with one pass over a loader),
with 1.13's arithmetic and state."""
import copy
import itertools
import math
import warnings

import tinyddp
from tinyddp.nn.modules.batchnorm import _BatchNorm
from tinyddp.nn.modules.module import Module
from tinyddp.optim.lr_scheduler import _LRScheduler


def _running_mean(averaged, current, num_averaged):
    return averaged + (current - averaged) / (num_averaged + 1)


class AveragedModel(Module):
    def __init__(self, model, device=None, avg_fn=None, use_buffers=False):
        super().__init__()
        self.module = copy.deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", tinyddp.tensor(0, dtype=tinyddp.int64))
        self.avg_fn = avg_fn if avg_fn is not None else _running_mean
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def update_parameters(self, model):
        """The first call copies model's values; each later one folds them into the average with avg_fn."""
        if self.use_buffers:
            ours = itertools.chain(self.module.parameters(), self.module.buffers())
            theirs = itertools.chain(model.parameters(), model.buffers())
        else:
            ours, theirs = self.parameters(), model.parameters()
        first = int(self.n_averaged) == 0
        for p_swa, p_model in zip(ours, theirs):
            current = p_model.detach()
            with tinyddp.no_grad():
                if first:
                    p_swa.copy_(current)
                else:
                    p_swa.copy_(self.avg_fn(p_swa.detach(), current, self.n_averaged))
        self.n_averaged.fill_(int(self.n_averaged) + 1)


def update_bn(loader, model, device=None):
    """Every BatchNorm's running statistics reset and recomputed as the cumulative average over one pass of
    `loader` (its batches, or their first element), in training mode; the momenta and mode are put back."""
    with tinyddp.no_grad():
        momenta = {}
        for module in model.modules():
            if isinstance(module, _BatchNorm):
                module.running_mean = tinyddp.zeros_like(module.running_mean)
                module.running_var = tinyddp.ones_like(module.running_var)
                momenta[module] = module.momentum
        if not momenta:
            return
        was_training = model.training
        model.train()
        for module in momenta:
            module.momentum = None
            module.num_batches_tracked.zero_()
        for input in loader:
            if isinstance(input, (list, tuple)):
                input = input[0]
            if device is not None:
                input = input.to(device)
            model(input)
        for module, momentum in momenta.items():
            module.momentum = momentum
        model.train(was_training)


class SWALR(_LRScheduler):
    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos", last_epoch=-1):
        swa_lrs = self._format_param(optimizer, swa_lr)
        for lr, group in zip(swa_lrs, optimizer.param_groups):
            group["swa_lr"] = lr
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError(f"anneal_strategy must by one of 'cos' or 'linear', instead got {anneal_strategy}")
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else self._linear_anneal
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _format_param(optimizer, swa_lrs):
        if isinstance(swa_lrs, (list, tuple)):
            if len(swa_lrs) != len(optimizer.param_groups):
                raise ValueError(f"swa_lr must have the same length as optimizer.param_groups: swa_lr has "
                                 f"{len(swa_lrs)}, optimizer.param_groups has {len(optimizer.param_groups)}")
            return swa_lrs
        return [swa_lrs] * len(optimizer.param_groups)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        """The lr before an annealing step of weight alpha, recovered from the group's current one."""
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self):
        if not self._get_lr_called_within_step:
            warnings.warn("To get the last learning rate computed by the scheduler, please use `get_last_lr()`.",
                          UserWarning)
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_alpha = self.anneal_func(max(0, min(1, (step - 1) / max(1, self.anneal_epochs))))
        prev_lrs = [self._get_initial_lr(group["lr"], group["swa_lr"], prev_alpha)
                    for group in self.optimizer.param_groups]
        alpha = self.anneal_func(max(0, min(1, step / max(1, self.anneal_epochs))))
        return [group["swa_lr"] * alpha + lr * (1 - alpha) for group, lr in zip(self.optimizer.param_groups, prev_lrs)]
