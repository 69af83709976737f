# tinyddp.nn and tinyddp.optim from Python: registration order and names, state dicts, layers, losses and
# functional against closed forms (NumPy), and the optimizers against their documented update rules.
from collections import OrderedDict

import numpy as np
import pytest

import tinyddp as torch
import tinyddp.nn as nn
import tinyddp.nn.functional as F


def arr(t):
    return np.array(t.tolist(), dtype=np.float64)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(1))
        self.trunk = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 8))
        self.register_buffer("steps", torch.zeros(1))
        self.head = nn.Linear(8, 2)
        self.plain = 3                                     # not a parameter, buffer or module

    def forward(self, x, *, double=False):
        out = self.head(self.trunk(x)) * self.scale
        return {"y": out * 2 if double else out, "h": (out,)}


def test_registration_order_and_dotted_names_follow_pytorch():
    net = Net()
    assert [n for n, _ in net.named_parameters()] == [
        "scale", "trunk.0.weight", "trunk.0.bias", "trunk.2.weight", "trunk.2.bias", "head.weight", "head.bias"]
    assert [n for n, _ in net.named_buffers()] == ["steps"]
    assert [type(m).__name__ for m in net.children()] == ["Sequential", "Linear"]
    assert [type(m).__name__ for m in net.modules()] == ["Net", "Sequential", "Linear", "Tanh", "Linear", "Linear"]
    assert len(list(net.parameters())) == 7 and net.plain == 3
    assert list(net.state_dict().keys()) == [
        "scale", "steps", "trunk.0.weight", "trunk.0.bias", "trunk.2.weight", "trunk.2.bias", "head.weight",
        "head.bias"]
    shared = nn.Linear(2, 2)
    twice = nn.Sequential(shared, shared)
    assert [n for n, _ in twice.named_parameters()] == ["0.weight", "0.bias"]   # listed once


def test_call_passes_keywords_and_returns_any_structure():
    net = Net()
    x = torch.randn(3, 4)
    out = net(x, double=True)
    assert set(out) == {"y", "h"} and out["y"].shape == (3, 2)
    np.testing.assert_allclose(arr(out["y"]), 2 * arr(out["h"][0]), rtol=1e-6)


def test_linear_is_x_wt_plus_b_with_pytorchs_graph_and_init_bound():
    torch.manual_seed(0)
    lin = nn.Linear(5, 3, dtype=torch.float64)
    w, b = arr(lin.weight), arr(lin.bias)
    assert lin.weight.shape == (3, 5) and np.all(np.abs(w) <= 1 / np.sqrt(5)) and np.all(np.abs(b) <= 1 / np.sqrt(5))
    x = torch.randn(4, 5, dtype=torch.float64)
    y = lin(x)
    np.testing.assert_allclose(arr(y), arr(x) @ w.T + b, rtol=1e-12)
    assert y.grad_fn.name() == "AddmmBackward0"
    assert repr(lin) == "Linear(in_features=5, out_features=3, bias=True)"
    assert nn.Linear(2, 2, bias=False).bias is None
    assert isinstance(lin.weight, nn.Parameter) and lin.weight.requires_grad
    assert repr(nn.Parameter(torch.tensor([1.0]))) == "Parameter containing:\ntensor([1.], requires_grad=True)"


def test_sequential_indexing_and_repr():
    seq = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    assert isinstance(seq[0], nn.Linear) and isinstance(seq[-1], nn.Linear) and len(seq) == 3
    assert len(seq[1:]) == 2 and [n for n, _ in seq[1:].named_parameters()] == ["2.weight", "2.bias"]
    assert repr(seq) == ("Sequential(\n  (0): Linear(in_features=2, out_features=3, bias=True)\n  (1): ReLU()\n"
                         "  (2): Linear(in_features=3, out_features=1, bias=True)\n)")
    named = nn.Sequential(OrderedDict([("fc", nn.Linear(2, 2)), ("act", nn.Tanh())]))
    assert [n for n, _ in named.named_parameters()] == ["fc.weight", "fc.bias"]
    with pytest.raises(IndexError):
        seq[3]


