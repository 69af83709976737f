"""The cases of data_loading.json, written once against a torch-shaped module: gen_data_loading.py runs them
with PyTorch 1.13 and tests/python/test_data.py with tinyddp (`import tinyddp as torch`), and the two
encodings must be equal. This file never imports torch: each case takes the module as its argument.

A case returns plain data (encode()): tensors as dtype, shape and values, containers tagged with their type,
errors as their type and text, warnings as their texts, and the default streams' next values, so that the
file pins down the order of the random draws as well as the batches.
"""
import collections
import math
import random
import warnings

import numpy as np

Point = collections.namedtuple("Point", ["x", "y"])
# the module run_all was given: seed_all and the worker_init_fns have no argument for it (a DataLoader calls them)
_torch = None


def encode(torch, value):
    """JSON-ready data that tells apart what a script could tell apart (tensor dtypes, tuple/list/namedtuple)."""
    if isinstance(value, torch.Tensor):
        return {"tensor": value.tolist(), "dtype": str(value.dtype), "shape": list(value.shape)}
    if isinstance(value, np.ndarray):
        return {"ndarray": value.tolist(), "dtype": str(value.dtype)}
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return {"namedtuple": type(value).__name__, "items": [encode(torch, v) for v in value]}
    if isinstance(value, (list, tuple)):
        return {type(value).__name__: [encode(torch, v) for v in value]}
    if isinstance(value, dict):
        return {"dict": type(value).__name__, "items": [[k, encode(torch, v)] for k, v in value.items()]}
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    if isinstance(value, bytes):
        return {"bytes": value.decode("latin-1")}
    raise TypeError(f"cannot encode {type(value)}")


def error_of(fn, first_line=False):
    """{"error": type name, "message": str(e)} of what fn() raises (the first line only if asked)."""
    try:
        fn()
    except Exception as e:   # noqa: BLE001
        msg = str(e)
        return {"error": type(e).__name__, "message": msg.split("\n")[0] if first_line else msg}
    return {"error": None}


def recorded(fn):
    """(fn()'s value, the texts of the warnings it raised)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value = fn()
    return value, [str(w.message) for w in caught]


def streams(torch):
    """The next values of the main program's three streams (torch's default one, `random`, NumPy's)."""
    return {"randn": torch.randn(3).tolist(), "random": random.random(), "numpy": float(np.random.rand())}


def seed_all(s):
    _torch.manual_seed(s)
    random.seed(s)
    np.random.seed(s)


def pairs(torch, n=10):
    return torch.utils.data.TensorDataset(torch.arange(n), torch.arange(n).double() * 0.5)


# ----------------------------------------------------------------------------------------------------------------
# Datasets


def case_tensor_dataset(torch):
    data = torch.utils.data
    ds = pairs(torch, 4)
    return {"len": len(ds), "items": [encode(torch, ds[i]) for i in range(4)],
            "negative": encode(torch, ds[-1]),
            "mismatch": error_of(lambda: data.TensorDataset(torch.zeros(3, 2), torch.zeros(4)))}


def case_concat_chain_subset(torch):
    data = torch.utils.data

    class Squares(data.Dataset):
        def __init__(self, n, offset):
            self.n, self.offset = n, offset

        def __len__(self):
            return self.n

        def __getitem__(self, i):
            if not 0 <= i < self.n:
                raise IndexError(i)
            return (i + self.offset) ** 2

    class Stream(data.IterableDataset):
        def __init__(self, items):
            self.items = items

        def __iter__(self):
            return iter(self.items)

        def __len__(self):
            return len(self.items)

    cat = Squares(3, 0) + Squares(4, 10)
    chain = Stream([1, 2]) + Stream([3])
    sub = data.Subset(cat, [6, 0, 3])
    return {"type": type(cat).__name__, "len": len(cat), "cumulative_sizes": cat.cumulative_sizes,
            "items": [cat[i] for i in range(len(cat))], "negative": [cat[-1], cat[-7]],
            "too_negative": error_of(lambda: cat[-8]),
            "empty": error_of(lambda: data.ConcatDataset([])),
            "iterable": error_of(lambda: data.ConcatDataset([Stream([1])])),
            "chain_type": type(chain).__name__, "chain": list(chain), "chain_len": len(chain),
            "chain_of_map": error_of(lambda: list(data.ChainDataset([Squares(2, 0)]))),
            "subset": [sub[i] for i in range(len(sub))], "subset_len": len(sub)}


