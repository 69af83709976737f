"""torch.utils.data.dataloader.DataLoader: batches of a dataset, in 1.13's order and with 1.13's random draws.

The draws, in the order 1.13 makes them (Note [DataLoader's draws]):
1. iter(loader) draws the iterator's base seed, one int64 ``random_(generator=loader.generator)``, whatever
   num_workers is (with persistent_workers only the first iter(loader) does);
2. the sampler's iterator is lazy: a RandomSampler's own seed (or, with loader.generator, its randperm) is
   drawn at the first index the loader asks for: at the first next() with num_workers=0; inside iter(loader)
   with workers, which prefetch prefetch_factor * num_workers batches of indices there.
So a script's random numbers after a loop over a loader are PyTorch's, and so are the batches.

num_workers > 0 runs the workers in the calling thread (_utils/worker.py): batch k goes to worker k mod
num_workers as in 1.13, each worker with its dataset copy, its seeded streams and worker_init_fn; the batches
and every stream's values are 1.13's, without the processes (and without their speed). pin_memory is accepted
and does nothing (the CPU only); timeout and multiprocessing_context are checked and otherwise unused.
"""
import itertools
import math
import os
import sys
import traceback
import warnings
from collections import deque

from tinyddp import _tensor as _t
from tinyddp._object_repr import object_repr
from tinyddp.utils.data import _utils
from tinyddp.utils.data.dataset import IterableDataset
from tinyddp.utils.data.sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

default_collate = _utils.collate.default_collate
default_convert = _utils.collate.default_convert
get_worker_info = _utils.worker.get_worker_info


class _DatasetKind:
    Map = 0
    Iterable = 1


class _InfiniteConstantSampler(Sampler):
    """None forever: an iterable dataset's "indices" (each one asks its iterator for the next sample)."""

    def __init__(self):
        super().__init__(None)

    def __iter__(self):
        while True:
            yield None


class _MapFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset, self.auto_collation, self.collate_fn = dataset, auto_collation, collate_fn

    def fetch(self, index):
        if self.auto_collation:
            getitems = getattr(self.dataset, "__getitems__", None)
            data = getitems(index) if getitems else [self.dataset[i] for i in index]
        else:
            data = self.dataset[index]
        return self.collate_fn(data)


class _IterableFetcher:
    """Takes len(index) samples from the dataset's iterator per batch (StopIteration when none are left, or
    with drop_last when fewer than a batch are)."""

    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.auto_collation, self.collate_fn, self.drop_last = auto_collation, collate_fn, drop_last
        self.dataset_iter = iter(dataset)
        self.ended = False

    def fetch(self, index):
        if self.ended:
            raise StopIteration
        if self.auto_collation:
            data = []
            for _ in index:
                try:
                    data.append(next(self.dataset_iter))
                except StopIteration:
                    self.ended = True
                    break
            if not data or (self.drop_last and len(data) < len(index)):
                raise StopIteration
        else:
            data = next(self.dataset_iter)
        return self.collate_fn(data)


def _make_fetcher(kind, dataset, auto_collation, collate_fn, drop_last):
    cls = _MapFetcher if kind == _DatasetKind.Map else _IterableFetcher
    return cls(dataset, auto_collation, collate_fn, drop_last)


class _KeyErrorMessage(str):
    """A KeyError prints repr() of its argument; this one prints the traceback's lines as they are."""

    def __repr__(self):
        return self


def _worker_error(exc, worker_id):
    """The exception 1.13 raises in the main process for one raised in worker `worker_id`: its type, with
    "Caught <Type> in DataLoader worker process <id>." and the worker's traceback as the message."""
    where = f"in DataLoader worker process {worker_id}"
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    msg = f"Caught {type(exc).__name__} {where}.\nOriginal {text}"
    if isinstance(exc, KeyError):
        msg = _KeyErrorMessage(msg)
    try:
        return type(exc)(msg)
    except TypeError:
        return RuntimeError(msg)


