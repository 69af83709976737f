# The autograd nodes tinyddp records against PyTorch 1.13's (tests/golden/gen_grad_fn_names.py ->
# grad_fn_names.json): for each case of tests/golden/grad_fn_cases.py, run through tinyddp exactly as the generator
# ran it on torch, every result's grad_fn name and the names of its next_functions (what scripts print and walk),
# its values, the leaves' gradients and, for the cases of DOUBLE, the second derivatives through the nodes.
import importlib.util
import json
import os

import numpy as np
import pytest

import tinyddp as torch

GOLDEN_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "golden")
GOLDEN = json.load(open(os.path.join(GOLDEN_DIR, "grad_fn_names.json")))
# float32 results of tinyddp's compositions (another summation order, host-evaluated functions) against 1.13's
# fused kernels
RTOL, ATOL = 1e-5, 1e-5


def _cases_module():
    """tests/golden/grad_fn_cases.py, loaded by path (tests/golden is not a package)."""
    spec = importlib.util.spec_from_file_location("grad_fn_cases", os.path.join(GOLDEN_DIR, "grad_fn_cases.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


CASES_MODULE = _cases_module()

# Where tinyddp's graph still differs from 1.13's, and why (each must still differ: strict xfail).
DIFFERENT = {
    "quantile": "1.13 sorts, then lerps between neighbours and squeezes in place (SqueezeBackward3 over "
                "LerpBackward1); tinyddp's quantile is a composition of sort, narrow and its own lerp",
    "bilinear": "1.13's bilinear is _trilinear (ReshapeAliasBackward0 over TrilinearBackward0); tinyddp's is a "
                "product of matmuls",
    "matmul_2d_3d": "1.13 folds a 2-D matrix times a batch through transposes (CloneBackward0 over "
                    "TransposeBackward0); tinyddp records the batched product (BmmBackward0)",
    "matmul_1d_3d": "1.13 folds a vector times a batch into one mv (UnsafeViewBackward0 over MvBackward0); tinyddp "
                    "records the batched product",
    "pad_circular": "1.13's circular padding copies into slices of a new tensor (CopySlices); tinyddp's is one "
                    "index_select, and tinyddp records no in-place ops on graph tensors",
}


def run(case):
    return CASES_MODULE.run(torch, case["code"], double=case["id"] in CASES_MODULE.DOUBLE)


def names(out):
    fn = out.grad_fn
    node = CASES_MODULE.node_name
    return node(fn), ([[node(n), nr] for n, nr in fn.next_functions] if fn is not None else None)


def _params(cases):
    return [pytest.param(c, id=c["id"], marks=pytest.mark.xfail(strict=True, reason=DIFFERENT[c["id"]]))
            if c["id"] in DIFFERENT else pytest.param(c, id=c["id"]) for c in cases]


def close(got, want, what):
    g, w = np.array(got, dtype=np.float64), np.array(want, dtype=np.float64)
    assert g.shape == w.shape, f"{what}: {g.shape} values vs {w.shape}"
    ok = np.isclose(g, w, rtol=RTOL, atol=ATOL, equal_nan=True)
    assert ok.all(), f"{what}: max |diff| = {np.nanmax(np.abs(g - w))}"


@pytest.mark.parametrize("case", _params(GOLDEN["cases"]))
def test_grad_fn_and_next_functions_are_pytorchs(case):
    outs, _, _ = run(case)
    assert len(outs) == len(case["outs"])
    for k, (got, want) in enumerate(zip(outs, case["outs"])):
        if want is None:
            assert not isinstance(got, torch.Tensor), f"result {k}"
            continue
        name, next_functions = names(got)
        assert (name, next_functions) == (want["grad_fn"], want["next"]), f"result {k}"


@pytest.mark.parametrize("case", _params(GOLDEN["cases"]))
def test_type_of_every_node_is_named_as_pytorchs(case):
    # what scripts print: type(y.grad_fn).__name__, for the result's node and each of its next_functions
    outs, _, _ = run(case)
    for k, (got, want) in enumerate(zip(outs, case["outs"])):
        if want is None:
            continue
        fn = got.grad_fn
        type_name = None if fn is None else type(fn).__name__
        next_types = None if fn is None else [[None if n is None else type(n).__name__, nr]
                                              for n, nr in fn.next_functions]
        assert (type_name, next_types) == (want["grad_fn"], want["next"]), f"result {k}"


@pytest.mark.parametrize("case", GOLDEN["cases"], ids=lambda c: c["id"])
def test_values_and_gradients_are_pytorchs(case):
    outs, grads, second = run(case)
    for k, (got, want) in enumerate(zip(outs, case["outs"])):
        if want is not None:
            assert list(got.shape) == want["shape"], f"result {k}"
            close(got.detach().reshape([-1]).tolist(), want["values"], f"result {k}")
    assert sorted(grads) == sorted(case["grads"]), "leaves with gradients"
    for name, want in case["grads"].items():
        close(grads[name].reshape([-1]).tolist(), want, f"{name}.grad")
    # A second derivative that is 0 (piecewise-linear ops) may be a tensor of zeros on one side and absent (the
    # first gradient does not require grad) on the other.
    for name in sorted(set(second) | set(case["second"])):
        got = second[name].reshape([-1]).tolist() if name in second else None
        want = case["second"].get(name)
        what = f"{name}: d/d{name} of sum(g * g)"
        if got is None or want is None:
            assert not any(got or want), f"{what}: nonzero on one side, absent on the other"
        else:
            close(got, want, what)


def test_second_derivatives_are_covered():
    # most cases of DOUBLE have a nonzero second derivative in 1.13 (the piecewise-linear ones have none)
    by_id = {c["id"]: c for c in GOLDEN["cases"]}
    assert len([n for n in CASES_MODULE.DOUBLE if any(v for vs in by_id[n]["second"].values() for v in vs)]) >= 35


def test_a_recorded_node_frees_its_saved_tensors_as_pytorchs():
    # NormBackward1 saves the input and the result in 1.13: a second backward without retain_graph raises its
    # text; PermuteBackward0 and SplitBackward0 save no tensor, so a second backward through them works.
    x = torch.tensor([[3.0, 4.0]], requires_grad=True)
    y = x.norm()
    y.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()
    p = x.permute(1, 0).sum()
    p.backward()
    p.backward()
    a, b = x.split(1, 1)
    (a + b).sum().backward()
    (a * 2).sum().backward()
    close(x.grad.reshape([-1]).tolist(), [0.6 + 1 + 1 + 1 + 2, 0.8 + 1 + 1 + 1], "x.grad")


def test_a_recorded_node_keeps_hooks_retain_grad_and_retain_graph():
    x = torch.tensor([[1.0, -2.0], [0.5, 3.0]], requires_grad=True)
    y = x.std(0)   # StdBackward0
    seen = []
    y.register_hook(lambda g: seen.append(g.tolist()))
    y.retain_grad()
    y.sum().backward(retain_graph=True)
    first = x.grad.clone()
    y.sum().backward()
    assert seen == [[1.0, 1.0], [1.0, 1.0]] and y.grad.tolist() == [2.0, 2.0]
    assert (x.grad - 2 * first).abs().max().item() == 0


def test_a_multi_output_node_takes_gradients_of_some_outputs():
    x = torch.tensor([[1.0, 5.0, 3.0, 2.0]], requires_grad=True)
    values, indices = x.topk(2, 1)   # TopkBackward0
    assert values.grad_fn.name() == "TopkBackward0" and indices.grad_fn is None
    mean, var = torch.var_mean(x, 1)[1], torch.var_mean(x, 1)[0]
    (values[:, 1] * 3).sum().backward()
    assert x.grad.tolist() == [[0.0, 0.0, 3.0, 0.0]]
    x.grad = None
    mean.sum().backward()
    assert x.grad.tolist() == [[0.25, 0.25, 0.25, 0.25]]
    assert var.grad_fn.name() == "VarMeanBackward0"