def case_random_split(torch):
    data = torch.utils.data
    out = {}
    g = torch.Generator().manual_seed(42)
    out["ints"] = [list(s.indices) for s in data.random_split(range(10), [3, 7], generator=g)]
    g = torch.Generator().manual_seed(42)
    out["fractions"] = [list(s.indices) for s in data.random_split(range(30), [0.3, 0.3, 0.4], generator=g)]
    # 11 * (0.25, 0.25, 0.5) floors to (2, 2, 5): the remainder 2 goes to the first two splits.
    g = torch.Generator().manual_seed(1)
    out["remainder"] = [list(s.indices) for s in data.random_split(range(11), [0.25, 0.25, 0.5], generator=g)]
    g = torch.Generator().manual_seed(1)
    splits, out["empty_warnings"] = recorded(lambda: data.random_split(range(3), [0.1, 0.1, 0.8], generator=g))
    out["empty_split_lengths"] = [len(s) for s in splits]
    # [1, 0] of one sample sums to 1, so 1.13 takes it as fractions (and warns about the empty split).
    splits, out["one_sample_warnings"] = recorded(lambda: data.random_split(range(1), [1, 0]))
    out["bad_sum"] = error_of(lambda: data.random_split(range(10), [3, 6]))
    out["bad_fraction"] = error_of(lambda: data.random_split(range(10), [1.5, -0.5]))
    seed_all(3)
    out["default_generator"] = [list(s.indices) for s in data.random_split(range(10), [4, 6])]
    out["after"] = streams(torch)
    out["subset_item"] = encode(torch, data.random_split(pairs(torch, 6), [2, 4],
                                                         generator=torch.Generator().manual_seed(5))[1][0])
    return out


# ----------------------------------------------------------------------------------------------------------------
# Samplers


def case_samplers(torch):
    data = torch.utils.data
    out = {}
    out["sequential"] = list(data.SequentialSampler(range(5)))
    seed_all(0)
    s = data.RandomSampler(range(7))
    out["random_global"] = [list(s), list(s)]
    out["random_global_after"] = streams(torch)
    g = torch.Generator().manual_seed(9)
    s = data.RandomSampler(range(7), generator=g)
    out["random_generator"] = [list(s), list(s)]
    out["random_num_samples"] = list(data.RandomSampler(range(5), num_samples=12,
                                                        generator=torch.Generator().manual_seed(2)))
    out["random_num_samples_len"] = len(data.RandomSampler(range(5), num_samples=12))
    # 70 = 32 + 32 + 6: three randint calls.
    out["replacement"] = list(data.RandomSampler(range(10), replacement=True, num_samples=70,
                                                 generator=torch.Generator().manual_seed(4)))
    seed_all(1)
    out["replacement_global"] = list(data.RandomSampler(range(3), replacement=True))
    out["replacement_global_after"] = streams(torch)
    out["bad_replacement"] = error_of(lambda: data.RandomSampler(range(3), replacement=1))
    out["bad_num_samples"] = error_of(lambda: data.RandomSampler(range(3), num_samples=0))
    out["empty_dataset"] = error_of(lambda: data.RandomSampler([]))
    out["subset_random"] = list(data.SubsetRandomSampler([10, 20, 30, 40, 50],
                                                         generator=torch.Generator().manual_seed(3)))
    seed_all(2)
    out["subset_random_global"] = list(data.SubsetRandomSampler(list(range(100, 108))))
    out["subset_random_global_after"] = streams(torch)
    out["batch"] = [list(data.BatchSampler(data.SequentialSampler(range(10)), 3, drop_last)) for drop_last in
                    (False, True)]
    out["batch_len"] = [len(data.BatchSampler(range(10), 3, drop_last)) for drop_last in (False, True)]
    out["batch_bad_size"] = error_of(lambda: data.BatchSampler(range(3), 0, False))
    out["batch_bool_size"] = error_of(lambda: data.BatchSampler(range(3), True, False))
    out["batch_bad_drop_last"] = error_of(lambda: data.BatchSampler(range(3), 2, 0))
    return out


