"""torch.distributed (its distributed_c10d subset) over dist/: the default process group, per thread.

Backends: "thread" (the ranks are threads of this process, started by tinyddp.multiprocessing.spawn; each rank
thread has its own default group) and "mpi" (one rank per process, under mpirun). "gloo", so that a PyTorch script
runs with only its import changed, is the thread backend, or "mpi" when the process was started by mpirun (outside
spawn); get_backend() still says "gloo".
"""
import datetime
import io
import os
import pickle
import threading

from tinyddp import _C
from tinyddp.futures import Future
from tinyddp.multiprocessing.spawn import _rank_thread

_d = _C._dist

is_initialized = _d.is_initialized
get_rank = _d.get_rank
get_world_size = _d.get_world_size
# The backend name init_process_group was given, per thread as the default group is.
_backend_name = threading.local()

# What mpirun sets in its processes (Open MPI, then MPICH/Intel MPI's PMI): gloo there selects the mpi backend,
# since the thread backend would give each process a world of its own.
_MPIRUN_SIZE_VARS = ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE")


def get_backend(group=None):
    _check_group(group, "get_backend")
    name = _d.get_backend()   # raises PyTorch's text when there is no default group
    return getattr(_backend_name, "name", None) or name


def destroy_process_group(group=None):
    _check_group(group, "destroy_process_group")
    _d.destroy_process_group()
    _backend_name.name = None


def is_available():
    return True


class ReduceOp:
    SUM = "sum"
    PRODUCT = "product"
    MIN = "min"
    MAX = "max"
    AVG = "avg"   # refused with gloo's text, as 1.13's gloo refuses it


class ProcessGroup:
    """The default group of this thread, as dist.group.WORLD names it. tinyddp has no subgroups: every
    collective, and DistributedDataParallel, runs on the default group."""

    def rank(self):
        return get_rank()

    def size(self):
        return get_world_size()

    def __repr__(self):
        return f"<tinyddp.distributed.ProcessGroup {get_backend()} (the default group)>"


class group:  # noqa: N801  (torch.distributed.group)
    WORLD = ProcessGroup()


def new_group(ranks=None, timeout=None, backend=None, pg_options=None):
    """Only the whole world (ranks=None, or every rank): tinyddp's collectives run on the default group."""
    if ranks is not None and sorted(ranks) != list(range(get_world_size())):
        raise NotImplementedError(f"new_group(ranks={list(ranks)}): tinyddp has no subgroups; every collective runs "
                                  f"on the default group of all {get_world_size()} ranks (new_group() or ranks=None).")
    return group.WORLD


def _check_group(group_, call):
    if group_ is not None and group_ is not group.WORLD:
        raise ValueError(f"{call}(group={group_!r}): tinyddp has only the default group; pass group=None or "
                         "dist.group.WORLD.")


class Work:
    """What a collective with async_op=True returns (torch.distributed's Work)."""

    def __init__(self, work, tensors):
        self._work, self._tensors = work, tensors

    def wait(self, timeout=None):
        return self._work.wait()

    def is_completed(self):
        return self._work.is_completed()

    def get_future(self):
        """A Future completed with the list of tensors the collective wrote, once it completes."""
        return Future._of_work(self._work, self._tensors)


def init_process_group(backend, init_method=None, timeout=datetime.timedelta(minutes=30), world_size=-1, rank=-1,
                       store=None, group_name="", pg_options=None):
    """The default group of this thread. `timeout` bounds every collective wait of the group (the thread
    backend's waits use spawn's world timeout; see docs/python.md). "gloo" runs on the thread backend (inside
    spawn, or a one-rank group outside it), or on "mpi" under mpirun; init_method ("env://", "tcp://...") and
    MASTER_ADDR/MASTER_PORT are not needed by either and are ignored."""
    name = str(backend).lower()   # as torch.distributed.Backend(name)
    if name == "nccl":
        raise RuntimeError("Distributed package doesn't have NCCL built in")
    if name != "gloo" or _d.is_initialized():   # the latter raises PyTorch's "initialize ... twice" text
        _d.init_process_group(backend, rank, world_size, timeout.total_seconds())
    else:
        mpirun = next((v for v in _MPIRUN_SIZE_VARS if v in os.environ), None)
        actual = "thread" if mpirun is None or getattr(_rank_thread, "active", False) else "mpi"
        try:
            _d.init_process_group(actual, rank, world_size, timeout.total_seconds())
        except RuntimeError as e:
            where = f"under mpirun ({mpirun} is set)" if actual == "mpi" else "here"
            raise RuntimeError(f"init_process_group(\"gloo\") {where} runs on tinyddp's \"{actual}\" backend: {e}") \
                from None
    _backend_name.name = name


