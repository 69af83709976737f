# The torch functions and Tensor methods of _tensor_math.py and _tensor_shape.py (prod, einsum, scatter, diag,
# meshgrid, trig, median, ...) against real PyTorch 1.13 (tests/golden/gen_tensor_math.py -> tensor_math.json):
# each case's snippet run through tinyddp, its results' shapes, dtypes, values and requires_grad, the gradients
# of its leaves, its warnings, or its error's type and message.
import json
import os

import numpy as np
import pytest

import tinyddp as torch

GOLDEN_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "golden")
GOLDEN = json.load(open(os.path.join(GOLDEN_DIR, "tensor_math.json")))
CASES = [c for c in GOLDEN["cases"] if "error" not in c]
ERRORS = [c for c in GOLDEN["cases"] if "error" in c]
# float32 results of the same formulas evaluated on the host in float64 (trig, logs) or in another order
RTOL, ATOL = 2e-6, 1e-6


import tensor_math_cases as _CASES_MODULE  # noqa: E402  (tests/golden, on sys.path: conftest.py)


def run(code):
    """The case run through tinyddp exactly as the generator ran it on torch: (results, leaf gradients, warnings)."""
    return _CASES_MODULE.run(torch, code)


def same_values(got, want, what):
    g = np.array(got, dtype=np.float64)
    w = np.array(want, dtype=np.float64)
    assert g.shape == w.shape, f"{what}: {g.shape} values vs {w.shape}"
    ok = np.isclose(g, w, rtol=RTOL, atol=ATOL, equal_nan=True)
    assert ok.all(), f"{what}: max |diff| = {np.nanmax(np.abs(g - w))}; got {got} want {want}"


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["id"])
def test_values_gradients_and_warnings_match_pytorch(case):
    outs, grads, caught = run(case["code"])
    assert len(outs) == len(case["outs"]), "number of results"
    for k, (got, want) in enumerate(zip(outs, case["outs"])):
        if "py" in want:
            got = list(got) if isinstance(got, tuple) else got
            assert not isinstance(got, torch.Tensor) and got == want["py"], f"result {k}: {got!r} vs {want['py']!r}"
            continue
        assert isinstance(got, torch.Tensor), f"result {k}: {type(got).__name__}, not a tensor"
        assert list(got.shape) == want["shape"], f"result {k}: shape {list(got.shape)} vs {want['shape']}"
        assert str(got.dtype) == want["dtype"], f"result {k}: dtype {got.dtype} vs {want['dtype']}"
        assert got.requires_grad == want["requires_grad"], f"result {k}: requires_grad"
        same_values(got.detach().reshape([-1]).tolist(), want["values"], f"result {k}")
    assert sorted(grads) == sorted(case["grads"]), "leaves with gradients"
    for name, want in case["grads"].items():
        assert list(grads[name].shape) == want["shape"]
        same_values(grads[name].reshape([-1]).tolist(), want["values"], f"{name}.grad")
    assert caught == case["warnings"]


@pytest.mark.parametrize("case", ERRORS, ids=lambda c: c["id"])
def test_errors_match_pytorch(case):
    with pytest.raises(Exception) as info:
        run(case["code"])
    assert type(info.value).__name__ == case["error"]["type"]
    assert str(info.value) == case["error"]["message"]


def test_addcmul_addcdiv_and_lerp_are_bitwise_the_kernels_order():
    # the Adam-like case's float32 results equal 1.13's exactly (the same float ops in the same order)
    case = next(c for c in CASES if c["id"] == "adam_step")
    outs, _, _ = run(case["code"])
    for got, want in zip(outs, case["outs"]):
        assert got.tolist() == want["values"]


RANDOM = ("multinomial", "multinomial_generator", "exponential_", "cauchy_geometric_", "log_normal_", "normal",
          "bernoulli_p", "bernoulli_tensor")


@pytest.mark.parametrize("case", [c for c in CASES if c["id"] in RANDOM], ids=lambda c: c["id"])
def test_random_draws_are_bitwise_pytorchs_stream(case):
    # the same seed gives 1.13's samples exactly, and the stream after them is where 1.13's is (the trailing draw)
    outs, _, _ = run(case["code"])
    for got, want in zip(outs, case["outs"]):
        assert got.reshape([-1]).tolist() == want["values"]


def test_inverse_hyperbolic_functions_are_bitwise_the_c_librarys():
    # 1.13 computes asinh/acosh/atanh with the C library's scalar functions, which tinyddp calls too
    case = next(c for c in CASES if c["id"] == "inverse_hyperbolic")
    outs, _, _ = run(case["code"])
    for got, want in zip(outs, case["outs"]):
        assert got.reshape([-1]).tolist() == want["values"]


# The cases whose results tinyddp builds with the op 1.13 ends with (the others compose engine ops: docs/python.md)
SAME_GRAD_FN = ("reshape", "squeeze_stack", "basic_index_views", "stacks_2d", "sum_to_size", "tensordot", "diff", "cosine_similarity")


@pytest.mark.parametrize("case", [c for c in CASES if c["id"] in SAME_GRAD_FN], ids=lambda c: c["id"])
def test_grad_fn_names_where_the_last_op_is_pytorchs(case):
    outs, _, _ = run(case["code"])
    for got, want in zip(outs, case["outs"]):
        if isinstance(got, torch.Tensor) and want.get("grad_fn"):
            assert got.grad_fn.name() == want["grad_fn"]
