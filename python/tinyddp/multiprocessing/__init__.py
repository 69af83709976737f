"""torch.multiprocessing: spawn (ranks as threads of this process; see spawn.py)."""
from tinyddp.multiprocessing.spawn import ProcessException, ProcessRaisedException, spawn

__all__ = ["ProcessException", "ProcessRaisedException", "spawn"]
