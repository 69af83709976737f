"""torch.cuda.amp.autocast (torch.autocast("cuda", ...): on tinyddp, without CUDA, 1.13's warning, then disabled),
and the custom_fwd / custom_bwd decorators for autograd Functions."""
import functools

from tinyddp import _tensor
from tinyddp.amp import autocast_mode


class autocast(autocast_mode.autocast):  # noqa: N801
    def __init__(self, enabled=True, dtype=_tensor.float16, cache_enabled=True):
        super().__init__("cuda", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)


def _cast(value, dtype):
    """Floating CUDA tensors (none in tinyddp) cast to dtype, through containers; everything else as it is."""
    if isinstance(value, _tensor.Tensor):
        return value   # never a CUDA tensor
    if isinstance(value, str):
        return value
    if type(value).__module__ == "numpy":
        return value
    if isinstance(value, dict):
        return {_cast(k, dtype): _cast(v, dtype) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(v, dtype) for v in value)
    return value


def custom_fwd(fwd=None, *, cast_inputs=None):
    """Decorates a custom Function's forward (with or without arguments), recording whether autocast was on."""
    if fwd is None:
        return functools.partial(custom_fwd, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        if cast_inputs is None:
            args[0]._fwd_used_autocast = autocast_mode.is_autocast_enabled()
            return fwd(*args, **kwargs)
        autocast_context = autocast_mode.is_autocast_enabled()
        args[0]._fwd_used_autocast = False
        if autocast_context:
            with autocast(enabled=False):
                return fwd(*_cast(args, cast_inputs), **_cast(kwargs, cast_inputs))
        return fwd(*args, **kwargs)
    return decorate_fwd


def custom_bwd(bwd):
    """Decorates a custom Function's backward: it runs with the autocast state its forward had."""
    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        with autocast(enabled=args[0]._fwd_used_autocast):
            return bwd(*args, **kwargs)
    return decorate_bwd
