"""torch.multiprocessing.spawn, as threads: fn(rank, *args) runs on `nprocs` threads of this process, the ranks of
one dist::ThreadWorld (the "thread" backend). A rank that raises aborts the world, so ranks waiting in collectives
raise too instead of hanging; the first failure is re-raised here as ProcessRaisedException, with the rank and its
traceback in the message, as PyTorch's.

Warnings: a rank of a PyTorch script ("gloo") stands for one of 1.13's child processes, so a warning it raises is
printed to stderr as that process prints it (once per place, as a fresh interpreter's filters have it), and the
spawning thread's warnings.catch_warnings does not record it. A rank that records warnings itself
(catch_warnings inside the rank) records them. Ranks on tinyddp's "thread" backend are threads of this process
and raise their warnings as any thread of it does.
"""
import sys
import threading
import traceback
import warnings

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

    def _wrap(i):   # 1.13's names: the rank's traceback starts with "in _wrap\n    fn(i, *args)" as there
        _rank_thread.active = True
        _rank_thread.rank = i
        _rank_thread.debug_level = debug_level
        try:
            if debug_error is not None:
                raise RuntimeError(str(debug_error))
            fn(i, *args)
        except BaseException:
            with lock:
                failures.append((i, traceback.format_exc()))
            raise

    with _warnings_of_child_processes():
        _C._dist.run_threads(nprocs, _wrap, float(timeout or 0))
    if failures:
        rank, trace = failures[0]
        msg = "\n\n-- Process %d terminated with the following error:\n" % rank + trace
        raise ProcessRaisedException(msg, rank, threading.get_native_id())


# The categories a fresh interpreter's default filters ignore (DeprecationWarning is shown from __main__ only).
_IGNORED_IN_A_FRESH_PROCESS = (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning)


class _warnings_of_child_processes:
    """While ranks run: a warning raised on a rank thread that stands for a process (see the module's notes)
    goes to stderr, not to warnings' current destination."""

    def __enter__(self):
        self._show = warnings._showwarnmsg
        # What warnings' destination is now: a rank that changes it (catch_warnings) records its own warnings.
        self._destination = (warnings._showwarnmsg_impl, warnings.showwarning)
        self._shown = set()   # (rank, text, category, filename, lineno): the "default" action's once per place
        self._lock = threading.Lock()
        warnings._showwarnmsg = self._dispatch
        return self

    def __exit__(self, *exc):
        if warnings._showwarnmsg == self._dispatch:
            warnings._showwarnmsg = self._show
        return None

    def _dispatch(self, msg):
        own_process = getattr(_rank_thread, "active", False) and getattr(_rank_thread, "backend", None) != "thread"
        if not own_process or (warnings._showwarnmsg_impl, warnings.showwarning) != self._destination:
            return self._show(msg)
        if issubclass(msg.category, _IGNORED_IN_A_FRESH_PROCESS) and not (
                issubclass(msg.category, DeprecationWarning) and
                msg.filename == getattr(sys.modules.get("__main__"), "__file__", None)):
            return None
        key = (getattr(_rank_thread, "rank", None), str(msg.message), msg.category, msg.filename, msg.lineno)
        with self._lock:
            if key in self._shown:
                return None
            self._shown.add(key)
        sys.stderr.write(warnings._formatwarnmsg(msg))
        return None