def test_state_dict_round_trip_and_pytorchs_load_errors():
    a, b = Net(), Net()
    with torch.no_grad():
        a.scale.copy_(torch.tensor([2.0]))
    weight_before = b.head.weight
    result = b.load_state_dict(a.state_dict())
    assert str(result) == "<All keys matched successfully>"
    assert b.head.weight is weight_before                       # copied in place
    for (_, p), (_, q) in zip(a.named_parameters(), b.named_parameters()):
        assert p.tolist() == q.tolist()
    sd = a.state_dict()
    del sd["head.bias"]
    sd["extra"] = torch.zeros(1)
    sd["scale"] = torch.zeros(2)
    with pytest.raises(RuntimeError) as e:
        b.load_state_dict(sd)
    assert str(e.value) == (
        'Error(s) in loading state_dict for Net:\n\tMissing key(s) in state_dict: "head.bias". \n\t'
        'Unexpected key(s) in state_dict: "extra". \n\tsize mismatch for scale: copying a param with shape '
        'torch.Size([2]) from checkpoint, the shape in current model is torch.Size([1]).')
    del sd["scale"]
    assert b.load_state_dict(sd, strict=False) == (["scale", "head.bias"], ["extra"])


def test_requires_grad_zero_grad_train_eval():
    net = Net()
    net(torch.randn(2, 4))["y"].sum().backward()
    assert all(p.grad is not None for p in net.parameters())
    net.zero_grad()
    assert all(p.grad.abs().sum().item() == 0.0 for p in net.parameters())
    net.zero_grad(set_to_none=True)
    assert all(p.grad is None for p in net.parameters())
    assert net.eval() is net and not net.training and not net.trunk[0].training
    net.train()
    assert net.head.training
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())


def test_module_errors_follow_pytorch():
    class Bad(nn.Module):
        def __init__(self):
            self.p = nn.Parameter(torch.ones(1))
    with pytest.raises(AttributeError, match="cannot assign parameters before Module.__init__\\(\\) call"):
        Bad()
    with pytest.raises(NotImplementedError, match='missing the required "forward" function'):
        nn.Module()(torch.ones(1))


def test_functional_against_closed_forms():
    x_np = np.array([[0.2, -1.0, 3.0], [1.5, 0.5, -0.5]])
    x = torch.tensor(x_np.tolist(), dtype=torch.float64)
    lsm = x_np - np.log(np.exp(x_np).sum(1, keepdims=True))
    np.testing.assert_allclose(arr(F.log_softmax(x, dim=1)), lsm, rtol=1e-12)
    np.testing.assert_allclose(arr(F.relu(x)), np.maximum(x_np, 0))
    target = torch.tensor([2, 0])
    np.testing.assert_allclose(F.cross_entropy(x, target).item(), -(lsm[0, 2] + lsm[1, 0]) / 2, rtol=1e-12)
    np.testing.assert_allclose(nn.CrossEntropyLoss()(x, target).item(), -(lsm[0, 2] + lsm[1, 0]) / 2, rtol=1e-12)
    y_np = np.array([[1.0, 0.0, 2.0], [0.0, 1.0, 1.0]])
    y = torch.tensor(y_np.tolist(), dtype=torch.float64)
    np.testing.assert_allclose(F.mse_loss(x, y).item(), ((x_np - y_np) ** 2).mean(), rtol=1e-12)
    np.testing.assert_allclose(nn.MSELoss()(x, y).item(), ((x_np - y_np) ** 2).mean(), rtol=1e-12)
    bogus = nn.MSELoss(reduction="bogus")   # 1.13 checks the reduction in the forward, not at construction
    with pytest.raises(ValueError, match="bogus is not a valid value for reduction"):
        bogus(x, y)