def case_weighted_sampler(torch):
    data = torch.utils.data
    out = {}
    weights = [0.1, 0.9, 0.4, 0.7, 3.0, 0.6]
    out["generator"] = list(data.WeightedRandomSampler(weights, 40, generator=torch.Generator().manual_seed(6)))
    seed_all(5)
    out["global"] = list(data.WeightedRandomSampler(torch.tensor([1.0, 0.0, 2.0, 5.0]), 33))
    out["global_after"] = streams(torch)
    out["unnormalized"] = list(data.WeightedRandomSampler([3, 1, 0, 7, 7], 25,
                                                          generator=torch.Generator().manual_seed(8)))
    out["bad_num_samples"] = error_of(lambda: data.WeightedRandomSampler(weights, 0))
    out["bad_replacement"] = error_of(lambda: data.WeightedRandomSampler(weights, 3, replacement=1))
    out["bad_shape"] = error_of(lambda: data.WeightedRandomSampler([[1.0, 2.0]], 3))
    out["len"] = len(data.WeightedRandomSampler(weights, 7))
    return out


def case_distributed_sampler(torch):
    data = torch.utils.data
    out = {}
    for n, replicas in ((10, 3), (11, 4), (2, 5), (8, 2)):
        for shuffle in (True, False):
            for drop_last in (False, True):
                for epoch in (0, 1):
                    shares = []
                    for rank in range(replicas):
                        s = data.DistributedSampler(range(n), num_replicas=replicas, rank=rank, shuffle=shuffle,
                                                    drop_last=drop_last, seed=5 if n == 8 else 0)
                        s.set_epoch(epoch)
                        shares.append({"indices": list(s), "len": len(s), "total_size": s.total_size})
                    out[f"n{n}_r{replicas}_shuffle{int(shuffle)}_drop{int(drop_last)}_e{epoch}"] = shares
    out["bad_rank"] = error_of(lambda: data.DistributedSampler(range(4), num_replicas=2, rank=2))
    out["negative_rank"] = error_of(lambda: data.DistributedSampler(range(4), num_replicas=2, rank=-1))
    out["no_group"] = error_of(lambda: data.DistributedSampler(range(4)))
    out["no_group_rank_given"] = error_of(lambda: data.DistributedSampler(range(4), rank=0))
    seed_all(0)
    list(data.DistributedSampler(range(9), num_replicas=2, rank=0))
    out["after"] = streams(torch)   # the default streams are not touched
    return out


# ----------------------------------------------------------------------------------------------------------------
# DataLoader


def batches(torch, loader):
    return [encode(torch, b) for b in loader]


def case_loader_sequential(torch):
    data = torch.utils.data
    ds = pairs(torch, 10)
    out = {}
    for drop_last in (False, True):
        loader = data.DataLoader(ds, batch_size=4, drop_last=drop_last)
        out[f"drop_last{int(drop_last)}"] = {"len": len(loader), "batches": batches(torch, loader)}
    loader = data.DataLoader(ds, batch_size=None)
    out["no_batching"] = {"len": len(loader), "batches": batches(torch, loader)[:3]}
    out["default_batch_size"] = batches(torch, data.DataLoader(range(3)))
    out["pin_memory"] = batches(torch, data.DataLoader(ds, batch_size=5, pin_memory=True))
    out["collate_fn"] = [b for b in data.DataLoader(range(7), batch_size=3, collate_fn=lambda b: sum(b))]
    bs = data.BatchSampler(data.SequentialSampler(range(7)), 2, False)
    loader = data.DataLoader(range(7), batch_sampler=bs)
    out["batch_sampler"] = {"len": len(loader), "batches": batches(torch, loader)}
    loader = data.DataLoader(range(7), sampler=[6, 5, 0], batch_size=2)
    out["list_sampler"] = {"len": len(loader), "batches": batches(torch, loader)}
    out["worker_info"] = data.get_worker_info()
    return out


