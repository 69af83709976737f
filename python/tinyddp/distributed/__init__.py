"""torch.distributed (its distributed_c10d subset) over dist/: the default process group, per thread.

Backends: "thread" (the ranks are threads of this process, started by tinyddp.multiprocessing.spawn; each rank
thread has its own default group) and "mpi" (one rank per process, under mpirun).
"""
import datetime

from tinyddp import _C

_d = _C._dist

is_initialized = _d.is_initialized
get_rank = _d.get_rank
get_world_size = _d.get_world_size
get_backend = _d.get_backend
destroy_process_group = _d.destroy_process_group


def is_available():
    return True


class ReduceOp:
    SUM = "sum"
    MAX = "max"


def init_process_group(backend, init_method=None, timeout=datetime.timedelta(minutes=30), world_size=-1, rank=-1,
                       store=None, group_name="", pg_options=None):
    """The default group of this thread. `timeout` bounds every collective wait of the group (the thread
    backend's waits use spawn's world timeout; see docs/python.md)."""
    _d.init_process_group(backend, rank, world_size, timeout.total_seconds())


def barrier(group=None, async_op=False, device_ids=None):
    _d.barrier()


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    work = _d.all_reduce(tensor, op)
    if async_op:
        return work
    work.wait()


def broadcast(tensor, src, group=None, async_op=False):
    work = _d.broadcast(tensor, src)
    if async_op:
        return work
    work.wait()


from tinyddp.distributed import algorithms  # noqa: E402  (torch.distributed.algorithms; needs tinyddp.nn)

__all__ = ["ReduceOp", "algorithms", "all_reduce", "barrier", "broadcast", "destroy_process_group", "get_backend",
           "get_rank", "get_world_size", "init_process_group", "is_available", "is_initialized"]
