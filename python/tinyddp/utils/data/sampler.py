"""torch.utils.data.sampler: the orders a DataLoader visits a map-style dataset in, with 1.13's random draws.

Where the draws come from matters for a seeded script, since they advance the stream everything after uses:
- RandomSampler without a generator draws a seed from the thread's default generator (one int64 ``random_()``)
  when its iterator starts, then shuffles with a fresh Generator seeded with it, so each epoch costs the
  default stream exactly one draw, however long the dataset;
- with replacement it draws ``randint`` in chunks of 32 (then the rest), as 1.13 does, so the values match;
- without replacement, ``randperm(n)`` once per full pass and once for the tail of num_samples.
Every iterator is a generator: nothing is drawn until the first ``next``.
"""
from typing import Generic, TypeVar

from tinyddp import _C
from tinyddp import _tensor as _t
from tinyddp.random import Generator
from tinyddp._object_repr import object_repr


T_co = TypeVar("T_co", covariant=True)

# 1.13's RandomSampler with replacement draws its indices 32 at a time; the chunking changes nothing in the values
# (randint is one draw per element) but is kept so the code reads as the order the draws come in.
_kReplacementChunk = 32


class Sampler(Generic[T_co]):
    """Base class: subclasses define __iter__ (indices, or lists of them for a batch sampler) and usually __len__.
    There is deliberately no default __len__, so that list() of a sampler without one still works."""
    __repr__ = object_repr   # <torch....Name object at 0x...>, as 1.13's default repr

    def __init__(self, data_source):
        pass

    def __iter__(self):
        raise NotImplementedError


class SequentialSampler(Sampler[int]):
    """0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


def _fresh_seeded_generator():
    """1.13's RandomSampler without a generator: one int64 draw from the default stream seeds a new Generator."""
    seed = int(_t.empty((), dtype=_t.int64).random_().item())
    g = Generator()
    g.manual_seed(seed)
    return g


class RandomSampler(Sampler[int]):
    """A random order of the dataset (randperm), or with replacement=True num_samples uniform indices."""

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got replacement={self.replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={self.num_samples}")

    @property
    def num_samples(self):
        # Read at each use: the dataset may change size between epochs.
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n = len(self.data_source)
        generator = self.generator if self.generator is not None else _fresh_seeded_generator()
        total = self.num_samples
        if self.replacement:
            for _ in range(total // _kReplacementChunk):
                yield from _t.randint(high=n, size=(_kReplacementChunk,), dtype=_t.int64,
                                      generator=generator).tolist()
            yield from _t.randint(high=n, size=(total % _kReplacementChunk,), dtype=_t.int64,
                                  generator=generator).tolist()
        else:
            for _ in range(total // n):
                yield from _t.randperm(n, generator=generator).tolist()
            # The tail's permutation is drawn even when it is empty (total a multiple of n), as 1.13 does.
            yield from _t.randperm(n, generator=generator).tolist()[:total % n]

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler[int]):
    """indices in a random order: indices[p] for p in randperm(len(indices))."""

    def __init__(self, indices, generator=None):
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        # 1.13 iterates the permutation tensor and indexes with its 0-dim elements; the positions as ints pick the
        # same elements (an int64 0-dim tensor when `indices` is a tensor, the element itself for a list).
        for p in _t.randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[p]

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler[int]):
    """num_samples indices drawn with probabilities proportional to `weights`: torch.multinomial of the float64
    weights, as 1.13's (with replacement a float64 uniform per sample placed in the running sum; without, the top
    num_samples of weights over exponential noise), with its checks and texts."""

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got replacement={replacement}")
        w = weights.tolist() if isinstance(weights, _t.Tensor) else list(weights)
        if any(isinstance(v, (list, tuple)) for v in w):
            shape = tuple(_t.tensor(w, dtype=_t.float64).shape)
            raise ValueError(f"weights should be a 1d sequence but given weights have shape {shape}")
        self.weights = _t.tensor([float(v) for v in w], dtype=_t.float64)
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self):
        yield from self.weights.multinomial(self.num_samples, self.replacement, generator=self.generator).tolist()

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler[list]):
    """Groups `sampler`'s indices into lists of batch_size (the last one shorter unless drop_last)."""

    def __init__(self, sampler, batch_size, drop_last):
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        batch = []
        for idx in self.sampler:
            batch.append(idx)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self):
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size


__all__ = ["BatchSampler", "RandomSampler", "Sampler", "SequentialSampler", "SubsetRandomSampler",
           "WeightedRandomSampler"]
