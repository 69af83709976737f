# Tensors from Python: factories, arithmetic with broadcasting and Python scalars, reductions, shapes, dtypes,
# conversions and repr, checked against NumPy (an independent implementation) and closed forms.
import builtins

import numpy as np
import pytest

import tinyddp as torch


def close(t, expected, tol=1e-6):
    np.testing.assert_allclose(np.array(t.tolist(), dtype=np.float64), np.asarray(expected, dtype=np.float64),
                               rtol=tol, atol=tol)


def test_tensor_from_lists_infers_dtype_and_shape():
    f = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert f.dtype == torch.float32 and f.shape == (2, 3) and isinstance(f.shape, tuple)
    assert repr(f.shape) == "torch.Size([2, 3])"
    i = torch.tensor([1, 2, 3])
    assert i.dtype == torch.int64 and i.tolist() == [1, 2, 3]
    assert torch.tensor([1, 2.5]).dtype == torch.float32
    assert torch.tensor(3.0).shape == () and torch.tensor(3.0).item() == 3.0
    assert torch.tensor([1, 2], dtype=torch.float64).dtype == torch.float64
    assert torch.tensor([[]]).shape == (1, 0)


def test_tensor_rejects_ragged_and_bad_data_with_pytorchs_texts():
    with pytest.raises(ValueError, match=r"expected sequence of length 2 at dim 1 \(got 3\)"):
        torch.tensor([[1, 2], [3, 4, 5]])
    with pytest.raises(TypeError, match="new\\(\\): invalid data type 'str'"):
        torch.tensor(["a"])


def test_factories():
    assert torch.zeros(2, 3).tolist() == [[0.0] * 3] * 2
    assert torch.ones((2,), dtype=torch.float64).dtype == torch.float64
    x = torch.tensor([[1.0, 2.0]])
    assert torch.zeros_like(x).shape == (1, 2) and torch.ones_like(x).tolist() == [[1.0, 1.0]]
    assert torch.full((2,), 7).tolist() == [7, 7]
    z = torch.zeros(2, requires_grad=True)
    assert z.requires_grad and z.is_leaf


def test_manual_seed_repeats_the_stream_and_randn_is_standard_normal():
    torch.manual_seed(3)
    a = torch.randn(2000).tolist()
    torch.manual_seed(3)
    assert torch.randn(2000).tolist() == a
    assert abs(np.mean(a)) < 0.1 and abs(np.std(a) - 1.0) < 0.1
    assert torch.randn(2, 3, dtype=torch.float64).dtype == torch.float64


def test_arithmetic_broadcasts_and_takes_python_scalars_on_either_side():
    a_np = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    b_np = np.array([0.5, -1.0, 2.0])
    a, b = torch.tensor(a_np.tolist()), torch.tensor(b_np.tolist())
    close(a + b, a_np + b_np)
    close(a - b, a_np - b_np)
    close(a * b, a_np * b_np)
    close(a / b, a_np / b_np)
    close(a ** 2, a_np ** 2)
    close(a ** 0.5, a_np ** 0.5)
    close(-a, -a_np)
    close(2 + a, 2 + a_np)
    close(a + 2.5, a_np + 2.5)
    close(1 - a, 1 - a_np)
    close(a - 1, a_np - 1)
    close(3 * a, 3 * a_np)
    close(a * 0.5, a_np * 0.5)
    close(1 / a, 1 / a_np)
    close(a / 4, a_np / 4)
    close(a @ torch.tensor(b_np.tolist()), a_np @ b_np)
    close(a @ a.t(), a_np @ a_np.T)
    close(builtins.sum([a, a, a]), 3 * a_np)   # 0 + t, then t + t


def test_unsupported_operands_raise_type_error():
    with pytest.raises(TypeError):
        torch.ones(2) + "x"


def test_inplace_operators_keep_the_object():
    a = torch.ones(3)
    same = a
    a += 1
    a *= 3
    a -= torch.tensor([1.0, 2.0, 3.0])
    assert a is same and a.tolist() == [5.0, 4.0, 3.0]