def barrier(group=None, async_op=False, device_ids=None):
    _check_group(group, "barrier")
    _d.barrier()


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    _check_group(group, "all_reduce")
    work = Work(_d.all_reduce(tensor, op), [tensor])
    if async_op:
        return work
    work.wait()


def broadcast(tensor, src, group=None, async_op=False):
    _check_group(group, "broadcast")
    work = Work(_d.broadcast(tensor, src), [tensor])
    if async_op:
        return work
    work.wait()


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """tensor_list[r] = rank r's `tensor`, on every rank (checked with gloo's texts)."""
    _check_group(group, "all_gather")
    n = get_world_size()
    if len(tensor_list) != n:
        raise RuntimeError(f"ProcessGroupGloo::allgather: invalid output tensor list at index 0 (expected length {n}, "
                           f"got {len(tensor_list)})")
    for t in tensor_list:
        if t.dtype != tensor.dtype:
            raise RuntimeError(f"Invalid usage of tensors with different dtypesFound {t.dtype} and  {tensor.dtype}")
        if t.shape != tensor.shape:
            raise RuntimeError("ProcessGroupGloo::allgather: invalid tensor size at index 0 (expected "
                               f"{_size_text(tensor.shape)}, got {_size_text(t.shape)})")
    work = Work(_d.all_gather(list(tensor_list), tensor), list(tensor_list))
    if async_op:
        return work
    work.wait()


def _size_text(shape):
    return "(" + ", ".join(str(d) for d in shape) + ")"


def gather(tensor, gather_list=None, dst=0, group=None, async_op=False):
    """gather_list[r] = rank r's `tensor` on rank `dst` (an all_gather underneath; other ranks pass None)."""
    _check_group(group, "gather")
    rank = get_rank()
    if rank == dst and (gather_list is None or len(gather_list) != get_world_size()):
        raise ValueError("Argument ``gather_list`` must be specified on destination rank.")
    if rank != dst and gather_list:
        raise ValueError("Argument ``gather_list`` must NOT be specified on non-destination ranks.")
    from tinyddp._tensor import empty
    staging = [empty(tensor.shape, dtype=tensor.dtype) for _ in range(get_world_size())]
    all_gather(staging, tensor)
    if rank == dst:
        with _no_grad():
            for out, got in zip(gather_list, staging):
                out.copy_(got)
    if async_op:
        return _completed_work(gather_list or [])


def reduce(tensor, dst, op=ReduceOp.SUM, group=None, async_op=False):
    """The reduction lands in rank `dst`'s tensor. tinyddp reduces on every rank (an all_reduce), so the other
    ranks' tensors hold it too; PyTorch leaves theirs unspecified."""
    _check_group(group, "reduce")
    return all_reduce(tensor, op, async_op=async_op)


def all_gather_object(object_list, obj, group=None):
    """object_list[r] = rank r's `obj` (pickled, as PyTorch's)."""
    _check_group(group, "all_gather_object")
    for r, data in enumerate(_d.all_gather_bytes(_pickle(obj))):
        object_list[r] = pickle.loads(data)


def broadcast_object_list(object_list, src=0, group=None, device=None):
    """Every rank's object_list takes rank `src`'s elements, in place (pickled, as PyTorch's)."""
    _check_group(group, "broadcast_object_list")
    mine = _pickle(list(object_list)) if get_rank() == src else b""
    object_list[:] = pickle.loads(_d.all_gather_bytes(mine)[src])


def _pickle(obj):
    buf = io.BytesIO()
    pickle.Pickler(buf).dump(obj)
    return buf.getvalue()


def _no_grad():
    from tinyddp.autograd.grad_mode import no_grad
    return no_grad()


def _completed_work(tensors):
    class _Done:
        def wait(self):
            return True

        def is_completed(self):
            return True
    return Work(_Done(), tensors)


from tinyddp.distributed import algorithms  # noqa: E402  (torch.distributed.algorithms; needs tinyddp.nn)
from tinyddp.distributed.grad_bucket import GradBucket  # noqa: E402

__all__ = ["GradBucket", "ProcessGroup", "ReduceOp", "Work", "algorithms", "all_gather", "all_gather_object",
           "all_reduce", "barrier", "broadcast", "broadcast_object_list", "destroy_process_group", "gather",
           "get_backend", "get_rank", "get_world_size", "group", "init_process_group", "is_available",
           "is_initialized", "new_group", "reduce"]