def test_sgd_follows_the_update_rule():
    p = nn.Parameter(torch.tensor([1.0, -2.0], dtype=torch.float64))
    opt = torch.optim.SGD([p], lr=0.1, momentum=0.9, weight_decay=0.01)
    for _ in range(3):
        opt.zero_grad()
        (p * p * p).sum().backward()
        opt.step()
    q = np.array([1.0, -2.0])
    buf = None
    for _ in range(3):                       # the same three steps, gradients from the closed form 3 q^2
        d = 3 * q ** 2 + 0.01 * q
        buf = d.copy() if buf is None else 0.9 * buf + d
        q = q - 0.1 * buf
    np.testing.assert_allclose(arr(p), q, rtol=1e-12)
    with pytest.raises(ValueError, match="Invalid learning rate: -1"):
        torch.optim.SGD([p], lr=-1)


def test_adam_follows_the_update_rule():
    p = nn.Parameter(torch.tensor([0.5, -1.5], dtype=torch.float64))
    opt = torch.optim.Adam([p], lr=0.01, betas=(0.8, 0.9), eps=1e-8)
    q, m, v = np.array([0.5, -1.5]), 0.0, 0.0
    for t in range(1, 4):
        opt.zero_grad()
        (p * p).sum().backward()
        loss = opt.step()
        assert loss is None
        g = 2 * q
        m = 0.8 * m + 0.2 * g
        v = 0.9 * v + 0.1 * g * g
        q = q - (0.01 / (1 - 0.8 ** t)) * m / (np.sqrt(v) / np.sqrt(1 - 0.9 ** t) + 1e-8)
        np.testing.assert_allclose(arr(p), q, rtol=1e-12)
    closure_calls = []

    def closure():
        closure_calls.append(1)
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss
    assert opt.step(closure).item() > 0 and closure_calls == [1]


@pytest.mark.parametrize("make", [lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9),
                                  lambda ps: torch.optim.Adam(ps, lr=0.1)])
def test_optimizers_skip_frozen_parameters_and_those_without_grad(make):
    # PyTorch accepts a parameter that does not require grad and skips, at each step, every one whose .grad is None.
    frozen = nn.Parameter(torch.tensor([1.0, 2.0]), requires_grad=False)
    unused = nn.Parameter(torch.tensor([3.0]))
    used = nn.Parameter(torch.tensor([0.5]))
    opt = make([frozen, unused, used])
    for _ in range(2):
        opt.zero_grad()
        (used * used).sum().backward()
        opt.step()
    assert frozen.tolist() == [1.0, 2.0] and frozen.grad is None
    assert unused.tolist() == [3.0] and unused.grad is None
    assert used.item() != 0.5


def test_forward_hooks_follow_pytorch():
    lin = nn.Linear(3, 2)
    x = torch.ones(4, 3)
    seen = []
    pre = lin.register_forward_pre_hook(lambda m, args: seen.append(("pre", m is lin, len(args))))
    post = lin.register_forward_hook(lambda m, args, out: seen.append(("post", args[0] is x, tuple(out.shape))))
    y = lin(x)
    assert seen == [("pre", True, 1), ("post", True, (4, 2))]
    # A pre-hook's result replaces the inputs (a non-tuple is wrapped); a forward hook's replaces the output.
    doubled = lin.register_forward_pre_hook(lambda m, args: args[0] * 2)
    plus_one = lin.register_forward_hook(lambda m, args, out: out + 1)
    z = lin(x)
    np.testing.assert_allclose(arr(z), arr(lin.forward(x * 2)) + 1, rtol=1e-6)
    for h in (pre, post, doubled, plus_one):
        h.remove()
    seen.clear()
    np.testing.assert_allclose(arr(lin(x)), arr(y), rtol=0)
    assert seen == []
    # The handle is also a context manager; hooks on children run inside the parent's forward, in order.
    order = []
    seq = nn.Sequential(nn.Linear(3, 3), nn.ReLU())
    with seq[0].register_forward_hook(lambda m, a, o: order.append("linear")), \
            seq.register_forward_hook(lambda m, a, o: order.append("seq")):
        seq(x)
    seq(x)
    assert order == ["linear", "seq"]
