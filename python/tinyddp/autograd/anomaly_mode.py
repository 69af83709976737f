"""torch.autograd.anomaly_mode over engine/autograd/anomaly_mode.h (process-wide, as PyTorch's flag)."""
import traceback
import warnings

from tinyddp import _C


def _format_stack():
    """The Python stack a node keeps while anomaly mode is on (grad_fn.metadata["traceback_"]), printed when its
    backward fails. This frame is the last, as torch.fx.traceback.format_stack's is in 1.13."""
    return traceback.format_stack()


class detect_anomaly:
    """On for the scope; PyTorch warns on entry, and so does this."""

    def __init__(self, check_nan=True):
        self._check_nan = check_nan

    def __enter__(self):
        self._prev = _C.is_anomaly_enabled()
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime and should only be "
                      "enabled for debugging.", stacklevel=2)
        _C._set_detect_anomaly(bool(self._check_nan))

    def __exit__(self, *exc):
        _C._set_detect_anomaly(self._prev)
        return False


class set_detect_anomaly:
    """Sets the mode at once (as a function) and restores the previous one on exit (as a context manager)."""

    def __init__(self, mode):
        self._prev = _C.is_anomaly_enabled()
        _C._set_detect_anomaly(bool(mode))

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _C._set_detect_anomaly(self._prev)
        return False
