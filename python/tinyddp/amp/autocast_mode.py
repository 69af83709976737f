"""torch.amp.autocast_mode: torch.autocast and the autocast state functions of torch (is_autocast_enabled, ...).

tinyddp has no float16 or bfloat16 tensors and no CUDA, so autocast never casts; what scripts see is 1.13's
behaviour on a machine without CUDA: autocast("cuda") (and torch.cuda.amp.autocast) warn "User provided device_type
of 'cuda', but CUDA is not available. Disabling" and run their region as it is; autocast("cpu") with a dtype other
than bfloat16 warns and disables itself, then raises 1.13's RuntimeError when entered (1.13 still sets the CPU
autocast dtype, which must be bfloat16); `enabled=False` regions are plain. The one region 1.13 would run
differently, an enabled CPU autocast to bfloat16, raises NotImplementedError when entered.

The state is per thread (as 1.13's): whether autocast is on for each device type, its dtype, the cache flag and the
nesting depth, which the functions below read and set as torch's do.
"""
import functools
import threading
import warnings

from tinyddp import _tensor

_DEVICE_TYPE_ERROR = "User specified autocast device_type must be 'cuda' or 'cpu'"


class _State(threading.local):
    def __init__(self):
        self.gpu_enabled, self.cpu_enabled = False, False
        self.gpu_dtype, self.cpu_dtype = _tensor.float16, _tensor.bfloat16
        self.cache_enabled, self.nesting = True, 0


_state = _State()


def is_autocast_enabled():
    return _state.gpu_enabled


def set_autocast_enabled(enabled):
    _state.gpu_enabled = bool(enabled)


def is_autocast_cpu_enabled():
    return _state.cpu_enabled


def set_autocast_cpu_enabled(enabled):
    _state.cpu_enabled = bool(enabled)


def get_autocast_gpu_dtype():
    return _state.gpu_dtype


def set_autocast_gpu_dtype(dtype):
    if not isinstance(dtype, _tensor.dtype):
        raise TypeError(f"dtype must be a torch.dtype (got {type(dtype).__name__})")
    _state.gpu_dtype = dtype


def get_autocast_cpu_dtype():
    return _state.cpu_dtype


def set_autocast_cpu_dtype(dtype):
    if dtype is not _tensor.bfloat16:
        raise RuntimeError("Currently, AutocastCPU only support Bfloat16 as the autocast_cpu_dtype")
    _state.cpu_dtype = dtype


def is_autocast_cache_enabled():
    return _state.cache_enabled


def set_autocast_cache_enabled(enabled):
    _state.cache_enabled = bool(enabled)


def autocast_increment_nesting():
    _state.nesting += 1
    return _state.nesting


def autocast_decrement_nesting():
    _state.nesting -= 1
    return _state.nesting


def clear_autocast_cache():
    pass   # nothing is cached: tinyddp's autocast never casts


def _amp_definitely_not_available():
    from tinyddp import cuda
    return not cuda.is_available()


class autocast:  # noqa: N801  (torch.autocast)
    """A context manager and decorator that would run its region's ops in a lower precision dtype; see the module
    docstring for what it does in tinyddp (1.13's warnings and disabling; an enabled CPU bfloat16 region raises)."""

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        self.device = device_type
        if self.device == "cuda":
            self.fast_dtype = get_autocast_gpu_dtype()
        elif self.device == "cpu":
            self.fast_dtype = get_autocast_cpu_dtype()
        else:
            raise RuntimeError(_DEVICE_TYPE_ERROR)
        self._cache_enabled = is_autocast_cache_enabled()
        if enabled and _amp_definitely_not_available() and self.device == "cuda":
            warnings.warn("User provided device_type of 'cuda', but CUDA is not available. Disabling")
            enabled = False
        if dtype is not None:
            self.fast_dtype = dtype
        if cache_enabled is not None:
            self._cache_enabled = cache_enabled
        if self.device == "cpu" and self.fast_dtype is not _tensor.bfloat16:
            warnings.warn("In CPU autocast, but the target dtype is not supported. Disabling autocast.\n"
                          "CPU Autocast only supports dtype of torch.bfloat16 currently.")
            enabled = False
        if self.device == "cuda" and self.fast_dtype is _tensor.bfloat16:
            from tinyddp import cuda
            if not cuda.is_bf16_supported():   # raises 1.13's "Torch not compiled with CUDA enabled"
                raise RuntimeError("Current CUDA Device does not support bfloat16. Please switch dtype to float16.")
        self._enabled = enabled

    def __enter__(self):
        if self.device == "cpu" and self._enabled:
            raise NotImplementedError(
                "tinyddp: CPU autocast to torch.bfloat16 is not supported (tinyddp has no bfloat16 tensors); run "
                "the region in float32 (remove the autocast, or pass enabled=False)")
        self.prev_cache_enabled = is_autocast_cache_enabled()
        if self.device == "cpu":
            self.prev, self.prev_fastdtype = is_autocast_cpu_enabled(), get_autocast_cpu_dtype()
            set_autocast_cpu_enabled(self._enabled)
            set_autocast_cpu_dtype(self.fast_dtype)
        else:
            self.prev, self.prev_fastdtype = is_autocast_enabled(), get_autocast_gpu_dtype()
            set_autocast_gpu_dtype(self.fast_dtype)
            set_autocast_enabled(self._enabled)
        autocast_increment_nesting()
        set_autocast_cache_enabled(self._cache_enabled)

    def __exit__(self, exc_type, exc_val, exc_tb):
        if autocast_decrement_nesting() == 0:
            clear_autocast_cache()
        if self.device == "cpu":
            set_autocast_cpu_enabled(self.prev)
            set_autocast_cpu_dtype(self.prev_fastdtype)
        else:
            set_autocast_enabled(self.prev)
            set_autocast_gpu_dtype(self.prev_fastdtype)
        set_autocast_cache_enabled(self.prev_cache_enabled)
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def decorate_autocast(*args, **kwargs):
            with self:
                return func(*args, **kwargs)
        return decorate_autocast
