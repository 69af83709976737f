# Type promotion and integer arithmetic against PyTorch 1.13's (tests/golden/gen_type_promotion.py): for each
# expression over tensors of every dtype, 0-dim tensors and Python numbers, the result's dtype, shape and values,
# or the error PyTorch raises (type and text); and for float ops with a promoted operand, each leaf's gradient
# in its own dtype, under the node PyTorch names.
import json
import math
import os

import pytest

import tinyddp as torch

GOLDEN = json.load(open(os.path.join(os.path.dirname(__file__), "..", "golden", "type_promotion.json")))


def fresh_env():
    env = {"torch": torch}
    exec(GOLDEN["setup"], env)
    return env


def run(code, env):
    if "out =" in code:
        exec(code, env)
        return env["out"]
    return eval(code, env)


def flat(values):
    if isinstance(values, list):
        return [v for item in values for v in flat(item)]
    return [values]


def check_values(got, want, dtype, what):
    got, want = flat(got), flat(want)
    assert len(got) == len(want), what
    for g, w in zip(got, want):
        if dtype in ("int64", "bool"):   # integers and bools exactly (int64 never goes through a double)
            assert g == w and type(g) is type(w), f"{what}: {g!r} != {w!r}"
        elif math.isnan(w):
            assert math.isnan(g), f"{what}: {g!r} is not NaN"
        else:   # float32 pow may differ from PyTorch's in the last bit; everything else is exact
            tol = 2 ** -22 if dtype == "float32" else 2 ** -50
            assert g == w or abs(g - w) <= tol * abs(w), f"{what}: {g!r} != {w!r} (difference {g - w!r})"


def check_record(got, want, what):
    if "python" in want:
        assert type(got).__name__ == want["python"] and got == want["value"], f"{what}: {got!r} != {want}"
        return
    assert isinstance(got, torch.Tensor), f"{what}: {got!r} is not a tensor"
    assert str(got.dtype) == "torch." + want["dtype"], f"{what}: dtype {got.dtype}, PyTorch's {want['dtype']}"
    assert list(got.shape) == want["shape"], f"{what}: shape {list(got.shape)}, PyTorch's {want['shape']}"
    check_values(got.tolist(), want["values"], want["dtype"], what)


@pytest.mark.parametrize("case", GOLDEN["cases"], ids=[c["code"] for c in GOLDEN["cases"]])
def test_result_dtype_values_and_errors_match_pytorch(case):
    env = fresh_env()
    code = case["code"]
    if "error" in case:
        with pytest.raises(Exception) as info:
            run(code, env)
        assert type(info.value).__name__ == case["error"]["type"], f"{code}: {info.value!r}"
        assert str(info.value) == case["error"]["message"], code
        return
    check_record(run(code, env), case["out"], code)


@pytest.mark.parametrize("case", GOLDEN["grads"], ids=[c["code"].split("\n")[-1] for c in GOLDEN["grads"]])
def test_gradients_reach_each_input_in_its_own_dtype(case):
    env = fresh_env()
    exec(case["code"], env)
    y = env["y"]
    assert y.grad_fn.name() == case["grad_fn"]
    check_record(y, case["out"], "y")
    y.sum().backward()
    for name in case["leaves"]:
        check_record(env[name].grad, case["grads"][name], f"{name}.grad")


def test_wrapped_numbers_keep_float_only_results_bitwise():
    # The number is wrapped as a float64 0-dim tensor and rounded to the tensor's dtype, as the old wrapping in
    # the tensor's own dtype did: w * 0.1 is the float32 product with float32(0.1).
    w = torch.tensor([1.0, 3.0, 7.0])
    assert (w * 0.1).tolist() == (w * torch.tensor(0.1)).tolist()
    x = torch.tensor(3.0, requires_grad=True)   # 0-dim: the wrapped number still does not widen it
    y = x * 0.1
    assert y.dtype == torch.float32 and y.grad_fn.name() == "MulBackward0"
    y.backward()
    assert x.grad.dtype == torch.float32 and x.grad.item() == torch.tensor(0.1).item()


def test_next_functions_skip_the_conversion():
    # The node's edges go to the leaves themselves (PyTorch casts the gradient, not the operand, in the graph).
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    w = torch.tensor(0.5, dtype=torch.float64, requires_grad=True)
    names = [fn.name() for fn, _ in (x * w).grad_fn.next_functions]
    assert names == ["torch::autograd::AccumulateGrad", "torch::autograd::AccumulateGrad"]


def test_int64_sum_is_exact_past_two_to_the_53():
    t = torch.tensor([2 ** 53, 1, 1])
    assert t.sum().item() == 2 ** 53 + 2