def case_loader_shuffle(torch):
    data = torch.utils.data
    ds = pairs(torch, 10)
    out = {}
    seed_all(0)
    loader = data.DataLoader(ds, batch_size=4, shuffle=True)
    out["global_epochs"] = [batches(torch, loader) for _ in range(2)]
    out["global_after"] = streams(torch)
    # The base seed is drawn in iter(loader), the sampler's seed at the first next(): a draw in between sits
    # between the two.
    seed_all(1)
    it = iter(loader)
    out["between"] = torch.randn(2).tolist()
    out["first_batch"] = encode(torch, next(it))
    out["between_after"] = streams(torch)
    # An iterator made and dropped still costs its base seed.
    seed_all(2)
    iter(loader)
    out["dropped_iterator_after"] = streams(torch)
    # A generator of the loader's: the base seed and the permutation come from it, the default stream is untouched.
    seed_all(3)
    g = torch.Generator().manual_seed(7)
    loader = data.DataLoader(ds, batch_size=3, shuffle=True, generator=g, drop_last=True)
    out["generator_epochs"] = [batches(torch, loader) for _ in range(2)]
    out["generator_after"] = streams(torch)
    out["generator_state"] = torch.randint(0, 1000, (4,), generator=g).tolist()
    # Sequential loading draws a base seed too.
    seed_all(4)
    batches(torch, data.DataLoader(ds, batch_size=4))
    out["sequential_after"] = streams(torch)
    seed_all(5)
    sampler = data.RandomSampler(ds, replacement=True, num_samples=13)
    out["sampler_replacement"] = batches(torch, data.DataLoader(ds, batch_size=5, sampler=sampler))
    out["sampler_replacement_after"] = streams(torch)
    return out


def case_loader_distributed(torch):
    data = torch.utils.data
    ds = pairs(torch, 11)
    out = {}
    seed_all(0)
    for rank in range(3):
        sampler = data.DistributedSampler(ds, num_replicas=3, rank=rank, seed=1)
        loader = data.DataLoader(ds, batch_size=2, sampler=sampler)
        epochs = []
        for epoch in range(2):
            sampler.set_epoch(epoch)
            epochs.append(batches(torch, loader))
        out[f"rank{rank}"] = {"len": len(loader), "epochs": epochs}
    out["after"] = streams(torch)
    return out


def case_loader_errors(torch):
    data = torch.utils.data
    ds = pairs(torch, 4)

    class Stream(data.IterableDataset):
        def __iter__(self):
            return iter(range(3))

    out = {
        "sampler_and_shuffle": error_of(lambda: data.DataLoader(ds, sampler=[0, 1], shuffle=True)),
        "batch_sampler_and_batch_size": error_of(lambda: data.DataLoader(ds, batch_sampler=[[0]], batch_size=2)),
        "batch_sampler_and_shuffle": error_of(lambda: data.DataLoader(ds, batch_sampler=[[0]], shuffle=True)),
        "batch_sampler_and_sampler": error_of(lambda: data.DataLoader(ds, batch_sampler=[[0]], sampler=[0])),
        "batch_sampler_and_drop_last": error_of(lambda: data.DataLoader(ds, batch_sampler=[[0]], drop_last=True)),
        "no_batch_size_drop_last": error_of(lambda: data.DataLoader(ds, batch_size=None, drop_last=True)),
        "negative_workers": error_of(lambda: data.DataLoader(ds, num_workers=-1)),
        "negative_timeout": error_of(lambda: data.DataLoader(ds, timeout=-1)),
        "prefetch_without_workers": error_of(lambda: data.DataLoader(ds, prefetch_factor=3)),
        "persistent_without_workers": error_of(lambda: data.DataLoader(ds, persistent_workers=True)),
        "context_without_workers": error_of(lambda: data.DataLoader(ds, multiprocessing_context="fork")),
        "context_bad_method": error_of(lambda: data.DataLoader(ds, num_workers=1,
                                                               multiprocessing_context="teleport")),
        "iterable_shuffle": error_of(lambda: data.DataLoader(Stream(), shuffle=True)),
        "iterable_sampler": error_of(lambda: data.DataLoader(Stream(), sampler=[0])),
        "iterable_batch_sampler": error_of(lambda: data.DataLoader(Stream(), batch_sampler=[[0]])),
        "iterable_no_len": error_of(lambda: len(data.DataLoader(Stream()))),
        "bad_batch_size": error_of(lambda: data.DataLoader(ds, batch_size=0)),
    }
    loader = data.DataLoader(ds)
    for attr in ("batch_size", "sampler", "dataset"):
        out[f"set_{attr}"] = error_of(lambda: setattr(loader, attr, None))
    loader.num_workers = 0   # other attributes may change
    out["collate_error"] = error_of(lambda: list(data.DataLoader([{"a": 1}, {"b": 2}], batch_size=2)))
    return out


