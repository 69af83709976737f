"""torch.random: seeding and the state of the calling thread's default generator, and torch.Generator.

The numbers are PyTorch 1.13's CPU generator's (engine/ops/generator.h): after ``manual_seed(s)``, randn, rand,
randint, randperm, nn.Linear's init, dropout's mask and a DistributedSampler's order are PyTorch's for ``s``. The
default generator is per thread: under ``tinyddp.multiprocessing.spawn`` each rank seeds its own, as each process
does in PyTorch.
"""
import contextlib

from tinyddp import _C
from tinyddp._device import device as _device_type


class Generator(_C.Generator):
    """torch.Generator on the CPU: an independent stream, seeded with kDefaultSeed until manual_seed."""
    # type(g) and repr(g) name it as 1.13 does, "torch._C.Generator" (generators do not pickle, here as there, so
    # no lookup by that name follows)
    __module__ = "torch._C"

    def __init__(self, device="cpu"):
        d = _device_type(device)
        if d.type != "cpu":
            raise RuntimeError(f"tinyddp has no {d.type} generators: its Python front end runs on the CPU only.")
        super().__init__()

    @property
    def device(self):
        return _device_type("cpu")


_C.Generator.__module__ = "torch._C"   # what manual_seed and default_generator return: the C++ class itself


def manual_seed(seed):
    """Seeds the calling thread's default generator and returns it (PyTorch's is process-wide; docs/python.md)."""
    return _C.manual_seed(int(seed))


def seed():
    """Seeds the calling thread's default generator non-deterministically and returns the seed."""
    return _C.default_generator().seed()


def initial_seed():
    return _C.default_generator().initial_seed()


def get_rng_state():
    """The default generator's whole state, opaque bytes (PyTorch's is a ByteTensor) for set_rng_state."""
    return _C.default_generator().get_state()


def set_rng_state(new_state):
    _C.default_generator().set_state(bytes(new_state))


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices"):
    """Restores the default CPU generator's state on exit, as 1.13's; without CUDA there are no device
    generators to fork (naming devices fails as 1.13's does without CUDA)."""
    from tinyddp import cuda
    if not enabled:
        yield
        return
    devices = list(range(cuda.device_count())) if devices is None else list(devices)
    cpu_rng_state = get_rng_state()
    gpu_rng_states = [cuda.get_rng_state(device) for device in devices]
    try:
        yield
    finally:
        set_rng_state(cpu_rng_state)
        for device, state in zip(devices, gpu_rng_states):
            cuda.set_rng_state(state, device)