def test_reductions_and_elementwise_functions():
    x_np = np.array([[0.5, 1.5, -2.0], [3.0, 0.25, 1.0]])
    x = torch.tensor(x_np.tolist(), dtype=torch.float64)
    close(x.sum(), x_np.sum(), 1e-12)
    close(x.sum(0), x_np.sum(0), 1e-12)
    close(x.sum(dim=1, keepdim=True), x_np.sum(1, keepdims=True), 1e-12)
    close(x.sum((0, 1)), x_np.sum(), 1e-12)
    close(x.mean(), x_np.mean(), 1e-12)
    close(x.mean(1), x_np.mean(1), 1e-12)
    close(torch.sum(x, 0), x_np.sum(0), 1e-12)
    close(x.exp(), np.exp(x_np), 1e-12)
    close(x.abs().log(), np.log(np.abs(x_np)), 1e-12)
    close(x.relu(), np.maximum(x_np, 0), 1e-12)
    close(x.tanh(), np.tanh(x_np), 1e-12)
    close(x.sigmoid(), 1 / (1 + np.exp(-x_np)), 1e-12)
    close(torch.exp(x), np.exp(x_np), 1e-12)


def test_shapes_views_and_copies():
    x = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert x.view(3, 2).tolist() == [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]
    assert x.view((6,)).shape == (6,) and x.reshape(-1, 3).shape == (2, 3)
    assert x.reshape(x.shape).shape == torch.Size([2, 3])
    assert x.t().tolist() == [[1.0, 4.0], [2.0, 5.0], [3.0, 6.0]]
    assert x.size() == (2, 3) and x.size(1) == 3 and x.dim() == 2 and x.numel() == 6
    v = x.view(6)
    v.zero_()
    assert x.tolist() == [[0.0] * 3] * 2   # a view shares storage
    c = x.clone()
    c.copy_(torch.ones(2, 3))
    assert x.sum().item() == 0.0 and c.sum().item() == 6.0


def test_dtypes_item_and_tolist():
    x = torch.tensor([0.1])
    assert x.item() == float(np.float32(0.1))   # float32 value, widened exactly
    assert isinstance(torch.tensor([3]).item(), int)
    assert x.double().dtype == torch.float64 and x.to(torch.float64).dtype == torch.float64
    assert repr(torch.float32) == "torch.float32" and torch.float is torch.float32
    assert float(torch.tensor(2.5)) == 2.5 and int(torch.tensor(7)) == 7
    with pytest.raises(RuntimeError, match="Boolean value of Tensor with more than one value is ambiguous"):
        bool(torch.ones(2))


def test_repr_follows_pytorch():
    assert repr(torch.tensor([1.0, 2.0], requires_grad=True)) == "tensor([1., 2.], requires_grad=True)"
    assert repr(torch.tensor([0.1, 25.5])) == "tensor([ 0.1000, 25.5000])"
    assert repr(torch.tensor(3.0)) == "tensor(3.)"
    assert repr(torch.tensor([1, 2])) == "tensor([1, 2])"
    assert repr(torch.tensor([1.0], dtype=torch.float64)) == "tensor([1.], dtype=torch.float64)"
    assert repr(torch.tensor([[1.0, 2.0], [3.0, 4.0]])) == "tensor([[1., 2.],\n        [3., 4.]])"
    assert repr(torch.tensor([1e-5, 1.0])) == "tensor([1.0000e-05, 1.0000e+00])"
    assert repr(torch.zeros(0)) == "tensor([])"
    w = torch.tensor([2.0], requires_grad=True)
    assert repr(w * w) == "tensor([4.], grad_fn=<MulBackward0>)"
    assert repr(torch.arange(2000, dtype=torch.float32)) == \
        "tensor([0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 1.9970e+03, 1.9980e+03,\n        1.9990e+03])"
    assert f"{torch.tensor(0.123456):.3f}" == "0.123"


def test_numpy_round_trip():
    a = np.arange(6, dtype=np.float64).reshape(2, 3)
    t = torch.from_numpy(a)
    assert t.dtype == torch.float64 and t.tolist() == a.tolist()
    back = t.numpy()
    back[0, 0] = 42.0                  # numpy() shares the tensor's memory, as PyTorch's
    assert t.tolist()[0][0] == 42.0
    assert torch.tensor(np.array([1, 2], dtype=np.int64)).dtype == torch.int64
    assert np.asarray(torch.ones(2)).tolist() == [1.0, 1.0]
    with pytest.raises(RuntimeError, match=r"Can't call numpy\(\) on Tensor that requires grad"):
        torch.ones(1, requires_grad=True).numpy()
    np.testing.assert_array_equal(torch.ones(2, 3).t().numpy(), np.ones((3, 2)))   # strided view


