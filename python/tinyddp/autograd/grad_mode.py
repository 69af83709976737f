"""torch.autograd.grad_mode: no_grad, enable_grad, set_grad_enabled, inference_mode. Grad mode and inference mode
are the engine's per-thread flags (engine/autograd/grad_mode.h, engine/core/inference_mode.h); each is a context
manager and a decorator, as PyTorch's: a decorated function runs inside a fresh copy of the context (clone()), a
decorated generator function has every step of its generator run inside one (the caller's mode between steps)."""
import functools
import inspect
import sys

from tinyddp import _C

is_grad_enabled = _C.is_grad_enabled


class _DecoratorContextManager:
    """1.13's: `@ctx` on a function or a generator function."""

    def __call__(self, fn):
        if inspect.isgeneratorfunction(fn):
            return self._wrap_generator(fn)

        @functools.wraps(fn)
        def decorate_context(*args, **kwargs):
            with self.clone():
                return fn(*args, **kwargs)
        return decorate_context

    def _wrap_generator(self, fn):
        """Each resumption of the generator (send, throw, close) inside a fresh context; the values it yields and
        returns pass through."""
        @functools.wraps(fn)
        def generator_context(*args, **kwargs):
            gen = fn(*args, **kwargs)
            try:
                with self.clone():
                    response = gen.send(None)
                while True:
                    try:
                        request = yield response
                    except GeneratorExit:
                        with self.clone():
                            gen.close()
                        raise
                    except BaseException:
                        with self.clone():
                            response = gen.throw(*sys.exc_info())
                    else:
                        with self.clone():
                            response = gen.send(request)
            except StopIteration as e:
                return e.value
        return generator_context

    def clone(self):
        return self.__class__()


class _GradModeContext(_DecoratorContextManager):
    mode = None

    def __enter__(self):
        self._prev = _C.is_grad_enabled()
        _C._set_grad_enabled(self.mode)

    def __exit__(self, *exc):
        _C._set_grad_enabled(self._prev)
        return False


class no_grad(_GradModeContext):
    mode = False


class enable_grad(_GradModeContext):
    mode = True


def _checked_mode(mode):
    if not isinstance(mode, bool):   # 1.13's _C._set_grad_enabled takes a bool only
        raise TypeError(f"enabled must be a bool (got {type(mode).__name__})")
    return mode


class set_grad_enabled(_DecoratorContextManager):
    """Sets grad mode at once (as a function) and restores the previous mode on exit (as a context manager). As
    a decorator it is 1.13's too: the mode set when the decorator is made stays set (2.x restores it), and each
    call runs in a copy that sets it and restores the mode found at the call."""

    def __init__(self, mode):
        self._prev = _C.is_grad_enabled()
        self.mode = _checked_mode(mode)
        _C._set_grad_enabled(self.mode)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _C._set_grad_enabled(self._prev)
        return False

    def clone(self):
        return self.__class__(self.mode)


class inference_mode(_DecoratorContextManager):
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

    def clone(self):
        return self.__class__(self.mode)
