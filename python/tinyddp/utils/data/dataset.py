"""torch.utils.data.dataset: map-style and iterable datasets, their sums, subsets and random_split, as 1.13's.

A map-style dataset answers ``dataset[i]`` (and usually ``len``); an iterable one answers ``iter(dataset)``.
``a + b`` of map-style datasets is a ConcatDataset, of iterable ones a ChainDataset. random_split draws one
``randperm`` of the whole length (from the calling thread's default generator unless given one), so a seeded
script's split, and every random number after it, is PyTorch's.
"""
import bisect
import itertools
import math
import warnings
from typing import Generic, TypeVar

from tinyddp._tensor import randperm
from tinyddp._object_repr import object_repr


T_co = TypeVar("T_co", covariant=True)


class Dataset(Generic[T_co]):
    """A map from keys (usually 0..len-1) to samples: subclasses define __getitem__, and __len__ for the
    default samplers."""
    __repr__ = object_repr   # <torch....Name object at 0x...>, as 1.13's default repr

    def __getitem__(self, index):
        raise NotImplementedError

    def __add__(self, other):
        return ConcatDataset([self, other])


class IterableDataset(Dataset[T_co]):
    """A stream of samples: subclasses define __iter__. A DataLoader with num_workers=N gives each worker its
    own copy (get_worker_info().dataset) to split the stream by."""

    def __iter__(self):
        raise NotImplementedError

    def __add__(self, other):
        return ChainDataset([self, other])


class TensorDataset(Dataset):
    """Sample i is the tuple of every tensor's row i; all tensors share their first dim."""

    def __init__(self, *tensors):
        # 1.13 checks with an assert (so `python -O` skips it); the same text and type here.
        assert all(tensors[0].size(0) == t.size(0) for t in tensors), "Size mismatch between tensors"
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].size(0)


class ConcatDataset(Dataset):
    """The datasets one after another: index i is found by bisecting the running totals `cumulative_sizes`."""

    @staticmethod
    def cumsum(sequence):
        return list(itertools.accumulate(len(d) for d in sequence))

    def __init__(self, datasets):
        super().__init__()
        self.datasets = list(datasets)
        assert len(self.datasets) > 0, "datasets should not be an empty iterable"
        for d in self.datasets:
            assert not isinstance(d, IterableDataset), "ConcatDataset does not support IterableDataset"
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx += len(self)
        which = bisect.bisect_right(self.cumulative_sizes, idx)
        start = self.cumulative_sizes[which - 1] if which > 0 else 0
        return self.datasets[which][idx - start]

    @property
    def cummulative_sizes(self):
        warnings.warn("cummulative_sizes attribute is renamed to cumulative_sizes", DeprecationWarning,
                      stacklevel=2)
        return self.cumulative_sizes


class ChainDataset(IterableDataset):
    """Iterable datasets one after another, chained lazily."""

    def __init__(self, datasets):
        super().__init__()
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            assert isinstance(d, IterableDataset), "ChainDataset only supports IterableDataset"
            yield from d

    def __len__(self):
        total = 0
        for d in self.datasets:
            assert isinstance(d, IterableDataset), "ChainDataset only supports IterableDataset"
            total += len(d)
        return total


class Subset(Dataset):
    """dataset restricted to `indices`: subset[i] is dataset[indices[i]] (a list of positions maps each)."""

    def __init__(self, dataset, indices):
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __len__(self):
        return len(self.indices)


def _fraction_lengths(n, fractions):
    """1.13's lengths for fractions summing to 1: floor(n * f) each, then the remainder handed out one by one
    from the first split on, and a warning for each split left empty."""
    lengths = []
    for i, frac in enumerate(fractions):
        if frac < 0 or frac > 1:
            raise ValueError(f"Fraction at index {i} is not between 0 and 1")
        lengths.append(int(math.floor(n * frac)))
    for i in range(n - sum(lengths)):
        lengths[i % len(lengths)] += 1
    for i, length in enumerate(lengths):
        if length == 0:
            warnings.warn(f"Length of split at index {i} is 0. This might result in an empty dataset.")
    return lengths


def random_split(dataset, lengths, generator=None):
    """Splits `dataset` into non-overlapping Subsets of the given lengths, or of the given fractions of its
    length (when they sum to 1), over one randperm drawn from `generator` (default None: the thread's default
    generator, where 1.13's default is `torch.default_generator`)."""
    # 1.13 takes lengths as fractions whenever they sum to 1 (so [1] or [1, 0] of a one-sample dataset too).
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        lengths = _fraction_lengths(len(dataset), lengths)
    if sum(lengths) != len(dataset):
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    indices = randperm(sum(lengths), generator=generator).tolist()
    ends = list(itertools.accumulate(lengths))
    return [Subset(dataset, indices[end - length:end]) for end, length in zip(ends, lengths)]


__all__ = ["Dataset", "IterableDataset", "TensorDataset", "ConcatDataset", "ChainDataset", "Subset",
           "random_split"]
