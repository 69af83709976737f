"""torch.cuda.amp.GradScaler as 1.13's on a machine without CUDA, which tinyddp always is: GradScaler(enabled=True)
warns "torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling." and every instance is
disabled. A disabled scaler's scale() returns its argument, step() calls optimizer.step(), unscale_, update and
load_state_dict do nothing, get_scale() is 1.0, state_dict() is {}, and the growth/backoff getters raise the
AttributeError 1.13's raise (a disabled 1.13 scaler never sets those attributes)."""
import warnings
from enum import Enum

from tinyddp.cuda.amp.common import amp_definitely_not_available

__all__ = ["OptState", "GradScaler"]


class OptState(Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


class GradScaler:
    def __init__(self, init_scale=2.**16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000, enabled=True):
        if enabled and amp_definitely_not_available():
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.")
            self._enabled = False
        else:
            self._enabled = enabled   # False: there is no CUDA to make it True

    def scale(self, outputs):
        return outputs

    def unscale_(self, optimizer):
        return

    def step(self, optimizer, *args, **kwargs):
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale=None):
        return

    def get_scale(self):
        return 1.0

    def get_growth_factor(self):
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        self._growth_factor = new_factor

    def get_backoff_factor(self):
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        self._backoff_factor = new_factor

    def get_growth_interval(self):
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        self._growth_interval = new_interval

    def _get_growth_tracker(self):
        return 0

    def is_enabled(self):
        return self._enabled

    def state_dict(self):
        return {}

    def load_state_dict(self, state_dict):
        return

    def __getstate__(self):
        return self.__dict__.copy()

    def __setstate__(self, state):
        self.__dict__.update(state)
