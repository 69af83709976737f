"""torch.multiprocessing: spawn (ranks as threads of this process; see spawn.py), the sharing strategies, and
Python's multiprocessing re-exported as 1.13's module re-exports it (Process, Queue, set_start_method, cpu_count,
...), so scripts that configure it before building DataLoaders run unchanged."""
import multiprocessing
from multiprocessing import *  # noqa: F401,F403  (1.13: from multiprocessing import *)

from tinyddp.multiprocessing.spawn import ProcessException, ProcessExitedException, ProcessRaisedException, spawn

_sharing_strategy = "file_descriptor"
_all_sharing_strategies = {"file_descriptor", "file_system"}


def set_sharing_strategy(new_strategy):
    """Recorded only: spawn's ranks are threads and share every tensor already."""
    global _sharing_strategy
    assert new_strategy in _all_sharing_strategies
    _sharing_strategy = new_strategy


def get_sharing_strategy():
    return _sharing_strategy


def get_all_sharing_strategies():
    return _all_sharing_strategies


__all__ = ["set_sharing_strategy", "get_sharing_strategy", "get_all_sharing_strategies"]
__all__ += multiprocessing.__all__
__all__ += ["ProcessException", "ProcessExitedException", "ProcessRaisedException", "spawn"]
