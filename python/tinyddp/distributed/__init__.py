"""torch.distributed (its distributed_c10d subset) over dist/: the default process group, per thread, and the
subgroups new_group makes of it; collectives and send/recv with gloo's texts (tests/golden/dist_collectives.json).

Backends: "thread" (the ranks are threads of this process, started by tinyddp.multiprocessing.spawn; each rank
thread has its own default group) and "mpi" (one rank per process, under mpirun). "gloo", so that a PyTorch script
runs with only its import changed, is the thread backend, or "mpi" when the process was started by mpirun (outside
spawn); get_backend() still says "gloo".
"""
import datetime
import enum
import io
import logging
import os
import pickle
import threading
import warnings

from tinyddp import _C
from tinyddp.futures import Future
from tinyddp.multiprocessing.spawn import _rank_thread

_d = _C._dist

is_initialized = _d.is_initialized
# The backend name init_process_group was given, per thread as the default group is.
_backend_name = threading.local()

# What mpirun sets in its processes (Open MPI, then MPICH/Intel MPI's PMI): gloo there selects the mpi backend,
# since the thread backend would give each process a world of its own.
_MPIRUN_SIZE_VARS = ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE")


class Backend:
    """torch.distributed.Backend: its names are plain lower-case strings, and Backend(name) returns the one
    `name` spells (any case), as 1.13's does."""
    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    UCC = "ucc"
    MPI = "mpi"
    TCP = "tcp"

    def __new__(cls, name):
        if not isinstance(name, str):
            raise ValueError(f"Backend name must be a string, but got: {name}")
        value = getattr(Backend, name.upper(), Backend.UNDEFINED)
        if value == Backend.TCP:
            raise ValueError("TCP backend has been deprecated. Please use Gloo or MPI backend for collective "
                             "operations on CPU tensors.")
        if value == Backend.UNDEFINED:
            raise ValueError(f"Invalid backend: '{name}'")
        return value


class DebugLevel(enum.Enum):
    """torch.distributed.DebugLevel: how much the reducer's errors say (TORCH_DISTRIBUTED_DEBUG)."""
    OFF = 0
    INFO = 1
    DETAIL = 2


# The level, per process as 1.13's: read from TORCH_DISTRIBUTED_DEBUG when this module is imported (an invalid value
# fails the import, as 1.13's), and again by set_debug_level_from_env(). spawn's rank threads stand for processes
# that imported torch anew: each has the level spawn read (multiprocessing/spawn.py).
_debug_level = _d.debug_level_from_env()


def get_debug_level():
    return DebugLevel[getattr(_rank_thread, "debug_level", None) or _debug_level]


def set_debug_level(level):
    global _debug_level
    name = DebugLevel(level).name if not isinstance(level, DebugLevel) else level.name
    if getattr(_rank_thread, "debug_level", None) is not None:
        _rank_thread.debug_level = name
    else:
        _debug_level = name


def set_debug_level_from_env():
    set_debug_level(DebugLevel[_d.debug_level_from_env()])


def is_gloo_available():
    return True


def is_nccl_available():
    return False


def is_mpi_available():
    """1.13's answer for its gloo build (tinyddp's "mpi" backend is its own, under mpirun)."""
    return False


def is_ucc_available():
    return False


def get_backend(group=None):
    _group(group, "get_backend")
    name = _d.get_backend()   # raises PyTorch's text when there is no default group
    return getattr(_backend_name, "name", None) or name


def destroy_process_group(group=None):
    """Ends the default group (a subgroup's end is its last reference's)."""
    if group is not None and group is not _WORLD:
        _group(group, "destroy_process_group")
        return
    assert _d.is_initialized()   # 1.13's `assert pg is not None`: a second destroy is an AssertionError
    _d.destroy_process_group()
    _backend_name.group_count = 0
    _backend_name.name = None
    _rank_thread.backend = None


def is_available():
    return True


class ReduceOp:
    SUM = "sum"
    PRODUCT = "product"
    MIN = "min"
    MAX = "max"
    AVG = "avg"   # refused with gloo's text, as 1.13's gloo refuses it


