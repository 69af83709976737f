"""torch.cuda as a PyTorch built without CUDA has it: tinyddp's Python front end computes on the CPU only."""
from tinyddp._device import _NO_CUDA


def is_available():
    return False


def device_count():
    return 0


def current_device():
    raise AssertionError(_NO_CUDA)


def set_device(device):
    raise AssertionError(_NO_CUDA)


__all__ = ["current_device", "device_count", "is_available", "set_device"]