def test_python_numbers_are_wrapped_as_tensors_as_pytorch_does():
    # PyTorch 1.13's grad_fn names for a number on either side (a 0-dim wrapped tensor, the tensor-tensor op).
    w = torch.tensor([1.0, 2.0, 4.0], requires_grad=True)
    names = {"w + 2": (w + 2, "AddBackward0"), "2 + w": (2 + w, "AddBackward0"), "w - 2": (w - 2, "SubBackward0"),
             "w * 2": (w * 2, "MulBackward0"), "2 * w": (2 * w, "MulBackward0"), "w / 2": (w / 2, "DivBackward0"),
             "2 / w": (2 / w, "MulBackward0")}
    for expr, (t, name) in names.items():
        assert t.grad_fn.name() == name, expr
        assert t.dtype == torch.float32, expr
    close(w / 4, [0.25, 0.5, 1.0])
    close(2 / w, [2.0, 1.0, 0.5])
    # The gradients stay right, to second order: f = sum(3 w^2 / 2 + 1) -> df/dw = 3w, d2f/dw2 = 3.
    f = ((w * w * 3) / 2 + 1).sum()
    (g,) = torch.autograd.grad(f, w, create_graph=True)
    close(g, [3.0, 6.0, 12.0])
    (h,) = torch.autograd.grad(g.sum(), w)
    close(h, [3.0, 3.0, 3.0])
    (d,) = torch.autograd.grad((2 / w).sum(), w)   # -2 / w^2
    close(d, [-2.0, -0.5, -0.125])


def test_basic_indexing_with_integers_and_slices():
    a = np.arange(24, dtype=np.float64).reshape(2, 3, 4)
    t = torch.tensor(a.tolist(), dtype=torch.float64)
    for index in (0, -1, (1, 2), (1, 2, 3), (-1, -1, -1), slice(None), slice(1, None), (slice(None), 1),
                  (slice(None), slice(0, 2)), (0, slice(1, 3), slice(2, None)), (slice(None), slice(5, 9)),
                  (slice(None), -2, slice(1, 3)), slice(-1, None)):
        got = t[index]
        assert list(got.shape) == list(a[index].shape), index
        if a[index].size:   # (tolist() of an empty tensor loses its inner sizes, as PyTorch's does)
            close(got, a[index])
    assert t[1, 2, 3].dim() == 0 and t[1, 2, 3].item() == 23.0
    assert t[:, 1:2].grad_fn is None
    # Slices are the engine's narrow (SliceBackward0); the gradient lands on the indexed elements only.
    w = torch.tensor(a.tolist(), dtype=torch.float64, requires_grad=True)
    assert w[:, 1:3].grad_fn.name() == "SliceBackward0"
    (w[1, 0:2, 1] * 5).sum().backward()
    expected = np.zeros_like(a)
    expected[1, 0:2, 1] = 5
    close(w.grad, expected)
    rows = [r.tolist() for r in torch.tensor([[1.0, 2.0], [3.0, 4.0]])]
    assert rows == [[1.0, 2.0], [3.0, 4.0]]
    with pytest.raises(TypeError, match="iteration over a 0-d tensor"):
        iter(torch.tensor(1.0))
    tt = torch.tensor(a.tolist()).transpose(0, 2)   # t[:] of a non-contiguous tensor is a view too
    close(tt[:], np.transpose(a, (2, 1, 0)))


def test_indexing_errors_follow_pytorch():
    t = torch.zeros(2, 3)
    with pytest.raises(IndexError, match="index 2 is out of bounds for dimension 0 with size 2"):
        t[2]
    with pytest.raises(IndexError, match="index -4 is out of bounds for dimension 1 with size 3"):
        t[0, -4]
    with pytest.raises(IndexError, match="too many indices for tensor of dimension 2"):
        t[0, 0, 0]
    with pytest.raises(IndexError, match="invalid index of a 0-dim tensor"):
        torch.tensor(1.0)[0]
    with pytest.raises(ValueError, match="step must be greater than zero"):
        t[::-1]
    with pytest.raises(IndexError, match="index 5 is out of bounds for dimension 1 with size 3"):   # advanced
        t[[0, 1], [1, 5]]
    with pytest.raises(IndexError, match="only integers, slices .* are valid indices \\(got float\\)"):
        t[1.5]


