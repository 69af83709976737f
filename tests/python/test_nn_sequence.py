# tinyddp.nn's sequence models against real PyTorch 1.13 (tests/golden/gen_nn_sequence.py -> nn_sequence.json, the
# cases of tests/golden/nn_sequence_cases.py): RNN, LSTM, GRU, the cells, MultiheadAttention and the Transformer
# stacks. Parameters right after construction under manual_seed are PyTorch's bit for bit; outputs and gradients
# agree to float rounding (composed ops against PyTorch's fused kernels); reprs, state_dict keys, parameter names,
# attributes, error texts and warnings exactly.
import importlib.util
import json
import os
import warnings

import numpy as np
import pytest

import tinyddp as torch
import tinyddp.nn as nn

GOLDEN_DIR = os.path.join(os.path.dirname(__file__), "..", "golden")
GOLDEN = json.load(open(os.path.join(GOLDEN_DIR, "nn_sequence.json")))
# float32 against float32: the same formulas in another order, through up to a few dozen dependent steps.
RTOL, ATOL = 1e-4, 2e-5


def _load_cases():
    spec = importlib.util.spec_from_file_location("nn_sequence_cases", os.path.join(GOLDEN_DIR,
                                                                                    "nn_sequence_cases.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


cases = _load_cases()
CASES = {c["id"]: c for c in cases.CASES}


def t(j):
    return torch.tensor(j["values"]).reshape(j["shape"])


def close(got, want, what, exact=False):
    if want is None:
        assert got is None, f"{what}: expected None"
        return
    assert got is not None, f"{what}: got None"
    assert list(got.shape) == want["shape"], f"{what}: shape {list(got.shape)} vs {want['shape']}"
    g = np.array(got.detach().reshape(-1).tolist(), dtype=np.float64)
    w = np.array(want["values"], dtype=np.float64)
    if exact:
        assert np.array_equal(g, w), f"{what}: max |diff| = {np.max(np.abs(g - w))}"
    else:
        assert np.allclose(g, w, rtol=RTOL, atol=ATOL, equal_nan=True), f"{what}: max |diff| = {np.max(np.abs(g - w))}"


@pytest.mark.parametrize("golden", GOLDEN["cases"], ids=lambda c: c["id"])
def test_sequence_module_matches_pytorch(golden):
    case = CASES[golden["id"]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = cases.run_case(torch, case, [t(x) for x in golden["inputs"]])
    assert r["repr"] == golden["repr"]
    assert r["state_dict_keys"] == golden["state_dict_keys"]
    assert r["param_names"] == golden["param_names"]
    assert len(r["initial"]) == len(golden["initial"])
    for name, got, want in zip(r["param_names"], r["initial"], golden["initial"]):
        close(got, want, f"initial {name}", exact=True)   # the seed's draws, in 1.13's order
    assert len(r["outs"]) == len(golden["outs"])
    for k, (got, want) in enumerate(zip(r["outs"], golden["outs"])):
        close(got, want, f"output {k}")
    if "x_grads" in golden:
        for k, (got, want) in enumerate(zip(r["x_grads"], golden["x_grads"])):
            close(got, want, f"input {k} grad")
        for name, got, want in zip(r["param_names"], r["param_grads"], golden["param_grads"]):
            close(got, want, f"{name}.grad")
    else:
        assert all(o.grad_fn is None for o in r["outs"])


ENV = {"torch": torch, "nn": nn}


@pytest.mark.parametrize("expr", list(GOLDEN["errors"]))
def test_bad_arguments_raise_pytorchs_error(expr):
    want = GOLDEN["errors"][expr]
    with pytest.raises(Exception) as info:
        eval(expr, ENV)
    assert (type(info.value).__name__, str(info.value)) == (want["type"], want["message"])


@pytest.mark.parametrize("expr", list(GOLDEN["warnings"]))
def test_construction_warns_as_pytorch(expr):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        eval(expr, ENV)
    assert [[w.category.__name__, str(w.message)] for w in caught] == GOLDEN["warnings"][expr]


@pytest.mark.parametrize("expr", list(GOLDEN["attributes"]))
def test_attributes_match_pytorch(expr):
    torch.manual_seed(0)
    assert repr(eval(expr, ENV)) == GOLDEN["attributes"][expr]


def test_encoder_stack_layers_start_as_copies_and_train_apart():
    torch.manual_seed(0)
    enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16), 2)
    a, b = enc.layers[0].linear1.weight, enc.layers[1].linear1.weight
    assert a is not b and torch.equal(a, b)
    enc(torch.randn(3, 2, 8)).sum().backward()
    with torch.no_grad():
        a.add_(1.0)
    assert not torch.equal(a, b)