def case_iterable_loader(torch):
    data = torch.utils.data

    class Counting(data.IterableDataset):
        def __init__(self, n, reported):
            self.n, self.reported = n, reported

        def __iter__(self):
            return iter(range(self.n))

        def __len__(self):
            return self.reported

        def __repr__(self):
            return "Counting"

    out = {}
    for drop_last in (False, True):
        loader = data.DataLoader(Counting(7, 7), batch_size=3, drop_last=drop_last)
        out[f"drop_last{int(drop_last)}"] = {"len": len(loader), "batches": batches(torch, loader)}
    out["no_batching"] = batches(torch, data.DataLoader(Counting(3, 3), batch_size=None))
    out["default"] = batches(torch, data.DataLoader(Counting(3, 3)))
    loader = data.DataLoader(Counting(5, 2), batch_size=2)
    reported = len(loader)
    got, out["too_long_warnings"] = recorded(lambda: batches(torch, loader))
    out["too_long"] = {"len": reported, "batches": got}
    return out


def case_collate(torch):
    data = torch.utils.data
    collate, convert = data.default_collate, data.default_convert
    out = {}
    out["ints"] = encode(torch, collate([1, 2, 3]))
    out["floats"] = encode(torch, collate([0.1, 2.5]))
    out["bools"] = encode(torch, collate([True, False]))
    out["int_then_float"] = encode(torch, collate([1, 2.5]))
    out["strings"] = encode(torch, collate(["a", "b"]))
    out["bytes"] = encode(torch, collate([b"x", b"y"]))
    out["tensors"] = encode(torch, collate([torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0])]))
    out["tensor_0d"] = encode(torch, collate([torch.tensor(1), torch.tensor(2)]))
    out["tuples"] = encode(torch, collate([(1, "a", 0.5), (2, "b", 1.5)]))
    out["lists"] = encode(torch, collate([[1, 2], [3, 4]]))
    out["dicts"] = encode(torch, collate([{"x": 1, "y": [1.0, 2.0]}, {"x": 2, "y": [3.0, 4.0]}]))
    out["ordered_dict"] = encode(torch, collate([collections.OrderedDict(b=1, a=2)] * 2))
    out["namedtuple"] = encode(torch, collate([Point(1, 2.0), Point(3, 4.0)]))
    out["nested"] = encode(torch, collate([{"p": Point(torch.zeros(2), [1, "s"])},
                                           {"p": Point(torch.ones(2), [2, "t"])}]))
    out["numpy_arrays"] = encode(torch, collate([np.array([1.0, 2.0], dtype=np.float32),
                                                 np.array([3.0, 4.0], dtype=np.float32)]))
    out["numpy_int_arrays"] = encode(torch, collate([np.array([1, 2]), np.array([3, 4])]))
    out["numpy_scalars"] = encode(torch, collate([np.float64(1.5), np.float64(2.0)]))
    out["numpy_float32_scalars"] = encode(torch, collate([np.float32(1.5), np.float32(2.0)]))
    out["numpy_int_scalars"] = encode(torch, collate([np.int64(1), np.int64(2)]))
    out["numpy_mixed_scalars"] = encode(torch, collate([np.int64(1), np.float32(2.5)]))
    out["numpy_bool_scalars"] = encode(torch, collate([np.bool_(True), np.bool_(False)]))
    out["numpy_strings"] = error_of(lambda: collate([np.array(["a"]), np.array(["b"])]))
    out["unequal"] = error_of(lambda: collate([[1, 2], [3]]))
    out["unsupported"] = error_of(lambda: collate([{1}, {2}]))
    out["none"] = error_of(lambda: collate([None, None]))
    out["stack_sizes"] = error_of(lambda: collate([torch.zeros(2), torch.zeros(3)]))
    out["convert_numpy"] = encode(torch, convert(np.array([1.0, 2.0])))
    out["convert_tuple"] = encode(torch, convert((np.int64(3), "s", [np.array([1, 2])])))
    out["convert_namedtuple"] = encode(torch, convert(Point(np.float64(1.0), 2)))
    out["convert_dict"] = encode(torch, convert({"a": np.array([True, False]), "b": 1}))
    out["convert_strings"] = encode(torch, convert(np.array(["a", "b"])))
    out["convert_plain"] = encode(torch, convert([1, 2.5, "x"]))
    return out


# ----------------------------------------------------------------------------------------------------------------
# Workers: 1.13 runs them as processes, tinyddp in-process; the batches and every stream must agree.


class Noisy:
    """A map-style dataset whose samples draw from the three streams, and say which worker made them."""

    def __init__(self, torch, n):
        self.torch, self.n = torch, n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        torch = self.torch
        info = torch.utils.data.get_worker_info()
        return {"i": i, "worker": -1 if info is None else info.id, "torch": torch.rand(2),
                "random": random.random(), "numpy": float(np.random.rand()),
                "init": getattr(self, "init_record", {})}