def test_inplace_arithmetic_methods_bump_the_version_once_and_return_the_tensor():
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    v = x._version
    assert x.add_(torch.tensor([10.0, 20.0])) is x and x.tolist() == [[11.0, 22.0], [13.0, 24.0]]
    assert x.add_(1, alpha=2).tolist() == [[13.0, 24.0], [15.0, 26.0]]
    assert x.sub_(torch.ones(2, 2), alpha=3).tolist() == [[10.0, 21.0], [12.0, 23.0]]
    assert x.mul_(0.5).tolist() == [[5.0, 10.5], [6.0, 11.5]]
    assert x.div_(torch.tensor([5.0, 0.5])).tolist() == [[1.0, 21.0], [1.2000000476837158, 23.0]]
    assert x._version == v + 5
    w = torch.ones(2, requires_grad=True)
    y = (w * 3).div_(2)   # recorded: DivBackward0 over MulBackward0
    assert y.grad_fn.name() == "DivBackward0" and y._version == 1
    y.sum().backward()
    assert w.grad.tolist() == [1.5, 1.5]
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place operation"):
        w.mul_(2)


def test_flatten_joins_the_dims_from_start_to_end():
    x = torch.arange(24).view(2, 3, 4)
    assert x.flatten().shape == (24,) and x.flatten().tolist() == list(range(24))
    assert x.flatten(1).shape == (2, 12) and torch.flatten(x, 0, 1).shape == (6, 4)
    assert x.flatten(-2, -1).shape == (2, 12) and torch.tensor(5.0).flatten().shape == (1,)
    with pytest.raises(RuntimeError, match="flatten\\(\\) has invalid args: start_dim cannot come after end_dim"):
        x.flatten(2, 1)
    with pytest.raises(IndexError, match="Dimension out of range \\(expected to be in range of \\[-3, 2\\], but got 3\\)"):
        x.flatten(3)


def test_comparisons_give_bool_tensors_with_pytorchs_promotion_and_printing():
    a = torch.tensor([1.0, 2.0, 3.0])
    assert (a == 2).dtype == torch.bool and (a == 2).tolist() == [False, True, False]
    assert (a != 2).tolist() == [True, False, True] and (a < 2).tolist() == [True, False, False]
    assert (a <= 2).tolist() == [True, True, False] and (2 < a).tolist() == [False, False, True]
    assert (a >= torch.tensor([[3.0], [1.0]])).tolist() == [[False, False, True], [True, True, True]]
    assert a.eq(torch.tensor([1.0, 0.0, 3.0])).tolist() == [True, False, True] and torch.gt(a, 2.5).tolist() == [
        False, False, True]
    # an int64 tensor against a float compares in floating point (1 >= 1.5 is False), bools as 0/1
    assert (torch.tensor([1, 2]) >= 1.5).tolist() == [False, True]
    assert (torch.tensor([1.0]) == torch.tensor([1])).item() is True
    assert (torch.tensor([True, False]) == 1).tolist() == [True, False]
    assert repr(torch.tensor([1.0, 2.0, 3.0]) > 1.5) == "tensor([False,  True,  True])"
    assert repr(torch.tensor(True)) == "tensor(True)" and torch.tensor([True, False]).dtype == torch.bool
    assert torch.tensor([True, 1]).dtype == torch.int64 and torch.tensor([True, 1.5]).dtype == torch.float32
    w = torch.ones(2, requires_grad=True)
    assert not (w * 2 > 1).requires_grad
    # identity still works where Python needs it: `in`, dicts, and comparing with None
    assert a in [a] and {a: 1}[a] == 1 and (a == None) is False and (a != None) is True  # noqa: E711


