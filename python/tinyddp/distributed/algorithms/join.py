"""torch.distributed.algorithms.join.Join over dist/join.h. Its joinables are DistributedDataParallel instances
(tinyddp has no Python Joinable to subclass); DistributedDataParallel.join() is Join([ddp], ...)."""
from tinyddp import _C


class Join:
    """with Join([ddp], enable=True, throw_on_early_termination=False, divide_by_initial_world_size=True):
    a rank whose inputs ran out leaves the block and shadows the collectives of the ranks still iterating
    (its gradients count as zeros), so that no rank waits forever; at the end every replica gets the same
    parameters. An exception in the block is propagated and nothing is shadowed, as in 1.13."""

    def __init__(self, joinables, enable=True, throw_on_early_termination=False, **kwargs):
        # Imported here: tinyddp.nn.parallel imports tinyddp.distributed, whose package imports this module.
        from tinyddp.nn.parallel.distributed import DistributedDataParallel
        if len(joinables) == 0:
            raise ValueError("The join context manager requires at least one joinable")
        for j in joinables:
            if not isinstance(j, DistributedDataParallel):
                raise NotImplementedError(
                    f"Join: {type(j).__name__} is not a joinable tinyddp knows; tinyddp's Join takes "
                    "DistributedDataParallel instances only.")
        divide = kwargs.pop("divide_by_initial_world_size", True)
        if kwargs:
            raise TypeError("Join: unexpected keyword arguments " + ", ".join(kwargs) +
                            " (DistributedDataParallel's join hook takes divide_by_initial_world_size only)")
        self._join = _C._dist.Join([j._ddp for j in joinables], bool(enable), bool(throw_on_early_termination),
                                   bool(divide))

    def __enter__(self):
        return self

    def __exit__(self, type, value, traceback):  # noqa: A002  (PyTorch's names)
        if type is not None:
            self._join.abandon()
            return None   # propagate the exception
        self._join.finish()
        return None


__all__ = ["Join"]
