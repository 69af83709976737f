# Advanced indexing against real PyTorch 1.13 (tests/golden/gen_advanced_indexing.py -> advanced_indexing.json):
# each case's snippet (getitem and setitem with tensors, lists, NumPy arrays, masks and bools among integers, slices,
# None and Ellipsis; index_put and index_put_) run through tinyddp: its results' shapes, dtypes, values,
# requires_grad and grad_fn names, the gradients of its leaves (second derivatives for the grad2 cases), its warnings,
# or its error's type and message. Then what the goldens cannot show: versions and histories of in-place writes,
# gradcheck of the engine ops, and a user-style training step.
import json
import os

import numpy as np
import pytest

import tinyddp as torch
from numeric_gradcheck import gradcheck_and_gradgradcheck

GOLDEN_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "golden")
GOLDEN = json.load(open(os.path.join(GOLDEN_DIR, "advanced_indexing.json")))
CASES = [c for c in GOLDEN["cases"] if "error" not in c]
ERRORS = [c for c in GOLDEN["cases"] if "error" in c]
# Indexing copies values exactly; gradients sum (accumulate) in 1.13's order; log_softmax differs in the last bits.
RTOL, ATOL = 1e-6, 1e-7


import advanced_indexing_cases as _CASES_MODULE  # noqa: E402  (tests/golden, on sys.path: conftest.py)


def run(code):
    """The case run through tinyddp exactly as the generator ran it on torch: (results, leaf gradients, warnings)."""
    return _CASES_MODULE.run(torch, code)


def same_values(got, want, what):
    g = np.array(got, dtype=np.float64)
    w = np.array(want, dtype=np.float64)
    assert g.shape == w.shape, f"{what}: {g.shape} values vs {w.shape}"
    ok = np.isclose(g, w, rtol=RTOL, atol=ATOL, equal_nan=True)
    assert ok.all(), f"{what}: max |diff| = {np.nanmax(np.abs(g - w))}; got {got} want {want}"


def test_the_goldens_cover_what_they_should():
    # many cases, and every kind of them: errors, gradients, second derivatives, setitem histories, warnings
    assert len(GOLDEN["cases"]) >= 100 and len(ERRORS) >= 30
    assert sum(1 for c in CASES if c["grads"]) >= 40
    assert {"CopySlices", "IndexPutBackward0", "IndexBackward0", "IndexPutImplBackward0"} <= {
        o.get("grad_fn") for c in CASES for o in c["outs"]}
    assert any(c["warnings"] for c in CASES)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["id"])
def test_values_grad_fns_gradients_and_warnings_match_pytorch(case):
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
        # the golden holds type(grad_fn).__name__; 1.13's name() spells C++-only nodes with their namespace
        name = got.grad_fn.name().replace("torch::autograd::", "") if got.grad_fn is not None else None
        assert name == want["grad_fn"], f"result {k}: grad_fn {name} vs {want['grad_fn']}"
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


def test_picked_values_are_bitwise_pytorchs():
    # a gather copies: the picked log-probabilities are 1.13's bits, not merely close
    case = next(c for c in CASES if c["id"] == "pick_by_label")
    outs, _, _ = run(case["code"])
    for got, want in zip(outs, case["outs"]):
        assert got.tolist() == want["values"]


def test_setitem_bumps_the_version_once_and_writes_into_the_same_storage():
    z = torch.zeros(3, 4)
    row = z[1]                           # a view taken before: it sees the writes
    z[[1, 1, 2], [0, 3, 3]] = torch.tensor([1.0, 2.0, 3.0])
    assert z._version == 1 and row.tolist() == [1.0, 0.0, 0.0, 2.0]
    z[0, [1, 2]] = 5.0                   # through a view of z: z's counter, once
    assert z._version == 2 and z[0].tolist() == [0.0, 5.0, 5.0, 0.0]
    t = torch.arange(12.).reshape(3, 4).t()   # non-contiguous: written through its strides
    t[[0, 3], [2, 0]] = -1.0
    assert t.tolist()[0][2] == -1.0 and t.tolist()[3][0] == -1.0 and t.contiguous().sum().item() == 66.0 - 8.0 - 3.0 - 2


def test_setitem_on_a_tensor_saved_for_backward_is_caught_at_backward():
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 1
    w = y * y                            # saves y
    y[[0]] = 5.0
    assert y.grad_fn.name() == "IndexPutBackward0" and y._version == 1
    with pytest.raises(RuntimeError, match="modified by an inplace operation: \\[torch.FloatTensor \\[3\\]\\], which "
                                           "is output 0 of IndexPutBackward0, is at version 1; expected version 0"):
        w.sum().backward()


