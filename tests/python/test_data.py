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
