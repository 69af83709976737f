"""tinyddp.utils.data against PyTorch 1.13 (tests/golden/data_loading.json, from gen_data_loading.py).

The cases are tests/golden/data_loading_cases.py, the same code the generator ran under torch; here it runs
under tinyddp and every encoding must be equal: indices, batches (values, dtypes, shapes, container types),
error types and texts, warnings, and the default streams' next values after each loop, so that the order of
the random draws is PyTorch's too. The tests below the replay check what the golden cannot hold.
"""
import importlib.util
import json
import os
import sys

import pytest

import tinyddp as torch

# 1.13's warning for more workers than CPUs (in-process here, but warned as 1.13 does) is expected in the cases.
pytestmark = pytest.mark.filterwarnings("ignore:This DataLoader will create")

HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN_DIR = os.path.join(HERE, "..", "golden")
with open(os.path.join(GOLDEN_DIR, "data_loading.json")) as f:
    GOLDEN = json.load(f)


def _load_cases():
    sys.dont_write_bytecode = True
    spec = importlib.util.spec_from_file_location("data_loading_cases", os.path.join(GOLDEN_DIR,
                                                                                      "data_loading_cases.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules["data_loading_cases"] = module
    spec.loader.exec_module(module)
    module._torch = torch
    return module


CASES = _load_cases()


def first_difference(ours, golden, path="$"):
    """The path and both values where two encodings first differ, or None."""
    if type(ours) is not type(golden):
        return f"{path}: {ours!r} != {golden!r}"
    if isinstance(golden, dict):
        if list(ours) != list(golden):
            return f"{path}: keys {list(ours)} != {list(golden)}"
        for k in golden:
            d = first_difference(ours[k], golden[k], f"{path}.{k}")
            if d:
                return d
        return None
    if isinstance(golden, list):
        if len(ours) != len(golden):
            return f"{path}: length {len(ours)} != {len(golden)}: {ours!r} != {golden!r}"
        for i, (a, b) in enumerate(zip(ours, golden)):
            d = first_difference(a, b, f"{path}[{i}]")
            if d:
                return d
        return None
    return None if ours == golden else f"{path}: {ours!r} != {golden!r}"


def test_golden_covers_every_case():
    assert sorted(CASES.CASES) == sorted(k for k in GOLDEN if k != "torch_version")


@pytest.mark.parametrize("name", sorted(CASES.CASES))
def test_case_matches_pytorch(name):
    ours = json.loads(json.dumps(CASES.CASES[name](torch)))   # as the golden went through JSON
    difference = first_difference(ours, GOLDEN[name])
    assert difference is None, difference


def test_first_difference_finds_differences():
    # The comparison itself can fail: a changed index, dtype, container type or key is reported.
    assert first_difference({"a": [1, 2]}, {"a": [1, 3]}) == "$.a[1]: 2 != 3"
    assert first_difference({"list": [1]}, {"tuple": [1]}).startswith("$: keys")
    assert first_difference(1.0, 1) is not None
    assert first_difference([1], [1, 2]) is not None


# ----------------------------------------------------------------------------------------------------------------
# What the golden cannot hold: the module's names, tinyddp's own refusals, process groups, in-process workers.


def test_importable_as_pytorch_names_it():
    import importlib
    module = importlib.import_module("tinyddp.utils.data")
    assert torch.utils.data is module
    from tinyddp.utils.data import DataLoader, DistributedSampler, TensorDataset
    assert (DataLoader, DistributedSampler, TensorDataset) == (module.DataLoader, module.DistributedSampler,
                                                               module.TensorDataset)
    from tinyddp.utils.data._utils.collate import default_collate
    assert default_collate is module.default_collate
    assert importlib.import_module("tinyddp.utils.data.distributed").DistributedSampler is DistributedSampler


def test_weighted_sampler_draws_as_multinomial():
    # 1.13's draws (Debian 1.13.1): without replacement the exponential-noise top-k, with replacement (one sample
    # too) the running-sum search; each path's own check texts
    data = torch.utils.data
    seeded = lambda s: torch.Generator().manual_seed(s)  # noqa: E731
    assert list(data.WeightedRandomSampler([1.0, 2.0, 3.0], 3, replacement=False, generator=seeded(0))) == [2, 1, 0]
    assert list(data.WeightedRandomSampler([1.0, 2.0, 3.0], 1, generator=seeded(1))) == [0]
    assert list(data.WeightedRandomSampler([0.5, 0.1, 0.2, 0.9, 0.3], 4, replacement=False,
                                           generator=seeded(2))) == [3, 1, 0, 2]
    assert list(data.WeightedRandomSampler(torch.tensor([0.5, 0.1, 0.2, 0.9, 0.3]), 7,
                                           generator=seeded(2))) == [4, 0, 3, 3, 4, 3, 0]
    with pytest.raises(RuntimeError, match=r"invalid multinomial distribution \(encountering probability entry < 0\)"):
        list(data.WeightedRandomSampler([1.0, -1.0], 4))
    with pytest.raises(RuntimeError, match="probability tensor contains either `inf`, `nan` or element < 0"):
        list(data.WeightedRandomSampler([1.0, float("nan")], 2, replacement=False))
    with pytest.raises(RuntimeError, match=r"invalid multinomial distribution \(sum of probabilities <= 0\)"):
        list(data.WeightedRandomSampler([0.0, 0.0], 4))
    with pytest.raises(RuntimeError, match=r"cannot sample n_sample > prob_dist.size\(-1\) samples without"):
        list(data.WeightedRandomSampler([1.0, 2.0], 3, replacement=False))


def _explicit_shares(n, replicas, epoch):
    shares = []
    for rank in range(replicas):
        s = torch.utils.data.DistributedSampler(range(n), num_replicas=replicas, rank=rank)
        s.set_epoch(epoch)
        shares.append(list(s))
    return shares


def test_distributed_sampler_takes_rank_and_size_from_the_group():
    import tinyddp.distributed as dist
    import tinyddp.multiprocessing as mp

    def run(rank, got):
        dist.init_process_group("thread")
        s = torch.utils.data.DistributedSampler(range(10))
        s.set_epoch(1)
        got[rank] = (s.num_replicas, s.rank, list(s))
        dist.destroy_process_group()

    got = {}
    mp.spawn(run, args=(got,), nprocs=3)
    golden = [share["indices"] for share in GOLDEN["distributed_sampler"]["n10_r3_shuffle1_drop0_e1"]]
    assert [got[r] for r in range(3)] == [(3, r, golden[r]) for r in range(3)]
    assert _explicit_shares(10, 3, 1) == golden


def test_distributed_sampler_in_a_one_rank_group():
    import tinyddp.distributed as dist
    dist.init_process_group("gloo")
    try:
        s = torch.utils.data.DistributedSampler(range(5), shuffle=False)
        assert (s.num_replicas, s.rank, list(s)) == (1, 0, [0, 1, 2, 3, 4])
        with pytest.raises(ValueError, match=r"Invalid rank 1, rank should be in the interval \[0, 0\]"):
            torch.utils.data.DistributedSampler(range(5), rank=1)
    finally:
        dist.destroy_process_group()


def test_worker_info_is_read_only_and_none_outside_workers():
    data = torch.utils.data
    assert data.get_worker_info() is None
    seen = []

    class Probe:
        def __len__(self):
            return 4

        def __getitem__(self, i):
            info = data.get_worker_info()
            seen.append((i, info.id, info.num_workers))
            with pytest.raises(RuntimeError, match="Cannot assign attributes to WorkerInfo objects"):
                info.id = 5
            return i

    assert [b.tolist() for b in data.DataLoader(Probe(), batch_size=1, num_workers=2)] == [[0], [1], [2], [3]]
    assert seen == [(0, 0, 2), (1, 1, 2), (2, 0, 2), (3, 1, 2)]   # batch k on worker k mod 2, as 1.13
    assert data.get_worker_info() is None


def test_worker_error_names_the_worker_and_keeps_the_traceback():
    class Broken:
        def __len__(self):
            return 4

        def __getitem__(self, i):
            if i == 1:
                raise KeyError("missing")
            return i

    it = iter(torch.utils.data.DataLoader(Broken(), num_workers=2))
    assert next(it).tolist() == [0]
    with pytest.raises(KeyError) as caught:
        next(it)
    text = str(caught.value)
    assert text.startswith("Caught KeyError in DataLoader worker process 1.\nOriginal Traceback") and "raise KeyError(\"missing\")" in text
    assert next(it).tolist() == [2]   # the loader goes on, as 1.13's


def test_worker_init_error_raises_at_the_first_batch():
    def init(worker_id):
        raise ValueError(f"init failed in {worker_id}")

    it = iter(torch.utils.data.DataLoader(range(4), num_workers=2, worker_init_fn=init))
    with pytest.raises(ValueError, match="Caught ValueError in DataLoader worker process 0"):
        next(it)


def test_main_streams_untouched_by_workers():
    # Workers' draws come from their own streams: the main stream is where a single base-seed draw leaves it.
    import random

    class Draws:
        def __len__(self):
            return 6

        def __getitem__(self, i):
            return torch.rand(1).item() + random.random()

    torch.manual_seed(0)
    random.seed(0)
    list(torch.utils.data.DataLoader(Draws(), batch_size=2, num_workers=3))
    after = (torch.randn(2).tolist(), random.random())
    torch.manual_seed(0)
    random.seed(0)
    torch.empty((), dtype=torch.int64).random_()
    assert after == (torch.randn(2).tolist(), random.random())


def test_iterator_cannot_be_pickled():
    import pickle
    with pytest.raises(NotImplementedError, match="_SingleProcessDataLoaderIter cannot be pickled"):
        pickle.dumps(iter(torch.utils.data.DataLoader(range(3))))
