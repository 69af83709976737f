# PyTorch-1.13 parity of the Python front end's pure-Python parts: torch.Size, devices, ModuleList / Identity /
# Dropout, unsqueeze / squeeze / stack / .T / .data, the elementwise maximum, the warnings, the "gloo" backend and
# DDP's device_ids check. Every expected text, type and value below was printed by PyTorch 1.13.1 (CPU build,
# /usr/bin/python3) for the same expression; this file never imports torch.
import os
import threading
import warnings

import pytest

import tinyddp as torch
import tinyddp._tensor
import tinyddp.distributed as dist
import tinyddp.multiprocessing as mp
import tinyddp.nn as nn
import tinyddp.nn.functional as F
from tinyddp.nn.parallel import DistributedDataParallel as DDP

DIM_RANGE = "Dimension out of range (expected to be in range of [{}, {}], but got {})"
NO_CUDA = "Torch not compiled with CUDA enabled"


def recorded(fn):
    """The (message, category name) pairs `fn` warns, with every warning shown."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn()
    return [(str(w.message), w.category.__name__) for w in caught]


@pytest.fixture
def fresh_warn_once():
    """Forget which warn-once messages were issued, so a test sees the first one (PyTorch: once per process)."""
    tinyddp._tensor._warned.clear()
    yield
    tinyddp._tensor._warned.clear()


# ---- torch.Size ----

def test_size_slices_sums_and_products_are_sizes():
    shape = torch.zeros(2, 3, 4).shape
    assert type(shape[1:]) is torch.Size and repr(shape[1:]) == "torch.Size([3, 4])"
    assert str(shape[1:]) == "torch.Size([3, 4])"
    assert repr(shape + (5,)) == "torch.Size([2, 3, 4, 5])" and type(shape + (5,)) is torch.Size
    assert type((5,) + shape) is tuple and (5,) + shape == (5, 2, 3, 4)   # PyTorch's too: tuple.__add__ decides
    assert repr(shape * 2) == "torch.Size([2, 3, 4, 2, 3, 4])" and type(2 * shape) is torch.Size
    assert repr(shape[::-1]) == "torch.Size([4, 3, 2])" and type(shape[0]) is int and shape[0] == 2
    with pytest.raises(TypeError, match=r'can only concatenate tuple \(not "list"\) to tuple'):
        shape + [1]


# ---- devices ----

def test_device_objects():
    cpu, cpu0 = torch.device("cpu"), torch.device("cpu", 0)
    assert (str(cpu), repr(cpu), cpu.type, cpu.index) == ("cpu", "device(type='cpu')", "cpu", None)
    assert (str(cpu0), repr(cpu0), cpu0.index) == ("cpu:0", "device(type='cpu', index=0)", 0)
    assert cpu == torch.device("cpu") and hash(cpu) == hash(torch.device("cpu")) and not (cpu != cpu)
    assert cpu0 != cpu and cpu != "cpu" and torch.device("cpu:0") == cpu0 and torch.device(cpu) == cpu
    assert repr(torch.device("cuda", 1)) == "device(type='cuda', index=1)" and torch.device("cuda:1").index == 1
    assert repr(torch.device(0)) == "device(type='cuda', index=0)" and str(torch.device("cuda")) == "cuda"
    with pytest.raises(RuntimeError) as e:
        torch.device("foo")
    assert str(e.value) == ("Expected one of cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, ort, "
                            "xla, lazy, vulkan, mps, meta, hpu, privateuseone device type at start of device string: "
                            "foo")
    for bad in ("cpu:x", "cpu:-1"):
        with pytest.raises(RuntimeError, match=f"^Invalid device string: '{bad}'$"):
            torch.device(bad)
    with pytest.raises(RuntimeError, match="^Device index must not be negative$"):
        torch.device("cpu", -1)
    with pytest.raises(TypeError, match=r"^Device\(\): argument 'index' \(position 2\) must be int, not str$"):
        torch.device("cpu", "x")
    with pytest.raises(RuntimeError, match="^type \\(string\\) must not include an index because index was passed "
                                           "explicitly: cpu:0$"):
        torch.device("cpu:0", 0)


def test_cuda_is_absent_as_in_a_cpu_build():
    assert torch.cuda.is_available() is False and torch.cuda.device_count() == 0
    with pytest.raises(AssertionError, match=f"^{NO_CUDA}$"):
        torch.cuda.current_device()


def test_tensor_device_cpu_and_to():
    t = torch.ones(2, requires_grad=True)
    cpu = torch.device("cpu")
    assert t.device == cpu and repr(t.device) == "device(type='cpu')" and t.is_cuda is False and t.get_device() == -1
    assert t.cpu() is t and t.to("cpu") is t and t.to(cpu) is t and t.to(torch.float32) is t and t.to() is t
    assert t.to("cpu", non_blocking=True) is t and t.to(None) is t
    # an explicit index or copy=True copies, as PyTorch's
    assert t.to(torch.device("cpu", 0)) is not t and t.to("cpu", torch.float32, copy=True) is not t
    assert t.to("cpu", torch.float32, False, True) is not t
    for converted in (t.to(torch.float64), t.to(cpu, torch.float64), t.to("cpu", dtype=torch.float64),
                      t.to(device=cpu, dtype=torch.float64), t.to(None, torch.float64),
                      t.to(torch.ones(1, dtype=torch.float64))):
        assert converted.dtype == torch.float64 and converted.requires_grad
    assert t.to(device="cpu").dtype == torch.float32
    for call in (lambda: t.to("cuda"), t.cuda, lambda: t.to(torch.device("cuda", 0)),
                 lambda: t.to("cuda:0", torch.float64), lambda: torch.zeros(2, device="cuda")):
        with pytest.raises(AssertionError, match=f"^{NO_CUDA}$"):
            call()
    with pytest.raises(RuntimeError, match="device type at start of device string: foo$"):
        t.to("foo")
    with pytest.raises(TypeError, match=r"^to\(\) received an invalid combination of arguments - got \(foo=int, \), "
                                        "but expected one of:\n"):
        t.to(foo=1)
    assert torch.zeros(2, device="cpu").device == cpu and torch.tensor([1.0], device=cpu).device == cpu
    assert torch.randn(2, 3, device=cpu).shape == (2, 3)


def test_module_to_cpu_returns_the_module():
    m = nn.Linear(2, 2)
    assert m.to("cpu") is m and m.cpu() is m and m.to(torch.device("cpu")) is m and m.to(torch.float32) is m
    assert m.to(torch.ones(1)) is m and m.to(device="cpu") is m and m.to("cpu", torch.float32, True) is m
    for call in (m.cuda, lambda: m.to("cuda")):
        with pytest.raises(AssertionError, match=f"^{NO_CUDA}$"):
            call()
    for args in ((torch.int64,), ("cpu", torch.int64)):
        with pytest.raises(TypeError, match="^nn.Module.to only accepts floating point or complex dtypes, but got "
                                            "desired dtype=torch.int64$"):
            m.to(*args)
    w = m.weight
    assert m.to(torch.float64) is m and m.weight is w and w.dtype is torch.float64   # the same Parameter, converted
    assert m(torch.ones(2, m.in_features, dtype=torch.float64)).dtype is torch.float64   # the C++ layer sees it too
    assert m.float() is m and w.dtype is torch.float32 and m.double().bias.dtype is torch.float64


# ---- ModuleList, Identity, Dropout ----

def test_module_list_registration_and_repr():
    ml = nn.ModuleList([nn.Linear(2, 3), nn.ReLU()])
    ml.append(nn.Linear(3, 1))
    ml.extend([nn.Tanh()])
    ml.insert(1, nn.Sigmoid())
    assert repr(ml) == ("ModuleList(\n  (0): Linear(in_features=2, out_features=3, bias=True)\n  (1): Sigmoid()\n"
                        "  (2): ReLU()\n  (3): Linear(in_features=3, out_features=1, bias=True)\n  (4): Tanh()\n)")
    names = ["0.weight", "0.bias", "3.weight", "3.bias"]
    assert [n for n, _ in ml.named_parameters()] == names and list(ml.state_dict().keys()) == names
    assert len(ml) == 5 and type(ml[-1]) is nn.Tanh and [type(m) for m in ml][1] is nn.Sigmoid
    part = ml[1:3]
    assert type(part) is nn.ModuleList and repr(part) == "ModuleList(\n  (0): Sigmoid()\n  (1): ReLU()\n)"
    for idx in (10, -10):
        with pytest.raises(IndexError, match=f"^index {idx} is out of range$"):
            ml[idx]
    assert repr(nn.ModuleList()) == "ModuleList()"

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList(nn.Linear(2, 2) for _ in range(2))

    assert repr(M()) == ("M(\n  (layers): ModuleList(\n    (0): Linear(in_features=2, out_features=2, bias=True)\n"
                         "    (1): Linear(in_features=2, out_features=2, bias=True)\n  )\n)")
    assert [n for n, _ in M().named_parameters()] == ["layers.0.weight", "layers.0.bias", "layers.1.weight",
                                                      "layers.1.bias"]


def test_module_list_edits_and_errors():
    ml = nn.ModuleList([nn.ReLU(), nn.Tanh(), nn.Sigmoid()])
    del ml[0]
    assert repr(ml) == "ModuleList(\n  (0): Tanh()\n  (1): Sigmoid()\n)"
    one = nn.ModuleList([nn.ReLU()])
    one[0] = nn.Tanh()
    assert repr(one) == "ModuleList(\n  (0): Tanh()\n)"
    one[-1] = nn.ReLU()
    assert repr(one + nn.ModuleList([nn.Tanh()])) == "ModuleList(\n  (0): ReLU()\n  (1): Tanh()\n)"
    with pytest.raises(TypeError, match="^int is not a Module subclass$"):
        one.append(3)
    with pytest.raises(TypeError, match="^int is not a Module subclass$"):
        nn.ModuleList([1])
    with pytest.raises(TypeError, match="^ModuleList.extend should be called with an iterable, but got ReLU$"):
        one.extend(nn.ReLU())
    with pytest.raises(NotImplementedError, match='^Module \\[ModuleList\\] is missing the required "forward" '
                                                  'function$'):
        one(1)


def test_identity_and_dropout_modules():
    assert repr(nn.Identity()) == "Identity()" and repr(nn.Identity(3, k=4)) == "Identity()"
    x = torch.ones(2)
    assert nn.Identity(5)(x) is x
    assert repr(nn.Dropout()) == "Dropout(p=0.5, inplace=False)"
    assert repr(nn.Dropout(0.2, True)) == "Dropout(p=0.2, inplace=True)"
    assert repr(nn.Dropout(p=0)) == "Dropout(p=0, inplace=False)"
    assert repr(nn.Dropout(1)) == "Dropout(p=1, inplace=False)"
    assert nn.Dropout(0.5).p == 0.5 and nn.Dropout(0.5).inplace is False
    for p, shown in ((1.5, "1.5"), (-0.1, "-0.1")):
        with pytest.raises(ValueError, match=f"^dropout probability has to be between 0 and 1, but got {shown}$"):
            nn.Dropout(p)
    with pytest.raises(ValueError, match="^dropout probability has to be between 0 and 1, but got 2.0$"):
        F.dropout(x, 2.0)
    d = nn.Dropout()
    d.eval()
    assert d(x) is x


def test_dropout_identity_cases_and_the_mask():
    x = torch.ones(3, requires_grad=True)
    assert F.dropout(x, 0.5, training=False) is x and F.dropout(x, 0.0) is x
    y = F.dropout(x, 1.0)
    assert y.tolist() == [0.0, 0.0, 0.0] and y.grad_fn.name() == "MulBackward0"
    y.sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0]
    assert F.dropout(x).grad_fn.name() == "MulBackward0"
    assert F.dropout(torch.ones(2, dtype=torch.float64), 0.5).dtype == torch.float64
    with pytest.raises(RuntimeError, match="^result type Float can't be cast to the desired output type Long$"):
        F.dropout(torch.ones(2, dtype=torch.int64), 0.5)
    # the mask is tinyddp's stream (not PyTorch's), so check its law: kept elements are scaled by 1/(1-p), the
    # gradient is the mask, and about p of the elements drop
    torch.manual_seed(0)
    big = torch.ones(10000, dtype=torch.float64, requires_grad=True)
    out = F.dropout(big, 0.3)
    assert sorted(set(out.tolist())) == [0.0, 1.0 / 0.7]
    assert abs(float((out == 0).float().mean()) - 0.3) < 0.02
    out.sum().backward()
    assert big.grad.tolist() == out.tolist()


# ---- unsqueeze, squeeze, stack, .T, .data ----

def test_unsqueeze_and_squeeze():
    x = torch.arange(6).reshape(2, 3).double().requires_grad_()
    assert x.unsqueeze(0).shape == (1, 2, 3) and x.unsqueeze(-1).shape == (2, 3, 1)
    assert torch.unsqueeze(x, 1).shape == (2, 1, 3) and x.unsqueeze(-3).shape == (1, 2, 3)
    assert x.unsqueeze(1).tolist() == [[[0.0, 1.0, 2.0]], [[3.0, 4.0, 5.0]]]
    for d in (3, -4):
        with pytest.raises(IndexError) as e:
            x.unsqueeze(d)
        assert str(e.value) == DIM_RANGE.format(-3, 2, d)
    z = torch.arange(6).reshape(1, 2, 1, 3).double().requires_grad_()
    assert z.squeeze().shape == (2, 3) and z.squeeze(0).shape == (2, 1, 3) and z.squeeze(1).shape == (1, 2, 1, 3)
    assert z.squeeze(-2).shape == (1, 2, 3) and torch.squeeze(z, 2).shape == (1, 2, 3)
    assert torch.squeeze(z).shape == (2, 3)
    with pytest.raises(IndexError) as e:
        z.squeeze(4)
    assert str(e.value) == DIM_RANGE.format(-4, 3, 4)
    (z.squeeze() * torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=torch.float64)).sum().backward()
    assert z.grad.tolist() == [[[[1.0, 2.0, 3.0]], [[4.0, 5.0, 6.0]]]]
    s = torch.tensor(3.0)
    assert s.unsqueeze(0).shape == (1,) and s.squeeze().shape == () and s.squeeze(0).shape == ()
    assert s.squeeze(-1).shape == ()
    for call, d in ((lambda: s.squeeze(1), 1), (lambda: s.unsqueeze(2), 2)):
        with pytest.raises(IndexError) as e:
            call()
        assert str(e.value) == DIM_RANGE.format(-1, 0, d)
    w = torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], dtype=torch.float64)
    (x.unsqueeze(1).squeeze(1) @ w).sum().backward()
    assert x.grad.tolist() == [[3.0, 7.0, 11.0], [3.0, 7.0, 11.0]]


def test_stack():
    a, b = torch.ones(2, 3, requires_grad=True), torch.ones(2, 3) * 2
    assert torch.stack([a, b]).shape == (2, 2, 3) and torch.stack([a, b], 1).shape == (2, 2, 3)
    assert torch.stack((a, b), dim=-1).shape == (2, 3, 2) and torch.stack([a, b], 2).shape == (2, 3, 2)
    assert torch.stack([a, b], 1).tolist() == [[[1.0] * 3, [2.0] * 3], [[1.0] * 3, [2.0] * 3]]
    (torch.stack([a, b], 1) * torch.arange(12).reshape(2, 2, 3).float()).sum().backward()
    assert a.grad.tolist() == [[0.0, 1.0, 2.0], [6.0, 7.0, 8.0]]
    assert torch.stack([torch.tensor(1.0), torch.tensor(2.0)]).tolist() == [1.0, 2.0]
    with pytest.raises(RuntimeError, match="^stack expects a non-empty TensorList$"):
        torch.stack([])
    with pytest.raises(RuntimeError, match=r"^stack expects each tensor to be equal size, but got \[2, 3\] at entry 0 "
                                           r"and \[3\] at entry 1$"):
        torch.stack([a, torch.ones(3)])
    for d in (3, -4):
        with pytest.raises(IndexError) as e:
            torch.stack([a, b], d)
        assert str(e.value) == DIM_RANGE.format(-3, 2, d)


def test_transpose_property(fresh_warn_once):
    x = torch.arange(6).reshape(2, 3).double().requires_grad_()
    assert x.T.tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]
    (x.T @ torch.ones(2, 2, dtype=torch.float64)).sum().backward()
    assert x.grad.tolist() == [[2.0] * 3] * 2
    message = ("The use of `x.T` on tensors of dimension other than 2 to reverse their shape is deprecated and it will "
               "throw an error in a future release. Consider `x.mT` to transpose batches of matrices or "
               "`x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a tensor. (Triggered "
               "internally at  ./aten/src/ATen/native/TensorShape.cpp:3277.)")
    assert recorded(lambda: torch.tensor(2.0).T) == [] and torch.tensor(2.0).T.shape == ()   # 0-dim: no warning
    assert recorded(lambda: torch.ones(3).T) == [(message, "UserWarning")] and torch.ones(3).T.shape == (3,)
    t3 = torch.arange(24).reshape(2, 3, 4).double().requires_grad_()
    out = []
    assert recorded(lambda: out.append(t3.T)) == []   # once per process, as 1.13's TORCH_WARN_ONCE
    r = out[0]
    assert r.shape == (4, 3, 2) and r[1, 2].tolist() == [9.0, 21.0]
    (r * torch.arange(24).reshape(4, 3, 2).double()).sum().backward()
    assert t3.grad[1].tolist() == [[1.0, 7.0, 13.0, 19.0], [3.0, 9.0, 15.0, 21.0], [5.0, 11.0, 17.0, 23.0]]


def test_data_is_a_history_free_alias():
    x = torch.arange(6).reshape(2, 3).double().requires_grad_()
    d = x.data
    assert d.requires_grad is False and d.is_leaf and d.grad_fn is None
    with torch.no_grad():
        d.zero_()
    assert x.tolist() == [[0.0] * 3] * 2 and x.requires_grad
    y = x * 2
    assert y.data.requires_grad is False and y.data.is_leaf
    x.data = torch.zeros(3)   # the same leaf, now over another storage (and shape), as PyTorch's
    assert x.tolist() == [0.0] * 3 and x.requires_grad and x.is_leaf and x.dtype is torch.float32
    with pytest.raises(TypeError, match="^Variable data has to be a tensor, but got int$"):
        x.data = 3


# ---- max(a, b) / maximum ----

def test_elementwise_maximum_values_and_gradients():
    x = torch.tensor([[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]], requires_grad=True)
    assert torch.max(x, torch.tensor(0.0)).tolist() == [[1.0, 0.0, 3.0], [4.0, 5.0, 0.0]]
    y = torch.tensor([[1.0, 0.0, 5.0], [2.0, 5.0, -7.0]], requires_grad=True)
    for out in (torch.max(x, y), x.max(y), torch.maximum(x, y), x.maximum(y)):
        assert out.tolist() == [[1.0, 0.0, 5.0], [4.0, 5.0, -6.0]]
    weights = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    (torch.max(x, y) * weights).sum().backward()
    assert x.grad.tolist() == [[0.5, 0.0, 0.0], [4.0, 2.5, 6.0]]   # a tie gives each side half
    assert y.grad.tolist() == [[0.5, 2.0, 3.0], [0.0, 2.5, 0.0]]
    b = torch.tensor([2.0, 5.0, -6.0], requires_grad=True)
    x.grad = None
    (torch.maximum(x, b) * weights).sum().backward()
    assert x.grad.tolist() == [[0.0, 0.0, 3.0], [4.0, 2.5, 3.0]] and b.grad.tolist() == [1.0, 4.5, 3.0]
    nan = float("nan")
    got = torch.maximum(torch.tensor([nan, 1.0, 2.0], dtype=torch.float64),
                        torch.tensor([0.0, nan, 3.0], dtype=torch.float64)).tolist()
    assert got[0] != got[0] and got[1] != got[1] and got[2] == 3.0
    big = torch.tensor([3e38, -3e38, 1e-45], requires_grad=True)
    small = torch.tensor([-3e38, 3e38, 1e-45], requires_grad=True)
    out = torch.maximum(big, small)   # no overflow, no rounding: the selected elements themselves
    assert out.tolist() == [3.0000000054977558e+38, 3.0000000054977558e+38, 1.401298464324817e-45]
    out.sum().backward()
    assert big.grad.tolist() == [1.0, 0.0, 0.5] and small.grad.tolist() == [0.0, 1.0, 0.5]
    assert torch.maximum(torch.tensor([1e8, 1.0]), torch.tensor([1.0, 1e8])).tolist() == [1e8, 1e8]
    d = torch.tensor([2.0, 3.0], dtype=torch.float64, requires_grad=True)
    g, = torch.autograd.grad(torch.maximum(d * d, d * 3).sum(), d, create_graph=True)
    assert g.tolist() == [3.0, 4.5]
    g.sum().backward()
    assert d.grad.tolist() == [0.0, 1.0]
    assert torch.max(x, 0)[0].tolist() == [4.0, 5.0, 3.0] and torch.max(x, dim=1).values.tolist() == [3.0, 5.0]


def test_elementwise_maximum_refusals_and_infinities():
    with pytest.raises(TypeError, match=r"^maximum\(\): argument 'other' \(position 2\) must be Tensor, not float$"):
        torch.maximum(torch.ones(2), 0.0)
    # infinities are selected as they are (1.13's values and gradients: half to each at the tie inf == inf)
    a = torch.tensor([1.0, float("-inf"), float("inf")], requires_grad=True)
    b = torch.tensor([0.0, 0.0, float("inf")], requires_grad=True)
    out = torch.max(a, b)
    assert out.tolist() == [1.0, 0.0, float("inf")]
    out.sum().backward()
    assert a.grad.tolist() == [1.0, 0.0, 0.5] and b.grad.tolist() == [0.0, 1.0, 0.5]


# ---- warnings ----

def test_optimizer_duplicate_parameters_warning():
    text = ("optimizer contains a parameter group with duplicate parameters; in future, this will cause an error; "
            "see github.com/pytorch/pytorch/issues/40967 for more information")
    p = nn.Parameter(torch.tensor([1.0, 2.0]))
    assert recorded(lambda: torch.optim.SGD([p, p], lr=0.1)) == [(text, "UserWarning")]
    assert recorded(lambda: torch.optim.Adam(iter([p, p]))) == [(text, "UserWarning")]
    assert recorded(lambda: torch.optim.SGD([p], lr=0.1)) == []


def test_autograd_backward_create_graph_warns_once(fresh_warn_once):
    text = ("Using backward() with create_graph=True will create a reference cycle between the parameter and its "
            "gradient which can cause a memory leak. We recommend using autograd.grad when creating the graph to "
            "avoid this. If you have to use this function, make sure to reset the .grad fields of your parameters to "
            "None after use to break the cycle and avoid the leak. (Triggered internally at  "
            "./torch/csrc/autograd/engine.cpp:1059.)")
    x = torch.ones(2, requires_grad=True)
    assert recorded(lambda: torch.autograd.backward([(x * x).sum()], create_graph=True)) == [(text, "UserWarning")]
    assert recorded(lambda: torch.autograd.backward([(x * x).sum()], create_graph=True)) == []
    assert x.grad.tolist() == [4.0, 4.0]

    # Tensor.backward shares the once-per-process warning (1.13's Tensor.backward calls autograd.backward)
    tinyddp._tensor._warned.clear()
    assert recorded(lambda: (x * x).sum().backward(create_graph=True)) == [(text, "UserWarning")]
    assert recorded(lambda: (x * x).sum().backward(create_graph=True)) == []


def test_non_leaf_grad_warns_and_requires_grad_is_a_leaf_flag():
    text = ("The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute won't "
            "be populated during autograd.backward(). If you indeed want the .grad field to be populated for a "
            "non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor by "
            "mistake, make sure you access the leaf Tensor instead. See github.com/pytorch/pytorch/pull/30531 for "
            "more informations. (Triggered internally at  ./build/aten/src/ATen/core/TensorBody.h:480.)")
    x = torch.ones(2, requires_grad=True)
    y = x * 2
    assert recorded(lambda: y.grad) == [(text, "UserWarning")]   # every access, not once
    assert recorded(lambda: y.grad) == [(text, "UserWarning")]
    kept = x * 3
    kept.retain_grad()
    assert kept.retains_grad and not y.retains_grad
    assert recorded(lambda: (kept.grad, x.grad, (torch.ones(2) * 2).grad)) == []
    with pytest.raises(RuntimeError, match=r"^you can only change requires_grad flags of leaf variables\.$"):
        y.requires_grad = True
    with pytest.raises(RuntimeError, match=r"^you can only change requires_grad flags of leaf variables\. If you "
                                           r"want to use a computed variable in a subgraph that doesn't require "
                                           r"differentiation use var_no_grad = var\.detach\(\)\.$"):
        y.requires_grad = False
    assert y.requires_grad_(True) is y   # 1.13 refuses only False here


# ---- distributed: "gloo" and DDP's device_ids ----

def test_gloo_is_the_thread_backend_under_spawn():
    results = {}
    lock = threading.Lock()

    def run(rank, world):
        dist.init_process_group("gloo", init_method="env://", rank=rank, world_size=world)
        m = nn.Linear(2, 1)
        with torch.no_grad():
            m.weight.copy_(torch.tensor([[1.0, 2.0]]))
            m.bias.fill_(0.5)
        ddp = DDP(m)   # kept alive through the backward (a temporary's reducer is gone, in 1.13 too)
        ddp(torch.ones(3, 2) * (rank + 1)).sum().backward()
        with lock:
            results[rank] = (dist.get_backend(), dist.get_world_size(), m.weight.grad.tolist(), m.bias.grad.tolist())
        dist.destroy_process_group()

    os.environ.setdefault("MASTER_ADDR", "localhost")
    os.environ.setdefault("MASTER_PORT", "29533")
    mp.spawn(run, args=(2,), nprocs=2, timeout=30)
    assert results == {r: ("gloo", 2, [[4.5, 4.5]], [3.0]) for r in range(2)}


def test_gloo_outside_spawn_and_nccl():
    with pytest.raises(RuntimeError, match="^Distributed package doesn't have NCCL built in$"):
        dist.init_process_group("nccl", init_method="env://", rank=0, world_size=1)
    assert not dist.is_initialized()
    dist.init_process_group("GLOO", init_method="tcp://127.0.0.1:29541", rank=0, world_size=1)
    try:
        assert (dist.get_backend(), dist.get_rank(), dist.get_world_size()) == ("gloo", 0, 1)
        t = torch.ones(2)
        dist.all_reduce(t)
        assert t.tolist() == [1.0, 1.0]
        with pytest.raises(RuntimeError, match="^trying to initialize the default process group twice!$"):
            dist.init_process_group("gloo")
    finally:
        dist.destroy_process_group()
    assert not dist.is_initialized()
    with pytest.raises(RuntimeError, match="^Default process group has not been initialized, please make sure to "
                                           "call init_process_group.$"):
        dist.get_backend()


def test_ddp_device_ids_on_a_cpu_module():
    def run(rank):
        dist.init_process_group("gloo")
        for kwargs, shown in ((dict(device_ids=[rank]), "None"), (dict(device_ids=[rank], output_device=rank), "0")):
            with pytest.raises(ValueError) as e:
                DDP(nn.Linear(2, 1), **kwargs)
            assert str(e.value) == (
                "DistributedDataParallel device_ids and output_device arguments only work with "
                "single-device/multiple-device GPU modules or CPU modules, but got device_ids [0], output_device "
                f"{shown}, and module parameters {{device(type='cpu')}}.")
        # 1.13 tests truthiness: an empty list and output_device=0 pass, as do the defaults
        DDP(nn.Linear(2, 1), device_ids=[], output_device=0)
        DDP(nn.Linear(2, 1), device_ids=None, output_device=None)
        dist.destroy_process_group()

    mp.spawn(run, nprocs=1, timeout=30)


def test_optimizer_step_between_two_backwards_as_1_13():
    # Texts and versions from PyTorch 1.13.1. A layer whose input needs no gradient keeps no reference to its
    # weight (addmm saves W.t() only for the input's gradient), so the step before the second backward is fine.
    torch.manual_seed(0)
    first = nn.Linear(3, 2)
    assert (first.weight._version, first.bias._version) == (1, 1)   # nn.Linear's init runs in place
    opt = torch.optim.SGD(first.parameters(), lr=0.1)
    loss = first(torch.ones(4, 3)).sum()
    loss.backward(retain_graph=True)
    opt.step()
    loss.backward()
    # A second layer saves W.t() for its input's gradient: a view, whose grad_fn 1.13 regenerates once the step
    # changed W, hence AsStridedBackward0.
    second = nn.Linear(2, 3)
    opt = torch.optim.SGD(second.parameters(), lr=0.1)
    loss = second(first(torch.ones(4, 3))).sum()
    loss.backward(retain_graph=True)
    opt.step()
    with pytest.raises(RuntimeError, match=r"^one of the variables needed for gradient computation has been modified "
                                           r"by an inplace operation: \[torch\.FloatTensor \[2, 3\]\], which is output "
                                           r"0 of AsStridedBackward0, is at version 2; expected version 1 instead\. "):
        loss.backward()


def test_grad_fn_names_of_losses_means_softmax_and_reshape_as_1_13():
    # What print(loss) shows: 1.13's node names (PyTorch 1.13.1 printed these for the same expressions).
    x = torch.tensor([[0.5, -1.0, 2.0], [1.5, 0.0, -0.5]], requires_grad=True)
    ce = F.cross_entropy(x, torch.tensor([2, 0]))
    assert ce.grad_fn.name() == "NllLossBackward0"
    assert ce.grad_fn.next_functions[0][0].name() == "LogSoftmaxBackward0"
    assert repr(nn.CrossEntropyLoss()(x, torch.tensor([2, 0]))).endswith(", grad_fn=<NllLossBackward0>)")
    assert F.mse_loss(x, torch.zeros(2, 3)).grad_fn.name() == "MseLossBackward0"
    assert x.mean().grad_fn.name() == "MeanBackward0" and x.mean(0).grad_fn.name() == "MeanBackward1"
    assert F.softmax(x, 1).grad_fn.name() == "SoftmaxBackward0"
    assert x.reshape(3, 2).grad_fn.name() == "ReshapeAliasBackward0" and x.view(6).grad_fn.name() == "ViewBackward0"
    assert x.t().reshape(6).grad_fn.name() == "UnsafeViewBackward0"
    leaf = x.reshape(6).grad_fn.next_functions[0][0]
    assert leaf.name() == "torch::autograd::AccumulateGrad" and repr(leaf).startswith("<AccumulateGrad object")
    # the values and gradients are 1.13's too
    assert abs(ce.item() - 0.27383357) < 1e-6
    ce.backward()
    assert [round(v, 6) for v in x.grad.tolist()[0]] == [0.087645, 0.019556, -0.107201]


def test_what_a_tensor_hook_returns_is_checked_as_1_13_checks_it():
    w = torch.ones(2, requires_grad=True)
    w.register_hook(lambda g: torch.ones(3))
    with pytest.raises(RuntimeError, match=r"^hook '<lambda>' has changed the size of value$"):
        (w * 2).sum().backward()
    y = torch.ones(2, requires_grad=True) * 2

    def to_double(g):
        return g.double()

    y.register_hook(to_double)
    with pytest.raises(RuntimeError, match=r"^hook 'to_double' has changed the type of value \(was torch\.FloatTensor "
                                           r"got torch\.DoubleTensor\)$"):
        y.sum().backward()
    z = torch.ones(2, requires_grad=True)
    z.register_hook(lambda g: 1)
    with pytest.raises(TypeError, match=r"^expected Variable, but hook returned 'int'$"):
        (z * 2).sum().backward()


def test_common_shape_and_argument_errors_read_as_1_13s():
    # The texts PyTorch 1.13.1 raised for the same calls.
    cases = [
        (lambda: torch.ones(2) + torch.ones(3),
         "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0"),
        (lambda: torch.ones(2, 1, 3) * torch.ones(4, 2),
         "The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 2"),
        (lambda: torch.ones(1, 2) @ torch.ones(1, 2), "mat1 and mat2 shapes cannot be multiplied (1x2 and 1x2)"),
        (lambda: torch.ones(3).view(2, 2), "shape '[2, 2]' is invalid for input of size 3"),
        (lambda: torch.ones(6).view(-1, -1), "only one dimension can be inferred"),
        (lambda: torch.ones(3).reshape(2, 2), "shape '[2, 2]' is invalid for input of size 3"),
        (lambda: torch.tensor([1, 2], requires_grad=True),
         "Only Tensors of floating point and complex dtype can require gradients"),
        (lambda: torch.ones(3, requires_grad=True).sum().backward(torch.ones(2)),
         "Mismatch in shape: grad_output[0] has a shape of torch.Size([2]) and output[0] has a shape of "
         "torch.Size([])."),
    ]
    for call, text in cases:
        with pytest.raises(RuntimeError) as e:
            call()
        assert str(e.value) == text
    x = torch.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"^assigned grad has data of a different size$"):
        x.grad = torch.ones(1)
    p = [nn.Parameter(torch.ones(1))]
    for make, text in [(lambda: torch.optim.Adam(p, lr=0.1, betas=(1.0, 0.9)),
                        "Invalid beta parameter at index 0: 1.0"),
                       (lambda: torch.optim.Adam(p, lr=0.1, betas=(0.9, 1)), "Invalid beta parameter at index 1: 1"),
                       (lambda: torch.optim.SGD(p, lr=-1.0), "Invalid learning rate: -1.0"),
                       (lambda: torch.optim.SGD(p, lr=0.1, nesterov=True),
                        "Nesterov momentum requires a momentum and zero dampening"),
                       (lambda: torch.optim.SGD(p),
                        "parameter group didn't specify a value of required optimization parameter lr")]:
        with pytest.raises(ValueError) as e:
            make()
        assert str(e.value) == text
