"""torch.distributed.nn: collectives that autograd differentiates (functional.py), as contrastive losses (SimCLR,
CLIP) use them to gather every rank's embeddings and still send each rank its gradient."""
from tinyddp.distributed.nn.functional import all_gather, all_reduce, broadcast  # noqa: F401

__all__ = ["all_gather", "all_reduce", "broadcast"]
