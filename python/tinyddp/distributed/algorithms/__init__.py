"""torch.distributed.algorithms: the generic join context for uneven inputs, and DDP's comm hooks."""
from tinyddp.distributed.algorithms import ddp_comm_hooks
from tinyddp.distributed.algorithms.join import Join

__all__ = ["Join", "ddp_comm_hooks"]
