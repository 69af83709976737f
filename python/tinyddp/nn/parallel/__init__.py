"""torch.nn.parallel: DistributedDataParallel."""
from tinyddp.nn.parallel.distributed import DistributedDataParallel

__all__ = ["DistributedDataParallel"]
