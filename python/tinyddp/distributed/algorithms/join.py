"""torch.distributed.algorithms.join over dist/join.h: Join, and Joinable/JoinHook for joinables written in
Python (the Join tutorial's Counter). The loop a joined rank runs (count the ranks still running, shadow their
iteration with every joinable's main hook, then the post hooks) is dist::Join's; a DistributedDataParallel's
hooks are the C++ ones, a Python joinable's are called back (tinyddp._C._dist.Joinable)."""
from abc import ABC, abstractmethod
from typing import NamedTuple

from tinyddp import _C

__all__ = ["JoinHook", "Joinable", "Join"]


class JoinHook:
    """Two entry points of the join context: main_hook() shadows one iteration's collectives of the ranks still
    running, once per such iteration; post_hook(is_last_joiner) runs once all ranks have joined."""

    def main_hook(self) -> None:
        ...

    def post_hook(self, is_last_joiner: bool) -> None:
        ...


class _JoinConfig(NamedTuple):
    enable: bool
    throw_on_early_termination: bool
    is_first_joinable: bool

    @staticmethod
    def construct_disabled_join_config():
        return _JoinConfig(enable=False, throw_on_early_termination=False, is_first_joinable=False)


class Joinable(ABC):
    """A class whose per-iteration collectives a joined rank must shadow: join_hook(**kwargs) gives its JoinHook,
    join_device and join_process_group say where the context's own collectives run. Subclasses call
    Joinable.__init__ (super().__init__()), and Join.notify_join_context(self) before their collectives."""

    @abstractmethod
    def __init__(self):
        super().__init__()
        self._join_config = _JoinConfig.construct_disabled_join_config()

    @abstractmethod
    def join_hook(self, **kwargs) -> JoinHook:
        ...

    @property
    @abstractmethod
    def join_device(self):
        ...

    @property
    @abstractmethod
    def join_process_group(self):
        ...


class Join:
    """with Join(joinables, enable=True, throw_on_early_termination=False, **kwargs): a rank whose inputs ran out
    leaves the block and shadows the collectives of the ranks still iterating (DDP's joined ranks count as zero
    gradients), so that no rank waits forever; then every joinable's post hook runs (DDP: the last rank to join
    broadcasts its model). kwargs go to every joinable's join_hook (DDP reads divide_by_initial_world_size). An
    exception in the block is propagated and nothing is shadowed, as in 1.13."""

    def __init__(self, joinables, enable=True, throw_on_early_termination=False, **kwargs):
        # Imported here: tinyddp.nn.parallel imports tinyddp.distributed, whose package imports this module.
        import tinyddp.distributed as dist
        from tinyddp.nn.parallel.distributed import DistributedDataParallel
        if len(joinables) == 0:
            raise ValueError("The join context manager requires at least one joinable")
        self._joinables = list(joinables)
        members, groups = [], []
        for j in self._joinables:
            if isinstance(j, DistributedDataParallel):
                members.append(j._ddp)
                groups.append(j.process_group)
            else:
                # the C++ side of a Python joinable, for this context: its hook for these kwargs, its group
                group = j.join_process_group
                pg = None if group is None or group is dist.group.WORLD else group._pg
                members.append(_C._dist.Joinable(j.join_hook(**kwargs), pg))
                groups.append(dist.group.WORLD if group is None else group)
        for i, j in enumerate(self._joinables):
            if not isinstance(j, DistributedDataParallel):
                j._join_config = _JoinConfig(bool(enable), bool(throw_on_early_termination), i == 0)
                j._tinyddp_joinable = members[i]
        if any(g != groups[0] for g in groups):
            raise ValueError("Using join context manager with multiple process groups")
        self._join = _C._dist.Join(members, bool(enable), bool(throw_on_early_termination),
                                   bool(kwargs.get("divide_by_initial_world_size", True)))

    def __enter__(self):
        ...

    def __exit__(self, type, value, traceback):  # noqa: A002  (PyTorch's names)
        if type is not None:
            self._join.abandon()
            return None   # propagate the exception
        self._join.finish()
        return None

    @staticmethod
    def notify_join_context(joinable):
        """Called by a Python joinable before its per-iteration collectives: tells the joined ranks that this
        rank still runs (an asynchronous allreduce of ones, whose Work this returns), and with
        throw_on_early_termination raises once some rank has joined. None unless the joinable is the first of
        an enabled context. (DistributedDataParallel's forward does this itself.)"""
        assert hasattr(joinable, "_join_config"), \
            f"Check that the {type(joinable)} constructor calls the ``Joinable`` constructor"
        member = getattr(joinable, "_tinyddp_joinable", None)
        if member is None:
            return None
        work = member.notify_join_context()
        if work is None:
            return None
        import tinyddp.distributed as dist
        return dist.Work(work, [])
