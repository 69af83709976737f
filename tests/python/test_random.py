"""tinyddp's random numbers from Python against PyTorch 1.13's for the same seeds (tests/golden/random.json, from
tests/golden/gen_random.py): the factories, the in-place draws, nn.Linear's init, F.dropout's mask and
torch.Generator, each bitwise, big tensors by their bytes' SHA-256."""
import hashlib
import importlib.util
import json
import os

import numpy as np
import pytest

import tinyddp as torch

GOLDEN_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "golden")
GOLDEN = os.path.join(GOLDEN_DIR, "random.json")


def _load_random_cases():
    """tests/golden/random_cases.py (the steps gen_random.py drew with torch), loaded by path."""
    spec = importlib.util.spec_from_file_location("random_cases", os.path.join(GOLDEN_DIR, "random_cases.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


random_cases = _load_random_cases()


def golden_cases():
    with open(GOLDEN) as f:
        return json.load(f)["cases"]


def check(t, want, where):
    assert list(t.shape) == want["shape"], where
    a = t.detach().contiguous().numpy()
    assert str(a.dtype) == want["dtype"], where
    flat = a.reshape(-1)
    if "digest" in want:
        assert flat.size == want["digest"]["numel"], where
        assert hashlib.sha256(flat.astype(flat.dtype.newbyteorder("<")).tobytes()).hexdigest() == \
            want["digest"]["sha256"], where
        return
    expected = np.array(want["values"], dtype=a.dtype)
    bad = np.flatnonzero(flat != expected)
    assert bad.size == 0, f"{where}: {bad.size} differ, first at {bad[0]}: {flat[bad[0]]!r} vs {expected[bad[0]]!r}"


@pytest.mark.parametrize("case", golden_cases(), ids=lambda c: c["name"])
def test_case_matches_pytorch_bitwise(case):
    torch.manual_seed(case["seed"])
    gen = None
    if "generator_seed" in case:
        gen = torch.Generator()
        assert gen.manual_seed(case["generator_seed"]) is gen
        assert gen.initial_seed() == case["generator_seed"]
    with torch.no_grad():
        for s, step in enumerate(case["steps"]):
            outputs = random_cases.run_step(torch, step, gen)
            assert len(outputs) == len(step["outputs"])
            for o, (t, want) in enumerate(zip(outputs, step["outputs"])):
                check(t, want, f"{case['name']} step {s} output {o}")
    if "default_after" in case:
        check(torch.rand(3), case["default_after"], f"{case['name']}: the default generator afterwards")


def test_rng_state_replays_and_seed_functions():
    g = torch.manual_seed(5)
    assert g.initial_seed() == 5 and torch.initial_seed() == 5
    torch.randn(3, dtype=torch.float64)   # odd: the second value of a Box-Muller pair is now cached
    state = torch.get_rng_state()
    first = torch.randn(5, dtype=torch.float64).tolist()
    torch.set_rng_state(state)
    assert torch.randn(5, dtype=torch.float64).tolist() == first
    s = torch.seed()
    assert torch.initial_seed() == s
    with pytest.raises(RuntimeError, match="could not read one"):
        torch.set_rng_state(b"not a state")


def test_randint_forms_and_errors():
    torch.manual_seed(2)
    a = torch.randint(10, (8,))
    torch.manual_seed(2)
    b = torch.randint(0, 10, size=(8,))
    assert a.tolist() == b.tolist() and a.dtype == torch.int64
    assert torch.randint(3, 5, (2, 2), dtype=torch.float32).dtype == torch.float32
    with pytest.raises(RuntimeError, match="random_ expects 'from' to be less than 'to', but got from=3 >= to=3"):
        torch.randint(3, 3, (2,))


def test_each_spawn_rank_has_its_own_default_generator():
    def worker(rank, out):
        torch.manual_seed(rank)
        out[rank] = torch.randn(4).tolist()
    out = {}
    torch.multiprocessing.spawn(worker, args=(out,), nprocs=2)
    for rank in range(2):
        torch.manual_seed(rank)
        assert out[rank] == torch.randn(4).tolist()


def test_generator_device_and_leaf_check():
    assert torch.Generator().device == torch.device("cpu")
    with pytest.raises(RuntimeError, match="no cuda generators"):
        torch.Generator("cuda")
    w = torch.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        w.uniform_(-1, 1)
    with torch.no_grad():
        w.normal_(0, 0.02)
    assert w._version == 1