class ProcessGroup:
    """A group of ranks: dist.group.WORLD (this thread's default group) or one that new_group made. rank() and
    size() are this rank's place in it; collectives name their roots and peers by world rank, as 1.13's do."""

    def __init__(self, pg=None, ranks=None):
        self._pg = pg          # the C++ group; None: the default group
        self._ranks = ranks    # the world rank of each of its ranks; None: the world

    def rank(self):
        return _d.get_rank() if self._pg is None else self._pg.rank()

    def size(self):
        return _d.get_world_size() if self._pg is None else self._pg.size()

    def __repr__(self):
        if self._ranks is None:
            return f"<tinyddp.distributed.ProcessGroup {get_backend()} (the default group)>"
        return f"<tinyddp.distributed.ProcessGroup {get_backend()} of ranks {self._ranks}>"


_WORLD = ProcessGroup()


class _WorldMeta(type):
    """group.WORLD and GroupMember.WORLD: the default group once init_process_group has run on this rank, None
    before it and after destroy_process_group, as 1.13's."""
    @property
    def WORLD(cls):  # noqa: N802
        return _WORLD if _d.is_initialized() else None


class group(metaclass=_WorldMeta):  # noqa: N801  (torch.distributed.group)
    pass


class GroupMember(metaclass=_WorldMeta):  # noqa: N801  (torch.distributed.GroupMember)
    NON_GROUP_MEMBER = object()


default_pg_timeout = datetime.timedelta(minutes=30)


def is_torchelastic_launched():
    return os.getenv("TORCHELASTIC_RUN_ID") is not None


def get_rank(group=None):
    """This rank's place in `group` (the world by default); -1 in a group it is not part of."""
    g = _group(group, "get_rank")
    return -1 if g is None else g.rank()


def get_world_size(group=None):
    g = _group(group, "get_world_size")
    return -1 if g is None else g.size()


def get_global_rank(group, group_rank):
    """The world's rank of `group`'s rank group_rank."""
    g = _group(group, "get_global_rank")
    if g is None or g._ranks is None:
        return group_rank
    if not 0 <= group_rank < len(g._ranks):
        raise RuntimeError(f"Group rank {group_rank} is not part of group {g!r}")
    return g._ranks[group_rank]


def get_group_rank(group, global_rank):
    g = _group(group, "get_group_rank")
    if g is None or g._ranks is None:
        return global_rank
    if global_rank not in g._ranks:
        raise RuntimeError(f"Global rank {global_rank} is not part of group {g!r}")
    return g._ranks.index(global_rank)


def get_process_group_ranks(group):
    g = _group(group, "get_process_group_ranks")
    return list(range(get_world_size())) if g._ranks is None else list(g._ranks)


def new_group(ranks=None, timeout=None, backend=None, pg_options=None):
    """A group of the world's `ranks` (sorted, as 1.13 sorts them), numbered in that order. Every rank calls it,
    members or not, in the same order; a rank not in `ranks` gets GroupMember.NON_GROUP_MEMBER, and collectives
    on that group then do nothing there (1.13's warning). All ranks (ranks=None) is the default group."""
    n = get_world_size()
    if ranks is not None:
        ranks = sorted(ranks)
        if len(ranks) > n:
            raise RuntimeError("the new group's world size should be less or equal to the world size set by "
                               "init_process_group")
        for r in ranks:
            if r < 0 or r >= n:
                raise RuntimeError("The new group's rank should be within the the world_size set by "
                                   "init_process_group")
    _backend_name.group_count = getattr(_backend_name, "group_count", 0) + 1
    if _gloo():
        _log_store_based_barrier(get_rank())
    if ranks is None or ranks == list(range(n)):
        return _WORLD
    pg = _d.new_group(ranks)
    return GroupMember.NON_GROUP_MEMBER if pg is None else ProcessGroup(pg, ranks)


def _group(group_, call):
    """The ProcessGroup a call runs on (None: the world); None when this rank is not in it."""
    if group_ is None:
        return _WORLD
    if group_ is GroupMember.NON_GROUP_MEMBER:
        return None
    if not isinstance(group_, ProcessGroup):   # 1.13's text (its group map has no such key)
        raise RuntimeError(f"Group {group_!r} is not registered, please create group with torch.distributed."
                           "new_group API")
    return group_


def _not_in_group(call):
    warnings.warn(f"Running {call} on global rank {get_rank()} which does not belong to the given group.")