class DataLoader:
    """Iterates over `dataset` in batches; 1.13's arguments, checks and texts (see the module's overview)."""
    __repr__ = object_repr   # <torch....Name object at 0x...>, as 1.13's default repr

    __initialized = False

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=2, persistent_workers=False,
                 pin_memory_device=""):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable "
                             "multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor != 2:
            # 1.13's text, without a space after the first sentence.
            raise ValueError("prefetch_factor option could only be specified in multiprocessing.let "
                             "num_workers > 0 to enable multiprocessing.")
        assert prefetch_factor > 0
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context

        if isinstance(dataset, IterableDataset):
            self._dataset_kind = _DatasetKind.Iterable
            if shuffle not in {False, None}:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified shuffle option, but got "
                                 f"shuffle={shuffle}")
            if sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified sampler option, but got "
                                 f"sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified batch_sampler option, "
                                 f"but got batch_sampler={batch_sampler}")
        else:
            shuffle = bool(shuffle)
            self._dataset_kind = _DatasetKind.Map

        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, "
                                 "and drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with "
                             "drop_last")

        if sampler is None:
            if self._dataset_kind == _DatasetKind.Iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self.__initialized = True
        self._IterableDataset_len_called = None   # len(loader) of an iterable dataset, for the warning in next()
        self._iterator = None
        self.check_worker_number_rationality()

    @property
    def multiprocessing_context(self):
        return self.__multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, context):
        if context is not None:
            if self.num_workers == 0:
                raise ValueError(f"multiprocessing_context can only be used with multi-process loading "
                                 f"(num_workers > 0), but got num_workers={self.num_workers}")
            import multiprocessing
            if isinstance(context, str):
                methods = multiprocessing.get_all_start_methods()
                if context not in methods:
                    raise ValueError(f"multiprocessing_context option should specify a valid start method in "
                                     f"{methods!r}, but got multiprocessing_context={context!r}")
                context = multiprocessing.get_context(context)
            if not isinstance(context, multiprocessing.context.BaseContext):
                raise TypeError(f"multiprocessing_context option should be a valid context object or a string "
                                f"specifying the start method, but got multiprocessing_context={context}")
        self.__multiprocessing_context = context

    def __setattr__(self, attr, value):
        if self.__initialized and attr in ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset",
                                           "persistent_workers"):
            raise ValueError(f"{attr} attribute should not be set after {type(self).__name__} is initialized")
        super().__setattr__(attr, value)

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def _get_iterator(self):
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        self.check_worker_number_rationality()
        return _InProcessWorkersDataLoaderIter(self)

    def __iter__(self):
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None:
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset(self)
            return self._iterator
        return self._get_iterator()

    def __len__(self):
        if self._dataset_kind == _DatasetKind.Iterable:
            # len(dataset) / batch_size, the best guess for a stream (its workers may each end with a short batch).
            length = self._IterableDataset_len_called = len(self.dataset)
            if self.batch_size is not None:
                length = length // self.batch_size if self.drop_last else math.ceil(length / self.batch_size)
            return length
        return len(self._index_sampler)

    def check_worker_number_rationality(self):
        """1.13's warning when num_workers exceeds the CPUs this process may use."""
        if not self.num_workers:
            return
        suggest, cpuset_checked = None, False
        if hasattr(os, "sched_getaffinity"):
            try:
                suggest, cpuset_checked = len(os.sched_getaffinity(0)), True
            except Exception:   # noqa: BLE001 - as 1.13: any failure falls back to cpu_count
                pass
        if suggest is None:
            suggest = os.cpu_count()
        if suggest is not None and self.num_workers <= suggest:
            return
        if suggest is None:
            detail = "DataLoader is not able to compute a suggested max number of worker in current system."
        else:
            detail = (f"Our suggested max number of worker in current system is {suggest}"
                      f"{'' if cpuset_checked else ' (`cpuset` is not taken into account)'}, which is smaller "
                      f"than what this DataLoader is going to create.")
        warnings.warn(f"This DataLoader will create {self.num_workers} worker processes in total. {detail} "
                      f"Please be aware that excessive worker creation might get DataLoader running slow or even "
                      f"freeze, lower the worker number to avoid potential slowness/freeze if necessary.")


