# Autograd from Python: backward, autograd.grad (to second order), hooks, grad mode and anomaly mode, against
# closed-form derivatives; error texts are PyTorch's (the engine's, unchanged by the binding). Activation
# checkpointing and saved-tensor hooks against PyTorch 1.13's values, counts and texts in
# tests/golden/checkpoint.json (tests/golden/gen_checkpoint.py).
import json
import os
import re
import warnings

import numpy as np
import pytest

import tinyddp as torch
import tinyddp.nn as nn
import tinyddp.nn.functional as F
from tinyddp.autograd.graph import saved_tensors_hooks
from tinyddp.utils.checkpoint import checkpoint

with open(os.path.join(os.path.dirname(__file__), "..", "golden", "checkpoint.json")) as f:
    GOLDEN = json.load(f)


def test_backward_matches_closed_form():
    x = torch.tensor([[0.5, -1.0], [2.0, 0.25]], dtype=torch.float64, requires_grad=True)
    w = torch.tensor([[1.5], [-0.5]], dtype=torch.float64, requires_grad=True)
    y = ((x @ w).tanh() ** 2).sum()
    y.backward()
    x_np, w_np = np.array(x.tolist()), np.array(w.tolist())
    h = np.tanh(x_np @ w_np)
    dh = 2 * h * (1 - h ** 2)                        # d/dz tanh(z)^2
    np.testing.assert_allclose(np.array(w.grad.tolist()), x_np.T @ dh, rtol=1e-12)
    np.testing.assert_allclose(np.array(x.grad.tolist()), dh @ w_np.T, rtol=1e-12)
    assert x.is_leaf and not y.is_leaf and y.grad_fn.name() == "SumBackward0" and x.grad_fn is None


def test_gradient_argument_retain_graph_and_accumulation():
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * x
    y.backward(torch.tensor([1.0, 0.5, 0.0]), retain_graph=True)
    assert x.grad.tolist() == [2.0, 2.0, 0.0]
    y.backward(torch.ones(3))
    assert x.grad.tolist() == [4.0, 6.0, 6.0]        # accumulated
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        (x * x).backward()
    with pytest.raises(RuntimeError, match="does not require grad and does not have a grad_fn"):
        torch.ones(2).sum().backward()


def test_backward_inputs_restricts_accumulation():
    a = torch.tensor([1.0], requires_grad=True)
    b = torch.tensor([2.0], requires_grad=True)
    (a * b).sum().backward(inputs=[a])
    assert a.grad.tolist() == [2.0] and b.grad is None


def test_autograd_grad_first_and_second_order():
    x = torch.tensor([1.5, -2.0], dtype=torch.float64, requires_grad=True)
    y = (x ** 3).sum()
    (g,) = torch.autograd.grad(y, x, create_graph=True)
    np.testing.assert_allclose(g.tolist(), [3 * 1.5 ** 2, 3 * 4.0])
    (h,) = torch.autograd.grad(g.sum(), [x])
    np.testing.assert_allclose(h.tolist(), [6 * 1.5, 6 * -2.0])
    assert x.grad is None                                  # grad() does not accumulate
    unused = torch.tensor([1.0], dtype=torch.float64, requires_grad=True)
    z = (x * 2).sum()
    assert torch.autograd.grad(z, [x, unused], allow_unused=True)[1] is None
    with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
        torch.autograd.grad((x * 2).sum(), [x, unused])
    (gw,) = torch.autograd.grad(x * 2, x, grad_outputs=torch.tensor([1.0, 3.0], dtype=torch.float64))
    assert gw.tolist() == [2.0, 6.0]


def test_autograd_backward_several_roots():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    torch.autograd.backward([(x * 3).sum(), (x * x).sum()])
    assert x.grad.tolist() == [5.0, 7.0]