class Work:
    """What a collective with async_op=True returns (torch.distributed's Work)."""

    def __init__(self, work, tensors, finish=None):
        self._work, self._tensors, self._finish = work, tensors, finish

    def wait(self, timeout=None):
        done = self._work.wait()
        self._run_finish()
        return done

    def is_completed(self):
        if not self._work.is_completed():
            return False
        self._run_finish()
        return True

    def _run_finish(self):
        # the Python part of a collective (copies out of staging tensors), once, after the C++ part completed
        finish, self._finish = self._finish, None
        if finish is not None:
            finish()

    def get_future(self):
        """A Future completed with the list of tensors the collective wrote, once it completes (and its Python
        part, if any, has run: the Future drives this Work)."""
        return Future._of_work(self, self._tensors)


def init_process_group(backend, init_method=None, timeout=datetime.timedelta(minutes=30), world_size=-1, rank=-1,
                       store=None, group_name="", pg_options=None):
    """The default group of this thread. `timeout` bounds every collective wait of the group (the thread
    backend's waits use spawn's world timeout; see docs/python.md). "gloo" runs on the thread backend (inside
    spawn, or a one-rank group outside it), or on "mpi" under mpirun; init_method ("env://", "tcp://...") and
    MASTER_ADDR/MASTER_PORT are not needed by either and are ignored."""
    name = str(backend).lower()   # as torch.distributed.Backend(name)
    if name not in ("gloo", "nccl", "mpi", "ucc", "thread"):   # 1.13's Backend(...) knows the first four
        raise ValueError(f"Invalid backend: '{backend}'")
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
    _rank_thread.backend = name   # "thread": the rank's warnings are this process's (multiprocessing/spawn.py)
    _d.set_detail_fingerprints(get_debug_level() == DebugLevel.DETAIL)   # 1.13's DETAIL wrapper's mismatch text
    _backend_name.group_count = 1
    if name == "gloo":
        _log_store_based_barrier(get_rank())


def _log_store_based_barrier(rank):
    """The INFO lines of 1.13's store-based barrier after a gloo group's creation (init_process_group and every
    new_group), each rank's own, on logger torch.distributed.distributed_c10d: its key counts the groups made."""
    logger = logging.getLogger("torch.distributed.distributed_c10d")
    key = f"store_based_barrier_key:{_backend_name.group_count}"
    logger.info(f"Added key: {key} to store for rank: {rank}")
    logger.info(f"Rank {rank}: Completed store-based barrier for key:{key} with {get_world_size()} nodes.")


def _done(work, async_op):
    """What a collective returns: its Work with async_op=True, else None once it completed (as 1.13)."""
    if async_op:
        return work
    work.wait()


def _gloo():
    """Whether the default group stands in for gloo: then gloo's texts, and gloo's gaps (the collectives 1.13's
    gloo does not have raise its errors; the "thread" and "mpi" backends have them)."""
    return get_backend() == Backend.GLOO


def _group_rank(g, call, root):
    """`g`'s rank of the world's rank `root` (1.13's collectives name roots and peers by world rank), then gloo's
    range check."""
    if g._ranks is not None:
        if root not in g._ranks:
            raise RuntimeError(f"Global rank {root} is not part of group {g!r}")
        root = g._ranks.index(root)
    if not 0 <= root < g.size():
        raise RuntimeError(f"ProcessGroupGloo::{call}: invalid root rank: {root}")
    return root


def _group_peer(g, peer):
    # gloo indexes its pairs with the rank unchecked: std::vector::at's out_of_range, an IndexError in Python
    if g._ranks is not None:
        if peer not in g._ranks:
            raise RuntimeError(f"Global rank {peer} is not part of group {g!r}")
        return g._ranks.index(peer)
    n = g.size()
    if peer >= n:
        raise IndexError(f"vector::_M_range_check: __n (which is {peer}) >= this->size() (which is {n})")
    return peer


def _check_list(g, call, what, tensors, like):
    """gloo's checks of a gather/scatter list: its length, then each tensor's dtype and size like `like`."""
    n = g.size()
    if len(tensors) != n:
        raise RuntimeError(f"ProcessGroupGloo::{call}: Incorrect {what} list size {len(tensors)}. {what.capitalize()} "
                           f"list size should be {n}, same as size of the process group.")
    for t in tensors:
        if t.dtype != like.dtype:
            raise RuntimeError(f"Invalid usage of tensors with different dtypesFound {like.dtype} and  {t.dtype}")
        if t.shape != like.shape:
            raise RuntimeError(f"ProcessGroupGloo::{call}: invalid tensor size at index 0 (expected "
                               f"{_size_text(like.shape)}, got {_size_text(t.shape)})")