def worker_init_record(worker_id):
    """Records in the worker's copy of the dataset (its samples carry it back) what the worker saw at its start."""
    torch = _torch
    info = torch.utils.data.get_worker_info()
    info.dataset.init_record = {"id": worker_id, "info_id": info.id, "num_workers": info.num_workers,
                                "seed": info.seed, "initial_seed": torch.initial_seed(),
                                "randn": torch.randn(1).tolist(), "random": random.random(),
                                "numpy": float(np.random.rand()), "repr": repr(info).split(", dataset=")[0]}


def case_workers(torch):
    data = torch.utils.data
    out = {}
    seed_all(0)
    ds = Noisy(torch, 10)
    loader = data.DataLoader(ds, batch_size=3, shuffle=True, num_workers=2, worker_init_fn=worker_init_record)
    out["epochs"] = [batches(torch, loader) for _ in range(2)]
    out["main_dataset_untouched"] = hasattr(ds, "init_record")
    out["after"] = streams(torch)
    # With workers the sampler is read (and a RandomSampler seeded) inside iter(loader), to prefetch.
    seed_all(1)
    it = iter(loader)
    out["between"] = torch.randn(2).tolist()
    out["first_batch"] = encode(torch, next(it))
    out["between_after"] = streams(torch)
    # No automatic batching, three workers, a prefetch factor of 1.
    seed_all(2)
    loader = data.DataLoader(Noisy(torch, 5), batch_size=None, num_workers=3, prefetch_factor=1)
    out["unbatched"] = batches(torch, loader)
    out["unbatched_after"] = streams(torch)
    # Persistent workers: one base seed, the workers' streams carry on across epochs.
    seed_all(3)
    loader = data.DataLoader(Noisy(torch, 4), batch_size=2, num_workers=2, persistent_workers=True,
                             worker_init_fn=worker_init_record)
    out["persistent_epochs"] = [batches(torch, loader) for _ in range(3)]
    out["persistent_after"] = streams(torch)
    # The loader's generator seeds the workers.
    seed_all(4)
    loader = data.DataLoader(Noisy(torch, 4), batch_size=2, num_workers=2,
                             generator=torch.Generator().manual_seed(11))
    out["generator"] = batches(torch, loader)
    out["generator_after"] = streams(torch)
    out["error"] = error_of(lambda: list(data.DataLoader(_Failing(), num_workers=2)), first_line=True)
    return out


class _Failing:
    def __len__(self):
        return 3

    def __getitem__(self, i):
        raise ValueError(f"bad sample {i}")


class RangeStream:
    """1.13's IterableDataset example: range(start, end), split between workers by worker_init_fn or not."""

    def __init__(self, start, end):
        self.start, self.end = start, end

    def __iter__(self):
        return iter(range(self.start, self.end))


def split_range(worker_id):
    torch = _torch
    info = torch.utils.data.get_worker_info()
    ds = info.dataset
    per_worker = int(math.ceil((ds.end - ds.start) / float(info.num_workers)))
    ds.start = ds.start + worker_id * per_worker
    ds.end = min(ds.start + per_worker, ds.end)


def case_iterable_workers(torch):
    data = torch.utils.data
    stream = type("Stream", (RangeStream, data.IterableDataset), {})
    out = {}
    seed_all(0)
    out["duplicated"] = batches(torch, data.DataLoader(stream(3, 7), num_workers=2))
    out["split"] = batches(torch, data.DataLoader(stream(3, 7), num_workers=2, worker_init_fn=split_range))
    out["split_many"] = batches(torch, data.DataLoader(stream(3, 7), num_workers=12, worker_init_fn=split_range))
    out["split_batched"] = batches(torch, data.DataLoader(stream(0, 11), batch_size=2, num_workers=3,
                                                          worker_init_fn=split_range))
    ds = stream(0, 5)
    list(data.DataLoader(ds, num_workers=2, worker_init_fn=split_range))
    out["main_dataset_unchanged"] = [ds.start, ds.end]
    out["after"] = streams(torch)
    return out


CASES = {name[len("case_"):]: fn for name, fn in sorted(globals().items()) if name.startswith("case_")}


def run_all(torch):
    """Every case's encoding, under `torch` (PyTorch or tinyddp)."""
    global _torch
    _torch = torch
    return {name: fn(torch) for name, fn in CASES.items()}