def test_hooks_see_and_replace_gradients():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    seen = []
    x.register_hook(lambda g: seen.append(g.tolist()))
    y = x * 3
    y.register_hook(lambda g: g * 10)                      # replaces the gradient flowing into y
    y.sum().backward()
    assert seen == [[30.0, 30.0]] and x.grad.tolist() == [30.0, 30.0]
    handle = x.register_hook(lambda g: g * 0)
    handle.remove()
    x.grad = None
    (x * 1).sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]


def test_hook_exception_reaches_the_caller():
    x = torch.tensor([1.0], requires_grad=True)

    def bad(g):
        raise KeyError("from the hook")
    x.register_hook(bad)
    with pytest.raises(KeyError, match="from the hook"):
        (x * 2).sum().backward()


def test_retain_grad_detach_and_requires_grad():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.retain_grad()
    (y * y).sum().backward()
    assert y.grad.tolist() == [4.0, 8.0]
    d = y.detach()
    assert not d.requires_grad and d.grad_fn is None
    with pytest.raises(RuntimeError, match="you can only change requires_grad flags of leaf variables"):
        y.requires_grad = False
    leaf = torch.ones(2)
    assert leaf.requires_grad_() is leaf and leaf.requires_grad
    leaf.requires_grad = False
    assert not leaf.requires_grad
    assert not leaf.requires_grad_(requires_grad=False).requires_grad
    leaf.grad = torch.ones(2)
    assert leaf.grad.tolist() == [1.0, 1.0]


def test_grad_mode_context_managers_and_decorator():
    x = torch.ones(2, requires_grad=True)
    with torch.no_grad():
        assert not torch.is_grad_enabled()
        y = x * 2
        with torch.enable_grad():
            z = x * 2
    assert torch.is_grad_enabled()
    assert not y.requires_grad and z.requires_grad

    @torch.no_grad()
    def f():
        return x * 2
    assert not f().requires_grad
    torch.set_grad_enabled(False)
    assert not torch.is_grad_enabled()
    torch.set_grad_enabled(True)


def test_a_node_is_an_instance_of_a_class_named_after_it_as_in_pytorch():
    # 1.13: type(y.grad_fn) prints <class 'MulBackward0'>, one class per node kind, and the same Python object
    # for a node while the script holds it
    x = torch.ones(2, requires_grad=True)
    y = x * 3
    assert repr(type(y.grad_fn)) == "<class 'MulBackward0'>"
    assert type(y.grad_fn) is type((x * 5).grad_fn)
    assert type(y.grad_fn) is not type(y.sum().grad_fn)
    assert y.grad_fn is y.grad_fn
    leaf = y.grad_fn.next_functions[0][0]
    assert repr(type(leaf)) == "<class 'AccumulateGrad'>" and leaf is y.grad_fn.next_functions[0][0]
    assert repr(y.grad_fn).startswith("<MulBackward0 object at 0x")

    class Double(torch.autograd.Function):
        @staticmethod
        def forward(ctx, i):
            return i * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    w = Double.apply(x)
    assert repr(type(w.grad_fn)) == "<class 'torch.autograd.function.DoubleBackward'>"
    assert type(w.grad_fn).__name__ == "DoubleBackward"
    w.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_node_metadata_and_an_accumulate_grads_variable_are_pytorchs():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = (x * 3).sum()
    y.grad_fn.metadata["tag"] = 1
    assert y.grad_fn.metadata == {"tag": 1}   # kept on the node, past the node's Python object
    assert (x * 3).grad_fn.metadata == {}
    acc = y.grad_fn.next_functions[0][0].next_functions[0][0]
    assert acc.variable is x and acc.name() == "torch::autograd::AccumulateGrad"
    assert not hasattr(y.grad_fn, "variable")
    with pytest.raises(AttributeError, match="'SumBackward0' object has no attribute 'variable'"):
        y.grad_fn.variable
    assert not torch.is_anomaly_enabled()
    with torch.autograd.set_detect_anomaly(True):
        assert torch.is_anomaly_enabled()