def barrier(group=None, async_op=False, device_ids=None):
    g = _group(group, "barrier")
    if g is None:
        return _not_in_group("barrier")
    return _done(Work(_d.barrier(pg=g._pg), []), async_op)


def monitored_barrier(group=None, timeout=None, wait_all_ranks=False):
    """A barrier: a rank that does not arrive fails the others at the group's timeout (or at once when its
    program ended), naming it, which is what 1.13's monitored_barrier adds to gloo's barrier."""
    g = _group(group, "monitored_barrier")
    if g is None:
        return _not_in_group("monitored_barrier")
    _d.barrier_wait(pg=g._pg)


def _check_single_tensor(param, param_name):
    from tinyddp._tensor import Tensor
    if not isinstance(param, Tensor):
        raise RuntimeError(f"Invalid function argument. Expected parameter `{param_name}` to be of type torch.Tensor.")


def _check_tensor_list(param, param_name):
    from tinyddp._tensor import Tensor
    if not isinstance(param, list) or not all(isinstance(p, Tensor) for p in param):
        raise RuntimeError(f"Invalid function argument. Expected parameter `{param_name}` to be of type "
                           "List[torch.Tensor].")


def _in_place(tensor, call):
    """A collective that writes `tensor` in place, on a contiguous copy when it is not contiguous (gloo copies
    it into a flat buffer and back): call(flat) -> the C++ work; returns (work, finish)."""
    if tensor.is_contiguous():
        return call(tensor), None
    flat = tensor.contiguous()

    def finish():
        with _no_grad():
            tensor.copy_(flat)
    return call(flat), finish


def _check_reducible(tensor):
    from tinyddp._tensor import bool as bool_
    if tensor.dtype == bool_:
        raise RuntimeError("Invalid scalar type")   # gloo's reductions have no bool


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    _check_single_tensor(tensor, "tensor")
    g = _group(group, "all_reduce")
    if g is None:
        return _not_in_group("all_reduce")
    _check_reducible(tensor)
    work, finish = _in_place(tensor, lambda t: _d.all_reduce(t, op, pg=g._pg))
    return _done(Work(work, [tensor], finish), async_op)


def broadcast(tensor, src, group=None, async_op=False):
    _check_single_tensor(tensor, "tensor")
    g = _group(group, "broadcast")
    if g is None:
        return _not_in_group("broadcast")
    root = _group_rank(g, "broadcast", src)
    work, finish = _in_place(tensor, lambda t: _d.broadcast(t, root, pg=g._pg))
    return _done(Work(work, [tensor], finish), async_op)


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """tensor_list[r] = rank r's `tensor`, on every rank (checked with gloo's texts)."""
    _check_tensor_list(tensor_list, "tensor_list")
    _check_single_tensor(tensor, "tensor")
    g = _group(group, "all_gather")
    if g is None:
        return _not_in_group("all_gather")
    n = g.size()
    if len(tensor_list) != n:
        raise RuntimeError(f"ProcessGroupGloo::allgather: invalid output tensor list at index 0 (expected length {n}, "
                           f"got {len(tensor_list)})")
    for t in tensor_list:
        if t.dtype != tensor.dtype:
            raise RuntimeError(f"Invalid usage of tensors with different dtypesFound {t.dtype} and  {tensor.dtype}")
        if t.shape != tensor.shape:
            raise RuntimeError("ProcessGroupGloo::allgather: invalid tensor size at index 0 (expected "
                               f"{_size_text(tensor.shape)}, got {_size_text(t.shape)})")
    return _done(Work(_d.all_gather(list(tensor_list), tensor, pg=g._pg), list(tensor_list)), async_op)


def _size_text(shape):
    return "(" + ", ".join(str(d) for d in shape) + ")"


def gather(tensor, gather_list=None, dst=0, group=None, async_op=False):
    """gather_list[r] = rank r's `tensor` on rank `dst` (the other ranks pass None or [])."""
    _check_single_tensor(tensor, "tensor")
    if gather_list:
        _check_tensor_list(gather_list, "gather_list")
    g = _group(group, "gather")
    if g is None:
        return _not_in_group("gather")
    me = get_rank()   # 1.13 compares the world's ranks
    if me == dst and not gather_list:
        raise ValueError("Argument ``gather_list`` must be specified on destination rank.")
    if me != dst and gather_list:
        raise ValueError("Argument ``gather_list`` must NOT be specified on non-destination ranks.")
    root = _group_rank(g, "gather", dst)
    gather_list = list(gather_list or [])
    if me == dst:
        _check_list(g, "gather", "output", gather_list, tensor)
    return _done(Work(_d.gather(tensor, gather_list, root, pg=g._pg), gather_list), async_op)


