"""torch.backends.cudnn on a build without cuDNN: is_available() False, version() None, and the flags scripts set
(deterministic, benchmark, enabled, allow_tf32) kept with 1.13's defaults and checks (a bool, else RuntimeError
"set_deterministic_cudnn expects a bool, but got int")."""
import sys
from contextlib import contextmanager

from tinyddp.backends._flags import PropModule, bool_flag


def version():
    return None


def is_available():
    return False


def is_acceptable(tensor):
    return False


@contextmanager
def flags(enabled=False, benchmark=False, deterministic=False, allow_tf32=True):
    module = sys.modules[__name__]
    orig = (module.enabled, module.benchmark, module.deterministic, module.allow_tf32)
    module.enabled, module.benchmark, module.deterministic, module.allow_tf32 = \
        enabled, benchmark, deterministic, allow_tf32
    try:
        yield
    finally:
        module.enabled, module.benchmark, module.deterministic, module.allow_tf32 = orig


class CudnnModule(PropModule):
    enabled = bool_flag("set_enabled_cudnn")
    deterministic = bool_flag("set_deterministic_cudnn")
    benchmark = bool_flag("set_benchmark_cudnn")
    allow_tf32 = bool_flag("set_allow_tf32_cublas")   # 1.13's setter names cuBLAS here too
    benchmark_limit = None


_module = CudnnModule(sys.modules[__name__], __name__)
_module.__dict__["_flags"] = {"set_enabled_cudnn": True, "set_deterministic_cudnn": False,
                              "set_benchmark_cudnn": False, "set_allow_tf32_cublas": True}
sys.modules[__name__] = _module
