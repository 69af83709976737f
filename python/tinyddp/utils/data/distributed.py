"""torch.utils.data.distributed.DistributedSampler: each rank's share of a map-style dataset, as 1.13's.

Every rank computes the same order (with shuffle, ``randperm(len(dataset))`` of a Generator seeded with
``seed + epoch``; otherwise 0..n-1), evens it out to ``num_samples * num_replicas`` (repeating the head when
padding, cutting the tail with drop_last), then takes every num_replicas-th index starting at its rank. The
default stream is not touched, so the ranks stay in step however many samplers a script makes.
"""
import math

from tinyddp import _tensor as _t
from tinyddp import distributed as dist
from tinyddp.random import Generator
from tinyddp.utils.data.sampler import Sampler


class DistributedSampler(Sampler):
    """num_replicas and rank default to the default process group's world size and rank (1.13's
    "Default process group has not been initialized" RuntimeError without one). Call set_epoch(e) before each
    epoch's iterator for a new shuffle."""

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0, drop_last=False):
        if num_replicas is None:
            num_replicas = dist.get_world_size()
        if rank is None:
            rank = dist.get_rank()
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(self.dataset)
        if self.drop_last and n % self.num_replicas != 0:
            # The largest share every rank can have without repeating a sample.
            self.num_samples = math.ceil((n - self.num_replicas) / self.num_replicas)
        else:
            self.num_samples = math.ceil(n / self.num_replicas)
        self.total_size = self.num_samples * self.num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            g = Generator()
            g.manual_seed(self.seed + self.epoch)
            order = _t.randperm(n, generator=g).tolist()
        else:
            order = list(range(n))
        if self.drop_last:
            order = order[:self.total_size]
        else:
            pad = self.total_size - len(order)
            # Repeat the order from its head as often as needed (more than once only for tiny datasets).
            order += (order * math.ceil(pad / len(order)))[:pad] if pad > len(order) else order[:pad]
        assert len(order) == self.total_size
        mine = order[self.rank:self.total_size:self.num_replicas]
        assert len(mine) == self.num_samples
        return iter(mine)

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """The epoch mixed into the shuffle's seed; the same on every rank, so their shares stay disjoint."""
        self.epoch = epoch


__all__ = ["DistributedSampler"]
