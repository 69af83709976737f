"""torch.multiprocessing.spawn, as threads: fn(rank, *args) runs on `nprocs` threads of this process, the ranks of
one dist::ThreadWorld (the "thread" backend). A rank that raises aborts the world, so ranks waiting in collectives
raise too instead of hanging; the first failure is re-raised here as ProcessRaisedException, with the rank and its
traceback in the message, as PyTorch's."""
import threading
import traceback

from tinyddp import _C

# Set on spawn's rank threads: there init_process_group("gloo") means the thread backend (tinyddp.distributed).
_rank_thread = threading.local()


class ProcessException(Exception):
    __slots__ = ["error_index", "pid"]

    def __init__(self, msg, error_index, pid):
        super().__init__(msg)
        self.msg, self.error_index, self.pid = msg, error_index, pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid)


class ProcessRaisedException(ProcessException):
    """Raised in the caller when a rank raised; the message holds the rank's traceback."""


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn", timeout=None):
    """Runs fn(rank, *args) for rank in range(nprocs) and returns when all ranks ended. `timeout` (seconds)
    bounds each collective wait of the ranks' group (default 60 s, dist::kDefaultTimeout)."""
    if not join:
        raise NotImplementedError("spawn(join=False): tinyddp's ranks are threads joined by spawn; use join=True.")
    failures = []   # (rank, traceback text) in the order the ranks failed
    lock = threading.Lock()
    # What each of 1.13's child processes reads from TORCH_DISTRIBUTED_DEBUG when it imports torch: the
    # environment as spawn found it (a rank that sets the variable afterwards changes nothing).
    try:
        debug_level, debug_error = _C._dist.debug_level_from_env(), None
    except RuntimeError as e:
        debug_level, debug_error = None, e

    def run_rank(rank):
        _rank_thread.active = True
        _rank_thread.debug_level = debug_level
        try:
            if debug_error is not None:
                raise RuntimeError(str(debug_error))
            fn(rank, *args)
        except BaseException:
            with lock:
                failures.append((rank, traceback.format_exc()))
            raise

    _C._dist.run_threads(nprocs, run_rank, float(timeout or 0))
    if failures:
        rank, trace = failures[0]
        msg = "\n\n-- Process %d terminated with the following error:\n" % rank + trace
        raise ProcessRaisedException(msg, rank, threading.get_native_id())