def reduce(tensor, dst, op=ReduceOp.SUM, group=None, async_op=False):
    """op over every rank's tensor, into rank `dst`'s tensor. The other ranks' tensors end as 1.13's gloo leaves
    them: partial reductions of a ring (dist/collectives.cpp, Note [What reduce leaves elsewhere])."""
    _check_single_tensor(tensor, "tensor")
    g = _group(group, "reduce")
    if g is None:
        return _not_in_group("reduce")
    root = _group_rank(g, "reduce", dst)
    _check_reducible(tensor)
    work, finish = _in_place(tensor, lambda t: _d.reduce(t, root, op, pg=g._pg))
    return _done(Work(work, [tensor], finish), async_op)


def scatter(tensor, scatter_list=None, src=0, group=None, async_op=False):
    """tensor = rank `src`'s scatter_list[rank] (the other ranks pass None or [])."""
    _check_single_tensor(tensor, "tensor")
    if scatter_list:
        _check_tensor_list(scatter_list, "scatter_list")
    g = _group(group, "scatter")
    if g is None:
        return _not_in_group("scatter")
    scatter_list = scatter_list or []
    me = get_rank()
    if me == src and not scatter_list:
        raise ValueError("Argument ``scatter_list`` must be specified on source rank.")
    if me != src and scatter_list:
        raise ValueError("Argument ``scatter_list`` must NOT be specified on non-source ranks.")
    root = _group_rank(g, "scatter", src)
    if me == src:
        _check_list(g, "scatter", "input", scatter_list, tensor)
    return _done(Work(_d.scatter(tensor, list(scatter_list), root, pg=g._pg), [tensor]), async_op)


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    """output = op over ranks of their input_list[rank]. 1.13's gloo has none (its error under "gloo")."""
    g = _group(group, "reduce_scatter")
    if g is None:
        return _not_in_group("reduce_scatter")
    if _gloo():
        raise RuntimeError("ProcessGroupGloo does not support reduce_scatter")
    return _done(Work(_d.reduce_scatter(output, list(input_list), op, pg=g._pg), [output]), async_op)


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """output = op over ranks of their input's chunk `rank` (input is world_size outputs end to end)."""
    g = _group(group, "reduce_scatter_tensor")
    if g is None:
        return _not_in_group("reduce_scatter_tensor")
    if _gloo():
        raise RuntimeError("ProcessGroup gloo does not support _reduce_scatter_base")
    chunks = [c.contiguous() for c in input.reshape(g.size(), -1).unbind(0)]
    return _done(Work(_d.reduce_scatter(output, chunks, op, pg=g._pg), [output]), async_op)


def _reduce_scatter_base(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    warnings.warn("torch.distributed._reduce_scatter_base is a private function and will be deprecated. Please use "
                  "torch.distributed.reduce_scatter_tensor instead.")
    return reduce_scatter_tensor(output, input, op, group, async_op)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """output_tensor = every rank's input_tensor end to end, in rank order."""
    g = _group(group, "all_gather_into_tensor")
    if g is None:
        return _not_in_group("all_gather_into_tensor")
    if _gloo():
        raise RuntimeError("no support for _allgather_base in Gloo process group")
    from tinyddp._tensor import empty
    staging = [empty(input_tensor.shape, dtype=input_tensor.dtype) for _ in range(g.size())]

    def finish():
        with _no_grad():
            output_tensor.copy_(_cat(staging).reshape(output_tensor.shape))
    return _done(Work(_d.all_gather(staging, input_tensor, pg=g._pg), [output_tensor], finish), async_op)


def _all_gather_base(output_tensor, input_tensor, group=None, async_op=False):
    warnings.warn("torch.distributed._all_gather_base is a private function and will be deprecated. Please use "
                  "torch.distributed.all_gather_into_tensor instead.")
    return all_gather_into_tensor(output_tensor, input_tensor, group, async_op)


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op=False):
    """output_tensor_list[r] = rank r's input_tensor_list[rank]. 1.13's gloo has none (its error under "gloo")."""
    g = _group(group, "all_to_all")
    if g is None:
        return _not_in_group("all_to_all")
    if _gloo():
        raise RuntimeError("ProcessGroup gloo does not support alltoall")
    work = _d.all_to_all(list(output_tensor_list), [t.contiguous() for t in input_tensor_list], pg=g._pg)
    return _done(Work(work, list(output_tensor_list)), async_op)


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None, group=None, async_op=False):
    """Rank r's rows (dim 0) of `input`, cut by input_split_sizes (equal parts when None), go part j to rank j;
    `output` is the parts received, in rank order, cut by output_split_sizes."""
    g = _group(group, "all_to_all_single")
    if g is None:
        return _not_in_group("all_to_all_single")
    n = g.size()
    ins = _split_rows(input, input_split_sizes, n)
    outs = [t.clone() for t in _split_rows(output, output_split_sizes, n)]

    def finish():
        with _no_grad():
            output.copy_(_cat(outs).reshape(output.shape))
    return _done(Work(_d.all_to_all(outs, ins, pg=g._pg), [output], finish), async_op)