def test_the_history_before_a_write_flows_through_the_unwritten_elements():
    x = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    y = x * 3
    y[torch.tensor([True, False, True, False])] = 0.0
    y[[3]] = y[[1]] * 10                  # reads y after the first write, writes over element 3
    (g,) = torch.autograd.grad(y.sum(), x)
    assert y.tolist() == [0.0, 6.0, 0.0, 60.0] and g.tolist() == [0.0, 33.0, 0.0, 0.0]
    assert y.grad_fn.next_functions[0][0].name() == "IndexPutBackward0"


def test_a_write_into_a_view_of_another_tensor_is_recorded_on_its_base():
    # PyTorch records such a write on the view's base: CopySlices over IndexPutBackward0
    x = torch.ones(2, 3, requires_grad=True)
    doubled = x * 2
    row = doubled[0]
    row[[0, 1]] = 0.0
    assert doubled.grad_fn.name() == "torch::autograd::CopySlices" and row.grad_fn.name() == "AsStridedBackward0"
    doubled.sum().backward()
    assert x.grad.tolist() == [[0.0, 0.0, 2.0], [2.0, 2.0, 2.0]]
    plain = torch.zeros(2, 3)[0]         # nothing requires grad: written, as in PyTorch
    plain[[2]] = 7.0
    assert plain.tolist() == [0.0, 0.0, 7.0]
    with torch.no_grad():                # nor under no_grad, even into a leaf that requires grad
        x[[0], [1]] = 9.0
    assert x[0].tolist() == [1.0, 9.0, 1.0] and x.grad_fn is None


def test_engine_ops_pass_gradcheck_and_gradgradcheck():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 4, 2))
    v = rng.standard_normal((2, 1))
    i, j = torch.tensor([2, 0, 2]), torch.tensor([[1], [3]])
    m = torch.tensor([True, False, True])
    fns = [
        lambda a: a[i, j] ** 2,                              # broadcast (2, 3), rows repeated
        lambda a: a[i, :, [1, 0, 1]] * a[0, 0, 0],           # apart: P first
        lambda a: a[m, 1:, 0] ** 3,
        lambda a: a[::2, [3, 3, -1]] ** 2,
        lambda a: a.index_put((i, torch.tensor([1])), a[0, 0, :1] ** 2, accumulate=True),
        lambda a: a.index_put((i[:2], torch.tensor([1])), a[0, 0, :1] ** 2) * a,
    ]
    for fn in fns:
        gradcheck_and_gradgradcheck(fn, [x])

    # Positions written once: with a repeated one 1.13 gives every copy of it the gradient though only the last
    # write stays (the goldens check that), which central differences would not confirm.
    def put(a, b):
        out = a * a
        out[[1, 2], :, [0, 1]] = b * b                       # apart: P first, b broadcast to (2, 4)
        out[0, [2, 1]] = b[0] * a[2, 0]                      # through a view: CopySlices
        return out
    gradcheck_and_gradgradcheck(put, [x, v])


def test_a_user_training_step_with_indexing():
    # a classifier trained with the loss picked by label, an embedding table updated by rows: the loss falls, and the
    # gradient is exactly cross_entropy's
    torch.manual_seed(0)
    w = torch.randn(4, 3, requires_grad=True)
    data = torch.randn(8, 4)
    labels = torch.tensor([0, 1, 2, 1, 0, 2, 2, 1])
    opt = torch.optim.SGD([w], lr=0.5)
    losses = []
    for _ in range(5):
        logits = data @ w
        loss = -torch.log_softmax(logits, 1)[range(8), labels].mean()
        opt.zero_grad()
        loss.backward()
        ref_w = w.detach().clone().requires_grad_()
        torch.nn.functional.cross_entropy(data @ ref_w, labels).backward()
        np.testing.assert_allclose(w.grad.numpy(), ref_w.grad.numpy(), rtol=1e-5, atol=1e-6)
        opt.step()
        losses.append(loss.item())
    assert losses == sorted(losses, reverse=True) and losses[-1] < losses[0] - 0.1
    table = torch.zeros(5, 4)
    with torch.no_grad():
        table[labels[:3]] = w.t()
    assert table[1].tolist() == w[:, 1].tolist() and table[3].tolist() == [0.0] * 4
