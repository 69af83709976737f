"""torch.utils.data._utils.worker: get_worker_info and tinyddp's in-process stand-in for a loader's workers.

1.13 runs each of num_workers workers in its own process, which seeds its `torch`, `random` and NumPy streams
from the iterator's base seed (``base_seed + id``; NumPy's from a hash of both), holds its own copy of the
dataset, calls worker_init_fn(id) and then fetches the batches sent to it. tinyddp runs the workers in the
calling thread instead, one fetch at a time, but gives each its own copy of the dataset and its own three
streams, swapped in around everything it runs: so a dataset that draws random numbers (an augmentation)
gets the values 1.13's worker would, and the main streams advance exactly as 1.13's main process does.
"""
import copy
import random
import threading

from tinyddp import _C
from tinyddp.random import Generator

_local = threading.local()   # worker_info of the worker running on this thread (None in the main program)


class WorkerInfo:
    """What get_worker_info() returns inside a worker: id, num_workers, seed, dataset (read-only fields)."""

    __initialized = False

    def __init__(self, **kwargs):
        for key, value in kwargs.items():
            setattr(self, key, value)
        self.__keys = tuple(kwargs)
        self.__initialized = True

    def __setattr__(self, key, value):
        if self.__initialized:
            raise RuntimeError(f"Cannot assign attributes to {type(self).__name__} objects")
        super().__setattr__(key, value)

    def __repr__(self):
        fields = ", ".join(f"{key}={getattr(self, key)}" for key in self.__keys)
        return f"{type(self).__name__}({fields})"


def get_worker_info():
    """The WorkerInfo of the DataLoader worker this code runs in, or None outside one (the main program)."""
    return getattr(_local, "info", None)


def _numpy_seed(base_seed, worker_id):
    """The four 32-bit words 1.13 seeds a worker's NumPy with: NumPy's SeedSequence over (worker_id, the low and
    the high half of base_seed, 0), which 1.13 writes out by hand (torch/utils/data/_utils/worker.py)."""
    import numpy as np
    mask32 = 0xFFFFFFFF
    entropy = [worker_id, base_seed & mask32, base_seed >> 32, 0]
    return np.random.SeedSequence(entropy).generate_state(4).tolist()


class _Streams:
    """One owner's `torch` (the thread's default generator), `random` and NumPy states; swap() exchanges them
    with the live ones."""

    def __init__(self, seed, numpy_seed):
        g = Generator()
        g.manual_seed(seed)
        self.torch = g.get_state()
        state = random.Random(seed)
        self.random = state.getstate()
        self.numpy = None
        if numpy_seed is not None:
            import numpy as np
            self.numpy = np.random.RandomState(numpy_seed).get_state()

    def swap(self):
        default = _C.default_generator()
        live_torch, live_random = default.get_state(), random.getstate()
        default.set_state(self.torch)
        random.setstate(self.random)
        self.torch, self.random = live_torch, live_random
        if self.numpy is not None:
            import numpy as np
            live_numpy = np.random.get_state()
            np.random.set_state(self.numpy)
            self.numpy = live_numpy


def _has_numpy():
    try:
        import numpy  # noqa: F401
    except ImportError:   # pragma: no cover
        return False
    return True


class InProcessWorker:
    """Worker `worker_id` of num_workers: its dataset copy, its streams, its WorkerInfo; run(fn) calls fn in it."""

    def __init__(self, dataset, worker_id, num_workers, base_seed):
        self.id = worker_id
        seed = base_seed + worker_id
        self.streams = _Streams(seed, _numpy_seed(base_seed, worker_id) if _has_numpy() else None)
        # A process's copy of the dataset: attributes the worker (its worker_init_fn) sets stay its own, while
        # the data it points to (tensors, lists) is shared, as a forked worker's pages are until written.
        self.dataset = copy.copy(dataset)
        self.info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=self.dataset)
        self.fetcher = None
        self.init_error = None   # an exception from worker_init_fn or the fetcher, raised at its first task

    def run(self, fn, *args):
        outer = getattr(_local, "info", None)
        _local.info = self.info
        self.streams.swap()
        try:
            return fn(*args)
        finally:
            self.streams.swap()
            _local.info = outer
