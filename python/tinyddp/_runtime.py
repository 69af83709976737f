"""torch's process-wide settings that scripts set up front: the thread counts (ATen's, torch._C's in 1.13), the
deterministic-algorithms switches and the default dtype (torch/__init__.py). tinyddp keeps and reports them as
1.13 does; its engine is deterministic whatever they say, and computes on the calling thread.
"""
import builtins
import os

from tinyddp import _tensor


def _default_num_threads():
    """ATen's default: OMP_NUM_THREADS, else MKL_NUM_THREADS, else c10's defaultNumThreads() (the CPU count halved
    on x86-64, for hyperthreads)."""
    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        value = os.environ.get(name, "")
        if value.isdigit() and int(value) > 0:
            return int(value)
    return builtins.max((os.cpu_count() or 1) // 2, 1)


_num_threads = None           # set_num_threads's value, or None for the default
_num_interop_threads = None   # set once, as 1.13's


def get_num_threads():
    return _default_num_threads() if _num_threads is None else _num_threads


def set_num_threads(int):  # noqa: A002  (1.13's argument name)
    global _num_threads
    if not isinstance(int, builtins.int) or isinstance(int, builtins.bool):
        raise RuntimeError(f"set_num_threads expects an int, but got {type(int).__name__}")
    if int <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    _num_threads = int


def get_num_interop_threads():
    return _default_num_threads() if _num_interop_threads is None else _num_interop_threads


def set_num_interop_threads(int):  # noqa: A002
    global _num_interop_threads
    if not isinstance(int, builtins.int) or isinstance(int, builtins.bool):
        raise RuntimeError(f"set_num_interop_threads expects an int, but got {type(int).__name__}")
    if int <= 0:
        raise RuntimeError("set_num_interop_threads expects a positive integer")
    if _num_interop_threads is not None:   # 1.13 aborts the process here (an uncaught c10::Error)
        raise RuntimeError("Error: cannot set number of interop threads after parallel work has started or "
                           "set_num_interop_threads called")
    _num_interop_threads = int


_deterministic = {"mode": False, "warn_only": False}


def use_deterministic_algorithms(mode, *, warn_only=False):
    """Recorded (and read back by are_deterministic_algorithms_enabled); tinyddp's ops are deterministic anyway."""
    for name, value, pos in (("mode", mode, 1), ("warn_only", warn_only, 2)):
        if not isinstance(value, builtins.bool):
            raise TypeError(f"_set_deterministic_algorithms(): argument '{name}' "
                            f"{'(position 1) ' if pos == 1 else ''}must be bool, not {type(value).__name__}")
    _deterministic["mode"], _deterministic["warn_only"] = mode, warn_only


def are_deterministic_algorithms_enabled():
    return _deterministic["mode"]


def is_deterministic_algorithms_warn_only_enabled():
    return _deterministic["warn_only"]


def set_deterministic_debug_mode(debug_mode):
    if not isinstance(debug_mode, (builtins.int, str)):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if isinstance(debug_mode, str):
        modes = {"default": 0, "warn": 1, "error": 2}
        if debug_mode not in modes:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, `warn`, `error`, but got "
                               + debug_mode)
        debug_mode = modes[debug_mode]
    if debug_mode == 0:
        use_deterministic_algorithms(False)
    elif debug_mode == 1:
        use_deterministic_algorithms(True, warn_only=True)
    elif debug_mode == 2:
        use_deterministic_algorithms(True)
    else:
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}")


def get_deterministic_debug_mode():
    if are_deterministic_algorithms_enabled():
        return 1 if is_deterministic_algorithms_warn_only_enabled() else 2
    return 0


_float32_matmul_precision = "highest"


def get_float32_matmul_precision():
    return _float32_matmul_precision


def set_float32_matmul_precision(precision):
    """Recorded and reported back, as 1.13's; it changes nothing here (tinyddp's CPU products are float32 with
    float32 accumulation, 'highest', whatever it says; 1.13's CPU kernels ignore it too). An unknown value is left
    unrecorded, as 1.13's (which prints a C++ warning, not a Python one)."""
    global _float32_matmul_precision
    if not isinstance(precision, str):
        raise RuntimeError(f"set_float32_matmul_precision expects a str, but got {type(precision).__name__}")
    if precision in ("highest", "high", "medium"):
        _float32_matmul_precision = precision


def get_default_dtype():
    return _tensor.float32


def set_default_dtype(d):
    """Only float32, the default, is accepted: tinyddp's factories and type promotion make float32."""
    if not isinstance(d, _tensor.dtype):
        raise TypeError("invalid dtype object: only floating-point types are supported as the default type")
    if not d.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    if d is not _tensor.float32:
        raise NotImplementedError(f"tinyddp: the default dtype is torch.float32 and cannot be changed (to {d!r}): "
                                  "tinyddp's factories and type promotion make float32. Pass dtype= to the factories "
                                  "(torch.zeros(..., dtype=torch.float64)) or convert with .double() instead.")
