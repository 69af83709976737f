"""torch.cuda as a PyTorch built without CUDA has it: tinyddp's Python front end computes on the CPU only.

What 1.13 answers there: is_available() False, device_count() 0; the seeding functions queue their call for a
CUDA initialization that never comes (no error, None); empty_cache does nothing; the memory counters are 0; what
needs a device (current_device, synchronize, get_device_name, ...) raises AssertionError "Torch not compiled with
CUDA enabled". torch.cuda.amp: autocast and GradScaler (cuda/amp/).
"""
import warnings

from tinyddp._device import _NO_CUDA


def _no_cuda(*args, **kwargs):
    raise AssertionError(_NO_CUDA)


def is_available():
    return False


def device_count():
    return 0


def is_initialized():
    return False


def _lazy(*args, **kwargs):
    """The seeding and RNG-state setters: queued until CUDA initializes (never, here)."""


manual_seed = manual_seed_all = seed = seed_all = set_rng_state = set_rng_state_all = _lazy


def get_rng_state_all():
    return []   # one state per device


def empty_cache():
    pass


def _zero(device=None):
    return 0


memory_allocated = max_memory_allocated = memory_reserved = max_memory_reserved = _zero


def memory_cached(device=None):
    warnings.warn("torch.cuda.memory_cached has been renamed to torch.cuda.memory_reserved", FutureWarning)
    return 0


def max_memory_cached(device=None):
    warnings.warn("torch.cuda.max_memory_cached has been renamed to torch.cuda.max_memory_reserved", FutureWarning)
    return 0


def get_arch_list():
    return []


def set_device(device):
    raise AttributeError("module 'torch._C' has no attribute '_cuda_setDevice'")   # 1.13's, without CUDA


current_device = synchronize = get_device_name = get_device_properties = get_device_capability = _no_cuda
initial_seed = get_rng_state = is_bf16_supported = init = _no_cuda


from tinyddp.cuda import amp  # noqa: E402  (it reads is_available above)

__all__ = ["amp", "current_device", "device_count", "empty_cache", "get_arch_list", "get_device_capability",
           "get_device_name", "get_device_properties", "get_rng_state", "get_rng_state_all", "init", "initial_seed",
           "is_available", "is_bf16_supported", "is_initialized", "manual_seed", "manual_seed_all",
           "max_memory_allocated", "max_memory_cached", "max_memory_reserved", "memory_allocated", "memory_cached",
           "memory_reserved", "seed", "seed_all", "set_device", "set_rng_state", "set_rng_state_all", "synchronize"]