def test_bool_tensors_count_convert_and_combine():
    b = torch.tensor([[True, False, True], [False, False, True]])
    assert b.sum().item() == 3 and b.sum().dtype == torch.int64 and b.sum(dim=1).tolist() == [2, 1]
    assert b.float().tolist() == [[1.0, 0.0, 1.0], [0.0, 0.0, 1.0]] and b.long().dtype == torch.int64
    assert (~b).tolist() == [[False, True, False], [True, True, False]]
    assert (b & torch.tensor([True, True, False])).tolist() == [[True, False, False], [False, False, False]]
    assert (b | False).tolist() == b.tolist() and (b ^ True).tolist() == (~b).tolist()
    assert b.any().item() is True and b.all().item() is False and b.any(dim=0).tolist() == [True, False, True]
    assert b.all(dim=1).tolist() == [False, False] and torch.tensor([0.0, 2.0]).any().item() is True
    assert torch.tensor([1.0, 0.5]).bool().tolist() == [True, True]
    if torch.tensor([2.0]) > 1:
        pass
    else:
        raise AssertionError("a one-element bool tensor is truthy")
    np.testing.assert_array_equal(b.numpy(), np.array([[True, False, True], [False, False, True]]))
    assert torch.from_numpy(np.array([True, False])).tolist() == [True, False]
    with pytest.raises(RuntimeError, match="mean\\(\\): could not infer output dtype. Input dtype must be either a "
                                           "floating point or complex dtype. Got: Bool"):
        b.mean()
    with pytest.raises(TypeError, match="~ \\(operator.invert\\) is only implemented on integer and Boolean-type"):
        ~torch.tensor([1.0])


def test_accuracy_idiom_argmax_and_max():
    logits = torch.tensor([[0.1, 2.0, -1.0], [3.0, 0.5, 0.2], [0.0, 0.1, 0.9], [1.0, 1.0, 0.0]])
    labels = torch.tensor([1, 0, 1, 0])
    pred = logits.argmax(dim=1)
    assert pred.tolist() == [1, 0, 2, 0]   # ties: the first maximum, as PyTorch
    assert (pred == labels).float().mean().item() == 0.75
    assert (pred == labels).sum().item() == 3
    assert logits.argmax().item() == 3 and torch.argmax(logits, 1, keepdim=True).shape == (4, 1)
    values, indices = logits.max(dim=1)
    close(values, [2.0, 3.0, 0.9, 1.0])
    assert indices.tolist() == [1, 0, 2, 0] and torch.max(logits).item() == 3.0
    assert torch.max(logits, 0).indices.tolist() == [1, 0, 2]


def test_zero_dim_tensors_as_pytorch_treats_them():
    # Scalar losses: PyTorch 1.13's values and texts (s.sum(0) is s; cat refuses them).
    s = torch.tensor(2.0)
    assert s.sum(0).item() == 2.0 and s.sum(-1).dim() == 0 and s.mean(0, keepdim=True).item() == 2.0
    with pytest.raises(RuntimeError, match=r"^zero-dimensional tensor \(at position 0\) cannot be concatenated$"):
        torch.cat([s, torch.tensor(1.0)])
    with pytest.raises(RuntimeError, match=r"^zero-dimensional tensor \(at position 1\) cannot be concatenated$"):
        torch.cat([torch.tensor([1.0]), s])
    w = torch.tensor(1.5, requires_grad=True)
    torch.nn.functional.log_softmax(w, dim=0).backward()
    assert w.grad.item() == 0.0
    with pytest.raises(IndexError, match=r"^Dimension out of range \(expected to be in range of \[-1, 0\], but got 1\)$"):
        s.sum(1)


def test_pytorchs_exception_types_from_the_engine():
    x = torch.zeros(2, 3)
    with pytest.raises(IndexError, match=r"^Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)$"):
        x.sum(2)
    with pytest.raises(IndexError, match=r"^Dimension out of range"):
        x.transpose(0, 2)
    with pytest.raises(IndexError, match=r"^max\(\): Expected reduction dim 0 to have non-zero size\.$"):
        torch.ones(0, 2).max(0)
    with pytest.raises(ValueError, match=r"^only one element tensors can be converted to Python scalars$"):
        torch.ones(3).item()
    F = torch.nn.functional
    with pytest.raises(IndexError, match=r"^Target 5 is out of bounds\.$"):
        F.cross_entropy(x, torch.tensor([0, 5]))
    with pytest.raises(ValueError, match=r"^Expected input batch_size \(2\) to match target batch_size \(1\)\.$"):
        F.cross_entropy(x, torch.tensor([0]))
    with pytest.raises(RuntimeError, match=r"^expected scalar type Long but found Float$"):
        F.cross_entropy(x, torch.tensor([0.0, 1.0]))
    # unbatched logits and a 0-dim target, as 1.13 takes them: log(3) for equal logits
    assert abs(F.cross_entropy(torch.zeros(3), torch.tensor(1)).item() - 1.0986123) < 1e-6