class _BaseDataLoaderIter:
    """What iter(loader) returns. Note [DataLoader's draws]: the sampler's iterator is made first (lazily, no
    draw), then the base seed is drawn, as 1.13's _BaseDataLoaderIter.__init__ does."""
    __repr__ = object_repr   # <torch....Name object at 0x...>, as 1.13's default repr

    def __init__(self, loader):
        self._dataset = loader.dataset
        self._dataset_kind = loader._dataset_kind
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        self._prefetch_factor = loader.prefetch_factor
        self._pin_memory = False   # no accelerator to pin for
        if loader.pin_memory_device and not loader.pin_memory:
            warnings.warn("pin memory device is set and pin_memory flag is not used then device pinned memory "
                          "won't be usedplease set pin_memory to true, if you need to use the device pin memory")
        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        self._sampler_iter = iter(self._index_sampler)
        self._base_seed = _t.empty((), dtype=_t.int64).random_(generator=loader.generator).item()
        self._persistent_workers = loader.persistent_workers
        self._num_yielded = 0

    def __iter__(self):
        return self

    def _reset(self, loader, first_iter=False):
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._IterableDataset_len_called = loader._IterableDataset_len_called

    def _next_index(self):
        return next(self._sampler_iter)

    def _next_data(self):
        raise NotImplementedError

    def __next__(self):
        data = self._next_data()
        self._num_yielded += 1
        if self._dataset_kind == _DatasetKind.Iterable and self._IterableDataset_len_called is not None and \
                self._num_yielded > self._IterableDataset_len_called:
            msg = (f"Length of IterableDataset {self._dataset} was reported to be "
                   f"{self._IterableDataset_len_called} (when accessing len(dataloader)), but {self._num_yielded} "
                   f"samples have been fetched. ")
            if self._num_workers > 0:
                msg += ("For multiprocessing data-loading, this could be caused by not properly configuring the "
                        "IterableDataset replica at each worker. Please see "
                        "https://pytorch.org/docs/stable/data.html#torch.utils.data.IterableDataset for examples.")
            warnings.warn(msg)
        return data

    def __len__(self):
        return len(self._index_sampler)

    def __getstate__(self):
        raise NotImplementedError(f"{type(self).__name__} cannot be pickled")


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader):
        super().__init__(loader)
        # After the base seed: an iterable dataset's iter() runs here, as in 1.13.
        self._fetcher = _make_fetcher(self._dataset_kind, self._dataset, self._auto_collation, self._collate_fn,
                                      self._drop_last)

    def _next_data(self):
        index = self._next_index()
        return self._fetcher.fetch(index)


class _InProcessWorkersDataLoaderIter(_BaseDataLoaderIter):
    """1.13's multi-process iterator with the workers run in this thread, lazily: task k (a batch of indices) is
    sent to the next worker still going, in turn; each next() returns the oldest task's batch, fetched in its
    worker, then sends one more task. The sampler is therefore read where 1.13 reads it: prefetch_factor *
    num_workers tasks at iter(loader), then one per batch returned (and one per worker that ran dry)."""

    def __init__(self, loader):
        super().__init__(loader)
        self._worker_init_fn = loader.worker_init_fn
        self._workers = [_utils.worker.InProcessWorker(self._dataset, i, self._num_workers, self._base_seed)
                         for i in range(self._num_workers)]
        for w in self._workers:
            w.run(self._start_worker, w, True)
        self._reset(loader, first_iter=True)

    def _start_worker(self, w, first):
        """In worker w: worker_init_fn at its start, then a fetcher over its dataset copy (each epoch)."""
        try:
            if first and self._worker_init_fn is not None:
                self._worker_init_fn(w.id)
            w.fetcher = _make_fetcher(self._dataset_kind, w.dataset, self._auto_collation, self._collate_fn,
                                      self._drop_last)
        except Exception as e:   # noqa: BLE001 - raised in the main program at the worker's first task, as 1.13
            w.init_error = _worker_error(e, w.id)

    def _reset(self, loader, first_iter=False):
        super()._reset(loader, first_iter)
        self._tasks = deque()    # (worker id, index) sent and not yet returned, oldest first
        self._active = [True] * self._num_workers
        self._cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:   # persistent workers: a new epoch re-creates each worker's fetcher, in the worker
            for w in self._workers:
                w.run(self._start_worker, w, False)
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _try_put_index(self):
        try:
            index = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):
            worker_id = next(self._cycle)
            if self._active[worker_id]:
                self._tasks.append((worker_id, index))
                return

    def _next_data(self):
        while True:
            while self._tasks and not self._active[self._tasks[0][0]]:
                self._tasks.popleft()   # sent to a worker whose stream ended: it never answers
            if not self._tasks:
                raise StopIteration
            worker_id, index = self._tasks.popleft()
            w = self._workers[worker_id]
            if w.init_error is not None:
                error, w.init_error = w.init_error, None
                self._try_put_index()
                raise error
            try:
                data = w.run(w.fetcher.fetch, index)
            except StopIteration:
                if self._dataset_kind != _DatasetKind.Iterable:
                    raise
                self._active[worker_id] = False
                self._try_put_index()
                continue
            except Exception as e:   # noqa: BLE001 - re-raised as 1.13 re-raises a worker's exception
                self._try_put_index()
                raise _worker_error(e, worker_id) from None
            self._try_put_index()
            return data


__all__ = ["DataLoader", "get_worker_info", "default_collate", "default_convert"]
