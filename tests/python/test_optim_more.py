"""tinyddp.optim's RMSprop, Adagrad, Adamax, NAdam, RAdam, Adadelta, Rprop and ASGD against PyTorch 1.13
(tests/golden/optim_more.json, from gen_optim_more.py): per-step parameters, groups' lrs, schedulers, state_dicts
(keys, order, types and values), resuming from state_dicts, the optimizers' reprs, and their argument checks.

The runs go through optim_cases.py's interpreter, as test_optim.py's. float32 runs must be equal bit for bit
(tinyddp/optim/_functional.py rounds each step as 1.13's CPU kernels do); float64 runs within a few ulps, as
addcmul's fused multiply-add is not reproduced in float64.
"""
import importlib.util
import json
import math
import os

import pytest

import tinyddp as torch

GOLDEN_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "golden")
with open(os.path.join(GOLDEN_DIR, "optim_more.json")) as f:
    GOLDEN = json.load(f)


def _load(name):
    """A module of tests/golden, loaded by path (tests/golden is not a package)."""
    spec = importlib.util.spec_from_file_location(name, os.path.join(GOLDEN_DIR, name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


C = _load("optim_cases").cases(torch)
ERRORS = _load("optim_more_cases").errors(torch)


def assert_same(ours, golden, where, rel=0.0):
    """Equal structure, keys in the same order, values of the same type; floats equal, or within `rel`."""
    if isinstance(golden, dict):
        assert isinstance(ours, dict) and list(ours) == list(golden), f"{where}: {ours!r} != {golden!r}"
        for k in golden:
            assert_same(ours[k], golden[k], f"{where}.{k}", rel)
    elif isinstance(golden, list):
        assert isinstance(ours, list) and len(ours) == len(golden), f"{where}: {ours!r} != {golden!r}"
        for i, (o, g) in enumerate(zip(ours, golden)):
            assert_same(o, g, f"{where}[{i}]", rel)
    elif isinstance(golden, float) and rel:
        assert type(ours) is float and math.isclose(ours, golden, rel_tol=rel, abs_tol=1e-300), \
            f"{where}: {ours!r} != {golden!r} (diff {abs(ours - golden)!r})"
    else:
        assert type(ours) is type(golden) and ours == golden, f"{where}: {ours!r} != {golden!r}"


@pytest.mark.parametrize("run", GOLDEN["runs"], ids=[r["name"] for r in GOLDEN["runs"]])
def test_runs_match_pytorch(run):
    records, rep = C.execute(run)
    rel = 1e-14 if run["dtype"] == "float64" else 0.0
    for i, (ours, want) in enumerate(zip(records, run["records"], strict=True)):
        assert_same(ours, want, f"{run['name']} step {i}", rel)
    assert rep == run["repr"]


@pytest.mark.parametrize("golden", GOLDEN["errors"], ids=[e["name"] for e in GOLDEN["errors"]])
def test_errors_match_pytorch(golden):
    with pytest.raises(Exception) as e:
        ERRORS[golden["name"]]()
    assert type(e.value).__name__ == golden["type"]
    assert str(e.value) == golden["message"]


def test_every_error_case_has_a_golden():
    assert sorted(ERRORS) == sorted(e["name"] for e in GOLDEN["errors"])