def _split_rows(t, sizes, n):
    if sizes is None or len(sizes) == 0:
        if t.shape[0] % n != 0:
            raise RuntimeError("Tensor's dim 0 does not divide equally across group size")
        sizes = [t.shape[0] // n] * n
    if len(sizes) != n:
        raise RuntimeError("Number of tensor splits not equal to group size")
    if sum(sizes) != t.shape[0]:
        raise RuntimeError("Split sizes doesn't match total dim 0 size")
    parts, start = [], 0
    for k in sizes:
        parts.append(t.narrow(0, start, k).contiguous())
        start += k
    return parts


def _cat(tensors):
    from tinyddp._tensor import cat
    return cat([t.reshape(-1) for t in tensors])


def send(tensor, dst, group=None, tag=0):
    """Blocks until `tensor` is sent to rank `dst` (the thread backend buffers it: at once)."""
    work = isend(tensor, dst, group, tag)
    if work is not None:
        work.wait()


def isend(tensor, dst, group=None, tag=0):
    _check_single_tensor(tensor, "tensor")
    g = _group(group, "isend")
    if g is None:
        return _not_in_group("isend")
    return Work(_d.send(tensor, _group_peer(g, dst), tag, pg=g._pg), [tensor])


def recv(tensor, src=None, group=None, tag=0):
    """Fills `tensor` from rank `src`'s send with `tag` (from any rank when src is None); returns the sender's
    world rank."""
    g = _group(group, "recv")
    if g is None:
        _not_in_group("recv")
        return -1
    work = irecv(tensor, src, group, tag)
    work.wait()
    if src is not None:
        return src
    sender = work._work.source_rank()
    return sender if g._ranks is None else g._ranks[sender]


def irecv(tensor, src=None, group=None, tag=0):
    _check_single_tensor(tensor, "tensor")
    g = _group(group, "irecv")
    if g is None:
        return _not_in_group("irecv")
    peer = -1 if src is None else _group_peer(g, src)
    return Work(_d.recv(tensor, peer, tag, pg=g._pg), [tensor])


class P2POp:
    """One isend or irecv for batch_isend_irecv, checked when built (1.13's texts)."""

    def __new__(cls, op, tensor, peer, group=None, tag=0):
        if op is not isend and op is not irecv:
            raise RuntimeError("Invalid ``op``. Expected ``op`` to be of type ``torch.distributed.isend`` or "
                               "``torch.distributed.irecv``.")
        from tinyddp._tensor import Tensor
        if not isinstance(tensor, Tensor):
            raise RuntimeError("Invalid function argument. Expected parameter `tensor` to be of type torch.Tensor.")
        return object.__new__(cls)

    def __init__(self, op, tensor, peer, group=None, tag=0):
        self.op, self.tensor, self.peer, self.group, self.tag = op, tensor, peer, group, tag


def batch_isend_irecv(p2p_op_list):
    """Starts every op of the list, in order, and returns their Works. The thread backend's sends never wait for
    their receiver, so a ring of sends and receives in any order completes."""
    if not isinstance(p2p_op_list, list) or not all(isinstance(op, P2POp) for op in p2p_op_list):
        raise RuntimeError("Invalid ``p2p_op_list``. Each op is expected to to be of type ``torch.distributed.P2POp``.")
    group_ = p2p_op_list[0].group
    if not all(op.group == group_ for op in p2p_op_list):
        raise RuntimeError("All ops need to use the same group.")
    return [op.op(op.tensor, op.peer, op.group, op.tag) for op in p2p_op_list]


def gather_object(obj, object_gather_list=None, dst=0, group=None):
    """On rank `dst`, object_gather_list[r] = rank r's `obj` (pickled, as PyTorch's); the others pass None."""
    g = _group(group, "gather_object")
    if g is None:
        return _not_in_group("gather_object")
    me = get_rank()
    if me == dst and not object_gather_list:
        raise ValueError("Argument ``gather_list`` must be specified on destination rank.")
    if me != dst and object_gather_list:
        raise ValueError("Argument ``gather_list`` must NOT be specified on non-destination ranks.")
    everyone = _d.all_gather_bytes(_pickle(obj), pg=g._pg)
    if me == dst:
        for r, data in enumerate(everyone):
            object_gather_list[r] = pickle.loads(data)


def scatter_object_list(scatter_object_output_list, scatter_object_input_list, src=0, group=None):
    """scatter_object_output_list[0] = rank `src`'s scatter_object_input_list[rank] (pickled, as PyTorch's)."""
    g = _group(group, "scatter_object_list")
    if g is None:
        return _not_in_group("scatter_object_list")
    if not isinstance(scatter_object_output_list, list) or len(scatter_object_output_list) < 1:
        raise RuntimeError("Expected argument scatter_object_output_list to be a list of size at least 1.")
    root = _group_rank(g, "scatter", src)
    mine = _pickle([_pickle(o) for o in scatter_object_input_list]) if get_rank() == src else b""
    everyone = _d.all_gather_bytes(mine, pg=g._pg)
    scatter_object_output_list[0] = pickle.loads(pickle.loads(everyone[root])[g.rank()])


def all_gather_object(object_list, obj, group=None):
    """object_list[r] = rank r's `obj` (pickled, as PyTorch's)."""
    g = _group(group, "all_gather_object")
    if g is None:
        return _not_in_group("all_gather_object")
    for r, data in enumerate(_d.all_gather_bytes(_pickle(obj), pg=g._pg)):
        object_list[r] = pickle.loads(data)


def broadcast_object_list(object_list, src=0, group=None, device=None):
    """Every rank's object_list takes rank `src`'s elements, in place (pickled, as PyTorch's)."""
    g = _group(group, "broadcast_object_list")
    if g is None:
        return _not_in_group("broadcast_object_list")
    root = _group_rank(g, "broadcast", src)
    mine = _pickle(list(object_list)) if get_rank() == src else b""
    object_list[:] = pickle.loads(_d.all_gather_bytes(mine, pg=g._pg)[root])


def _pickle(obj):
    buf = io.BytesIO()
    pickle.Pickler(buf).dump(obj)
    return buf.getvalue()


def _no_grad():
    from tinyddp.autograd.grad_mode import no_grad
    return no_grad()


from tinyddp.distributed import algorithms  # noqa: E402  (torch.distributed.algorithms; needs tinyddp.nn)
from tinyddp.distributed.grad_bucket import GradBucket  # noqa: E402

__all__ = ["Backend", "DebugLevel", "GradBucket", "GroupMember", "P2POp", "ProcessGroup", "ReduceOp",
           "Work", "algorithms", "all_gather", "all_gather_into_tensor", "all_gather_object", "all_reduce",
           "all_to_all", "all_to_all_single", "barrier", "batch_isend_irecv", "broadcast",
           "broadcast_object_list", "destroy_process_group", "gather", "gather_object", "get_backend",
           "get_debug_level", "get_global_rank", "get_group_rank", "get_process_group_ranks", "get_rank",
           "get_world_size", "group", "init_process_group", "irecv", "is_available", "is_gloo_available",
           "is_initialized", "is_mpi_available", "is_nccl_available", "is_ucc_available", "is_torchelastic_launched",
           "isend", "monitored_barrier",
           "new_group", "recv", "reduce", "reduce_scatter", "reduce_scatter_tensor", "scatter",
           "scatter_object_list", "send", "set_debug_level", "set_debug_level_from_env"]
