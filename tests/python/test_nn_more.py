"""More of tinyddp.nn against PyTorch 1.13 (tests/golden/nn_more.json, from gen_nn_more.py): Conv1d and grouped or
padded convolutions, 1-D and adaptive pooling, GroupNorm, InstanceNorm, channel dropout, the activations, padding
layers and modes, Upsample/interpolate, PixelShuffle, Fold/Unfold, distances and their losses, Bilinear, the common
losses' reductions and options, ParameterDict, and the errors of all these.

The cases are tests/golden/nn_more_cases.py's, run here on tinyddp. Reprs, state_dict keys, shapes, parameters at
init (drawn from the seeded stream) and dropout's outputs (its masks from the stream) must be equal exactly; the
other outputs and gradients within float rounding, as the sums run in another order than 1.13's kernels.
"""
import importlib.util
import json
import math
import os

import pytest

import tinyddp as torch

GOLDEN_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "golden")
with open(os.path.join(GOLDEN_DIR, "nn_more.json")) as f:
    GOLDEN = json.load(f)

_spec = importlib.util.spec_from_file_location("nn_more_cases", os.path.join(GOLDEN_DIR, "nn_more_cases.py"))
_cases = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_cases)
CASES = _cases.cases(torch)
ERRORS = _cases.errors(torch)


def assert_close(ours, want, where, rtol=1e-5, atol=1e-6):
    assert (ours is None) == (want is None), f"{where}: {ours!r} != {want!r}"
    if want is None:
        return
    assert len(ours) == len(want), f"{where}: {len(ours)} values, want {len(want)}"
    bad = [(i, o, w) for i, (o, w) in enumerate(zip(ours, want))
           if not (o == w or abs(o - w) <= atol + rtol * abs(w) or (math.isnan(o) and math.isnan(w)))]
    worst = max((abs(o - w) for _, o, w in bad), default=0.0)
    assert not bad, f"{where}: {len(bad)} of {len(want)} differ (max diff {worst}), first {bad[:3]}"


@pytest.mark.parametrize("name", sorted(GOLDEN["cases"]))
def test_case_matches_pytorch(name):
    ours, want = CASES[name](), GOLDEN["cases"][name]
    assert ours["repr"] == want["repr"]
    assert ours["keys"] == want["keys"]
    assert ours["shape"] == want["shape"]
    assert list(ours["params"]) == list(want["params"])
    for k in want["params"]:   # the init: the seeded stream's values, exactly (max_norm rescales them: rounding)
        if "max-norm" in name:
            assert_close(ours["params"][k], want["params"][k], k)
        else:
            assert ours["params"][k] == want["params"][k], k
    exact = name.startswith("dropout")
    assert_close(ours["out"], want["out"], "out", rtol=0 if exact else 1e-5, atol=0 if exact else 1e-6)
    if want["buffers"] is not None:
        assert list(ours["buffers"]) == list(want["buffers"])
        for k in want["buffers"]:
            assert_close(ours["buffers"][k], want["buffers"][k], k)
    assert len(ours["grads"]) == len(want["grads"])
    for i, (g, w) in enumerate(zip(ours["grads"], want["grads"])):
        assert_close(g, w, f"grad {i}", rtol=1e-4, atol=1e-5)


def test_every_case_has_a_golden():
    assert sorted(CASES) == sorted(GOLDEN["cases"])
    assert sorted(ERRORS) == sorted(GOLDEN["errors"])


def test_parameter_dict_matches_pytorch():
    assert _cases.parameter_dict(torch) == GOLDEN["parameter_dict"]


@pytest.mark.parametrize("name", sorted(GOLDEN["errors"]))
def test_errors_match_pytorch(name):
    with pytest.raises(Exception) as e:
        ERRORS[name]()
    assert type(e.value).__name__ == GOLDEN["errors"][name]["type"]
    assert str(e.value) == GOLDEN["errors"][name]["message"]


def test_inplace_outside_a_graph_writes_the_input():
    assert _cases.in_place(torch) == GOLDEN["in_place"]


@pytest.mark.parametrize("name", sorted(GOLDEN["inits"]))
def test_init_matches_pytorch(name):
    """The same draws from the seeded stream: dirac_ and sparse_ exactly; trunc_normal_'s erfinv and orthogonal_'s
    QR run in float64 here, so within float32 rounding."""
    ours, want = _cases.inits(torch)[name], GOLDEN["inits"][name]
    assert ours["warnings"] == want["warnings"]
    if name.startswith(("dirac", "sparse", "xavier")):
        assert ours["values"] == want["values"]
    else:
        assert_close(ours["values"], want["values"], name, rtol=1e-6, atol=1e-7)


def test_sync_batchnorm_conversion_matches_pytorch():
    assert _cases.sync_batchnorm(torch) == GOLDEN["sync_batchnorm"]


def test_lazy_linear_becomes_the_linear_pytorch_draws():
    assert _cases.lazy_linear(torch) == GOLDEN["lazy_linear"]
