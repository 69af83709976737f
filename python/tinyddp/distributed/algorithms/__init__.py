"""torch.distributed.algorithms: the generic join context for uneven inputs."""
from tinyddp.distributed.algorithms.join import Join

__all__ = ["Join"]
