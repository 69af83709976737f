"""torch.nn.parallel: DistributedDataParallel, and DataParallel as 1.13's without CUDA."""
from tinyddp.nn.parallel.data_parallel import DataParallel
from tinyddp.nn.parallel.distributed import DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel"]
