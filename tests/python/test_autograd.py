# Autograd from Python: backward, autograd.grad (to second order), hooks, grad mode and anomaly mode, against
# closed-form derivatives; error texts are PyTorch's (the engine's, unchanged by the binding).
import numpy as np
import pytest

import tinyddp as torch


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
