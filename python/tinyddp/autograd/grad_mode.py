"""torch.autograd.grad_mode: no_grad, enable_grad, set_grad_enabled, inference_mode. Grad mode and inference mode
are the engine's per-thread flags (engine/autograd/grad_mode.h, engine/core/inference_mode.h); each is a context
manager and a decorator, as PyTorch's."""
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


class inference_mode(_GradModeContext):
    """Inference mode on (mode=True) or off, as c10::InferenceMode: grad mode is set to `not mode` with it, and
    tensors made inside are inference tensors (is_inference()), which outside the mode cannot be changed in place
    or made to require grad. Both flags are restored on exit."""

    def __init__(self, mode=True):
        self.mode = mode

    def __enter__(self):
        self._prev = (_C.is_grad_enabled(), _C.is_inference_mode_enabled())
        _C._set_inference_mode(bool(self.mode))
        _C._set_grad_enabled(not self.mode)

    def __exit__(self, *exc):
        _C._set_grad_enabled(self._prev[0])
        _C._set_inference_mode(self._prev[1])
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__(self.mode):
                return fn(*args, **kwargs)
        return wrapper

    def clone(self):
        return self.__class__(self.mode)
