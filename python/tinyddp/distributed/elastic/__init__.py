"""torch.distributed.elastic: the part scripts import when torchrun launches them (multiprocessing.errors.record)."""
