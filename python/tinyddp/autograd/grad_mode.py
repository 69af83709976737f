"""torch.autograd.grad_mode: no_grad, enable_grad, set_grad_enabled. Grad mode is the engine's per-thread flag
(engine/autograd/grad_mode.h); each is a context manager and a decorator, as PyTorch's."""
import functools

from tinyddp import _C

is_grad_enabled = _C.is_grad_enabled


class _GradModeContext:
    mode = None

    def __enter__(self):
        self._prev = _C.is_grad_enabled()
        _C._set_grad_enabled(self.mode)

    def __exit__(self, *exc):
        _C._set_grad_enabled(self._prev)
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__():
                return fn(*args, **kwargs)
        return wrapper


class no_grad(_GradModeContext):
    mode = False


class enable_grad(_GradModeContext):
    mode = True


class set_grad_enabled(_GradModeContext):
    """Sets grad mode at once (as a function) and restores the previous mode on exit (as a context manager)."""

    def __init__(self, mode):
        self._prev = _C.is_grad_enabled()
        self.mode = bool(mode)
        _C._set_grad_enabled(self.mode)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _C._set_grad_enabled(self._prev)
        return False
