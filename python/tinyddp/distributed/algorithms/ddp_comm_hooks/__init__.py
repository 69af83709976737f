"""torch.distributed.algorithms.ddp_comm_hooks: the built-in communication hooks (default_hooks)."""
from tinyddp.distributed.algorithms.ddp_comm_hooks import default_hooks

__all__ = ["default_hooks"]