def test_a_grad_made_under_create_graph_is_a_copy_as_in_pytorch():
    # 1.13 writes a first differentiable .grad into a new tensor with copy_: CopyBackwards
    x = torch.tensor(2.0, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (x ** 3).backward(create_graph=True)
    assert x.grad.grad_fn.name() == "CopyBackwards" and x.grad.item() == 12.0   # 3 x^2
    g = x.grad
    x.grad = None
    g.backward()
    assert x.grad.item() == 12.0   # 6 x


def test_a_custom_functions_gradient_is_checked_against_its_input_as_in_pytorch():
    def function(make_grad):
        class Fn(torch.autograd.Function):
            @staticmethod
            def forward(ctx, a, scale):
                return a * scale

            @staticmethod
            def backward(ctx, g):
                return make_grad(g), None
        return Fn

    a = torch.ones(2, requires_grad=True)
    function(lambda g: torch.ones(3, 2)).apply(a, 2.0).sum().backward()   # broadcastable: summed back to [2]
    assert a.grad.tolist() == [3.0, 3.0]
    a.grad = None
    function(lambda g: torch.ones(2, dtype=torch.float64)).apply(a, 2.0).sum().backward()
    assert a.grad.dtype == torch.float32
    for bad, got in ((lambda g: torch.ones(3), "[3]"), (lambda g: g.sum(), "[]"), (lambda g: torch.ones(1), "[1]")):
        with pytest.raises(RuntimeError, match=r"^Function FnBackward returned an invalid gradient at index 0 - got "
                                               + re.escape(got) + r" but expected shape compatible with \[2\]$"):
            function(bad).apply(a, 2.0).sum().backward()


def test_once_differentiable_refuses_a_second_derivative_as_pytorch():
    from tinyddp.autograd.function import once_differentiable

    class Cube(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        @once_differentiable
        def backward(ctx, grad):
            x, = ctx.saved_tensors
            assert not torch.is_grad_enabled()
            return grad * 3 * x ** 2

    z = torch.tensor([1.0, 2.0], requires_grad=True)
    g, = torch.autograd.grad(Cube.apply(z).sum(), z, create_graph=True)   # the incoming gradient needs no grad
    assert g.tolist() == [3.0, 12.0] and not g.requires_grad
    g, = torch.autograd.grad(Cube.apply(z), z, grad_outputs=torch.ones(2, requires_grad=True), create_graph=True)
    assert g.tolist() == [3.0, 12.0] and g.requires_grad and type(g.grad_fn).__name__ == "Error"
    with pytest.raises(RuntimeError, match="^trying to differentiate twice a function that was marked with "
                                           "@once_differentiable$"):
        g.sum().backward()
    with pytest.warns(DeprecationWarning, match="should not be instantiated"):
        instance = Cube()
    with pytest.raises(RuntimeError, match="^Legacy autograd function with non-static forward method"):
        instance(z)


def test_node_prehook_batched_grads_and_empty_inputs_as_pytorch():
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = torch.tensor([3.0, 4.0], requires_grad=True)
    z = a * b
    seen = []
    handle = z.grad_fn.register_prehook(lambda grads: (seen.append([g.tolist() for g in grads]), (grads[0] * 2,))[1])
    z.sum().backward()
    assert seen == [[[1.0, 1.0]]] and a.grad.tolist() == [6.0, 8.0]   # 2 * b
    handle.remove()
    with pytest.raises(RuntimeError, match=r"^'inputs' argument to backward\(\) cannot be empty\.$"):
        (a * b).sum().backward(inputs=[])
    with pytest.raises(RuntimeError, match=r"^'inputs' argument to backward\(\) cannot be empty\.$"):
        torch.autograd.backward([(a * b).sum()], inputs=[])
    # rows of the Jacobian of y = [a0 b0, a1 b1, a0 + a1] by a: [[3, 0], [0, 4], [1, 1]]
    y = torch.stack([a[0] * b[0], a[1] * b[1], a.sum()])
    ja, jb = torch.autograd.grad(y, [a, b], grad_outputs=torch.eye(3), is_grads_batched=True)
    assert ja.tolist() == [[3.0, 0.0], [0.0, 4.0], [1.0, 1.0]] and jb.tolist() == [[1.0, 0.0], [0.0, 2.0], [0.0, 0.0]]
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        torch.autograd.grad(y, a, grad_outputs=torch.eye(3), is_grads_batched=True)   # the graph was freed
    with pytest.warns(UserWarning, match="^only_inputs argument is deprecated"):
        torch.autograd.grad((a * 2).sum(), a, only_inputs=False)

def test_detect_anomaly_names_the_node_with_pytorchs_text():
    x = torch.tensor([-1.0], requires_grad=True)
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        with torch.autograd.detect_anomaly():
            y = x.sqrt().sum()   # d sqrt(x) at -1 is nan
            with pytest.raises(RuntimeError, match=r"Function 'SqrtBackward0' returned nan values in its 0th output."):
                y.backward()
    assert not torch.autograd.is_anomaly_enabled()
    torch.autograd.set_detect_anomaly(True)
    assert torch.autograd.is_anomaly_enabled()
    torch.autograd.set_detect_anomaly(False)


# ---- activation checkpointing (torch.utils.checkpoint) ----

def flat(t):
    return None if t is None else t.detach().reshape(-1).tolist()


def run_checkpoint_case(case, mode):
    """gen_checkpoint.py's run_case: out = lin2(relu(lin1(x))), lin2 (second_linear) or relu(lin1(.)) on an x that
    needs no grad (frozen_input) checkpointed, loss = mean(out^2)."""
    model = GOLDEN["model"]
    x = torch.tensor(model["x"], requires_grad=(case == "second_linear"))
    params = {n: torch.tensor(model[k], requires_grad=True)
              for n, k in zip(["lin1.weight", "lin1.bias", "lin2.weight", "lin2.bias"], ["w1", "b1", "w2", "b2"])}

    def lin1(t):
        return torch.relu(F.linear(t, params["lin1.weight"], params["lin1.bias"]))

    def lin2(t):
        return F.linear(t, params["lin2.weight"], params["lin2.bias"])

    def segment(fn, t):
        return fn(t) if mode == "none" else checkpoint(fn, t, use_reentrant=(mode == "reentrant"))

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = segment(lin2, lin1(x)) if case == "second_linear" else lin2(segment(lin1, x))
    node = out.grad_fn if case == "second_linear" else out.grad_fn.next_functions[1][0]
    loss = (out ** 2).mean()
    loss.backward()
    return {"out": flat(out), "loss": loss.item(), "grad_fn": node.name() if node is not None else None,
            "warnings": [(w.category, str(w.message)) for w in caught],
            "grads": {n: flat(p.grad) for n, p in params.items()}, "x_grad": flat(x.grad)}


def assert_close(got, want, rel):
    if want is None or got is None:
        assert got is want
    else:
        assert got == pytest.approx(want, rel=rel, abs=1e-7)


@pytest.mark.parametrize("case", ["second_linear", "frozen_input"])
@pytest.mark.parametrize("mode", ["reentrant", "non_reentrant"])
def test_checkpoint_gives_the_gradients_of_the_plain_forward_and_pytorchs(case, mode):
    got, plain = run_checkpoint_case(case, mode), run_checkpoint_case(case, "none")
    want = GOLDEN["cases"][f"{case}/{mode}"]
    assert got["grad_fn"] == want["grad_fn"]
    assert [m for _, m in got["warnings"]] == want["warnings"]
    assert_close(got["out"], want["out"], 1e-5)
    assert got["loss"] == pytest.approx(want["loss"], rel=1e-5)
    assert_close(got["x_grad"], want["x_grad"], 1e-5)
    for name in want["grads"]:
        assert_close(got["grads"][name], want["grads"][name], 1e-5)
        if want["grads"][name] is not None:   # the recomputation gives what the plain forward gives
            assert got["grads"][name] == pytest.approx(plain["grads"][name], rel=1e-6, abs=1e-7)


def test_checkpoint_warns_as_userwarning_when_no_input_requires_grad():
    lin = nn.Linear(3, 2)
    frozen = torch.randn(4, 3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = checkpoint(lin, frozen)
        checkpoint(lin, frozen, use_reentrant=False)   # the non-reentrant form does not warn
    assert [(w.category, str(w.message)) for w in caught] == \
        [(UserWarning, GOLDEN["cases"]["frozen_input/reentrant"]["warnings"][0])]
    assert out.grad_fn is None and not out.requires_grad   # no graph at all, as PyTorch's
    with warnings.catch_warnings():
        warnings.simplefilter("error")                      # -W error turns it into an exception, as in PyTorch
        with pytest.raises(UserWarning, match="None of the inputs have requires_grad=True"):
            checkpoint(lin, frozen)


def test_checkpoint_of_a_module_with_tuple_outputs_and_non_tensor_arguments():
    lin = nn.Linear(3, 2)
    x = torch.randn(4, 3, requires_grad=True)

    def fn(t, scale, extra):
        y = lin(t) * scale
        return y, y.exp(), extra

    plain_y, plain_e, _ = fn(x, 3.0, "kept")
    (plain_y.sum() + plain_e.sum()).backward()
    want = {"x": flat(x.grad), "w": flat(lin.weight.grad), "b": flat(lin.bias.grad)}
    for reentrant in (True, False):
        x.grad = None
        lin.zero_grad()
        y, e, extra = checkpoint(fn, x, 3.0, "kept", use_reentrant=reentrant)
        assert extra == "kept" and y.tolist() == plain_y.tolist()
        (y.sum() + e.sum()).backward()
        got = {"x": flat(x.grad), "w": flat(lin.weight.grad), "b": flat(lin.bias.grad)}
        for k in want:
            assert got[k] == pytest.approx(want[k], rel=1e-6), (reentrant, k)
    with pytest.raises(ValueError, match="Unexpected keyword arguments: foo"):
        checkpoint(fn, x, 3.0, "kept", foo=1)


def test_checkpoint_errors_and_recomputations_as_pytorch():
    want = GOLDEN["errors"]
    x = torch.tensor(GOLDEN["model"]["x"], requires_grad=True)
    w = torch.tensor(GOLDEN["model"]["w1"], requires_grad=True)

    def f(t):
        return torch.relu(t @ w.t())

    with pytest.raises(RuntimeError) as e:
        torch.autograd.grad(checkpoint(f, x).sum(), x)
    assert str(e.value) == want["reentrant_grad"]
    with pytest.raises(RuntimeError) as e:
        checkpoint(f, x).sum().backward(inputs=[x])
    assert str(e.value) == want["reentrant_backward_inputs"]
    gx, gw = torch.autograd.grad(checkpoint(f, x, use_reentrant=False).sum(), [x, w])
    assert flat(gx) == pytest.approx(want["non_reentrant_grad"]["x"], rel=1e-5)
    assert flat(gw) == pytest.approx(want["non_reentrant_grad"]["w"], rel=1e-5)
    for mode in ("reentrant", "non_reentrant"):   # calls of the function for a forward and two backwards
        count = [0]

        def g(t):
            count[0] += 1
            return (t * t).sum()
        y = checkpoint(g, x, use_reentrant=(mode == "reentrant"))
        y.backward(retain_graph=True)
        y.backward()
        assert count[0] == want["function_calls_two_backwards_" + mode], mode
    for mode in ("reentrant", "non_reentrant"):   # packs of an outer saved_tensors_hooks around a checkpoint
        packs = [0]
        with saved_tensors_hooks(lambda t: packs.__setitem__(0, packs[0] + 1) or t, lambda t: t):
            checkpoint(f, x, use_reentrant=(mode == "reentrant"))
        assert packs[0] == want["outer_hook_packs"][mode], mode


# ---- saved-tensor hooks (torch.autograd.graph.saved_tensors_hooks) ----

def test_saved_tensors_hooks_pack_and_unpack_as_pytorch():
    want = GOLDEN["saved_tensor_hooks"]
    log = []

    def pack(t):
        log.append(["pack", t.tolist(), t.requires_grad, t.grad_fn.name() if t.grad_fn else None,
                    torch.is_grad_enabled()])
        return {"boxed": t}   # any Python object may stand for the tensor

    def unpack(packed):
        log.append(["unpack", packed["boxed"].tolist()])
        return packed["boxed"]

    x = torch.tensor(want["chain"]["x"], requires_grad=True)
    w = torch.tensor(want["chain"]["w"], requires_grad=True)
    with saved_tensors_hooks(pack, unpack):   # l = sum(exp(x * w)^2): x, w, exp's output twice (pow's input)
        l = (x * w).exp().pow(2).sum()
    l.backward()
    assert len(log) == len(want["chain"]["log"])
    for got_entry, want_entry in zip(log, want["chain"]["log"]):
        assert got_entry[0] == want_entry[0] and got_entry[2:] == want_entry[2:]
        assert got_entry[1] == pytest.approx(want_entry[1], rel=1e-6)
    assert x.grad.tolist() == pytest.approx(want["chain"]["x_grad"], rel=1e-5)
    assert w.grad.tolist() == pytest.approx(want["chain"]["w_grad"], rel=1e-5)

    count = [0]   # nothing is packed where no graph is recorded
    with saved_tensors_hooks(lambda t: count.__setitem__(0, count[0] + 1) or t, lambda t: t):
        with torch.no_grad():
            x.pow(2)
        torch.tensor([1.0]).pow(2)
    assert count[0] == want["packs_without_graph"]
    order = []    # only the innermost pair applies
    with saved_tensors_hooks(lambda t: order.append("outer") or t, lambda t: t):
        with saved_tensors_hooks(lambda t: order.append("inner") or t, lambda t: t):
            x.pow(2)
        x.pow(2)
    assert order == want["nesting"]
    order = []    # retain_graph: one unpack per backward
    with saved_tensors_hooks(lambda t: order.append("pack") or t, lambda t: order.append("unpack") or t):
        y = x.pow(2).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert order == want["retain_graph"]
    v = torch.tensor([1.0, 2.0], requires_grad=True)   # the unpacked value is what the rule uses
    with saved_tensors_hooks(lambda t: t * 2, lambda t: t):
        y = v.pow(2)
    y.sum().backward()
    assert v.grad.tolist() == want["doubled_saved_grad"]
    with saved_tensors_hooks(lambda t: t, lambda t: t):
        y = v.exp().sum()
    y.backward()
    with pytest.raises(RuntimeError) as e:
        y.backward()
    assert str(e.value) == want["backward_twice"]

    def bad(t):
        t += 1.0   # in place (the subset has += rather than add_)
        return t
    y = v * 2
    with pytest.raises(RuntimeError) as e:
        with saved_tensors_hooks(bad, lambda t: t):
            y * y
    assert str(e.value) == want["pack_inplace"]


def test_saved_tensors_hooks_errors_from_python_hooks():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    with saved_tensors_hooks(lambda t: t, lambda packed: 3):
        y = (x * x).sum()
    with pytest.raises(TypeError, match="Output of saved tensor unpack_hook expected to be a Tensor but got result "
                                        "of type int"):
        y.backward()

    def failing_pack(t):
        raise KeyError("from the pack hook")
    with pytest.raises(KeyError, match="from the pack hook"):   # the hook's own exception reaches the caller
        with saved_tensors_hooks(failing_pack, lambda t: t):
            x * x
    (x * x).sum().backward()   # the scope was closed by the failing `with`: no hooks now
