# Python and NumPy numbers where a script expects torch to take them: Python's float, int and bool as dtypes
# (x.to(float), dtype=int, sum(dtype=float)), a one-element integer tensor as a list index or a range's bound
# (labels[pred.argmax()]), NumPy scalars and integers on either side of an op and as sizes and dims
# (view(-1, np.prod(...))), arange's dtype, size and float32 rounding (arange(-1, 1, 0.1)[10] is not 0), and
# the errors for a float size, a bool arange and a factory's integer tensor that requires grad.
import numpy as np

import tinyddp as torch


def attempt(label, fn):
    try:
        print(label, fn())
    except Exception as e:   # noqa: BLE001  (the error is what is compared)
        print(label, type(e).__name__, e)


x = torch.tensor([1.5, 2.0])
attempt("to(float)", lambda: x.to(float).dtype)
attempt("to(int)", lambda: x.to(int))
attempt("to(dtype=bool)", lambda: x.to(dtype=bool))
attempt("tensor(dtype=float)", lambda: torch.tensor([1, 2], dtype=float))
attempt("zeros(dtype=int)", lambda: torch.zeros(2, dtype=int))
attempt("sum(dtype=float)", lambda: x.sum(dtype=float))
attempt("cumsum(dtype=float)", lambda: x.cumsum(0, dtype=float))
attempt("Linear.to(float)", lambda: torch.nn.Linear(2, 2).to(float).weight.dtype)

classes = ["cat", "dog", "bird"]
logits = torch.tensor([[0.1, 2.0, -1.0], [3.0, 0.0, 0.5]])
attempt("index by argmax", lambda: [classes[p] for p in logits.argmax(dim=1)])
attempt("range(tensor)", lambda: list(range(torch.tensor(3))))
attempt("index by bool", lambda: classes[torch.tensor(True)])
attempt("index by float", lambda: classes[torch.tensor(1.0)])
attempt("index by two", lambda: classes[torch.tensor([0, 1])])
attempt("randperm order", lambda: [classes[i] for i in torch.randperm(3, generator=torch.Generator().manual_seed(0))])

w = torch.tensor([1.0, 2.0], requires_grad=True)
attempt("np.float64 * t", lambda: np.float64(0.5) * w)
attempt("np.int64 + t", lambda: np.int64(2) + x)
attempt("np.float32 - t", lambda: np.float32(1.0) - x)
attempt("t == ndarray", lambda: x == np.array([1.5, 3.0]))

feats = torch.arange(24.).reshape(2, 3, 4)
n = np.int64(3)
attempt("zeros(np.int64)", lambda: torch.zeros(n))
attempt("randn(np.int64, 2)", lambda: torch.randn(n, 2).shape)
attempt("view(-1, np.prod)", lambda: feats.view(-1, np.prod(feats.shape[1:])).shape)
attempt("sum(np dim)", lambda: feats.sum(np.int64(1)))
attempt("mean(np dim)", lambda: feats.mean(np.int64(2)))
attempt("permute(np)", lambda: feats.permute(np.int64(2), 0, 1).shape)
attempt("new_zeros(np)", lambda: feats.new_zeros(n).shape)
attempt("zeros(tensor)", lambda: torch.zeros(torch.tensor(2), 3).shape)
attempt("zeros(2.5)", lambda: torch.zeros(2.5))
attempt("ones(2, 2.5)", lambda: torch.ones(2, 2.5))
attempt("randn((2, 2.5))", lambda: torch.randn((2, 2.5)))
attempt("empty('a')", lambda: torch.empty("a"))

attempt("arange(np.int64)", lambda: torch.arange(np.int64(3)))
attempt("arange(tensor)", lambda: torch.arange(torch.tensor(3)))
attempt("arange(float tensor)", lambda: torch.arange(torch.tensor(3.)))
attempt("arange(True)", lambda: torch.arange(True))
attempt("arange(end=)", lambda: torch.arange(end=4))
attempt("arange(-1, 1, 0.1)", lambda: torch.arange(-1, 1, 0.1))
attempt("arange(-1, 1, 0.1)[10]", lambda: torch.arange(-1, 1, 0.1)[10].item())
attempt("arange f64", lambda: torch.arange(-5.2, 3.3, 0.413, dtype=torch.float64).tolist())
attempt("arange 0.07", lambda: torch.arange(0.3, 7.1, 0.07).tolist()[-20:])
attempt("arange long 2.5", lambda: torch.arange(2.5, dtype=torch.long))
attempt("arange long 1.5 step", lambda: torch.arange(0, 5, 1.5, dtype=torch.long))
attempt("arange long 0.5 step", lambda: torch.arange(0, 3, 0.5, dtype=torch.long))
attempt("arange bool", lambda: torch.arange(0, 3, dtype=torch.bool))
attempt("arange inf", lambda: torch.arange(float("inf")))
attempt("arange wrong sign", lambda: torch.arange(3, 0))
attempt("arange str", lambda: torch.arange("a"))
attempt("arange 1-d tensor", lambda: torch.arange(torch.tensor([3])))
attempt("arange overflow", lambda: torch.arange(0, 1, 1e-19))
attempt("arange requires_grad long", lambda: torch.arange(1, 4, requires_grad=True))
attempt("arange requires_grad", lambda: torch.arange(0., 1., 0.3, requires_grad=True))
attempt("linspace requires_grad long", lambda: torch.linspace(0, 1, 3, dtype=torch.long, requires_grad=True))
attempt("Parameter(long)", lambda: torch.nn.Parameter(torch.tensor([1])))
attempt("requires_grad_ long", lambda: torch.tensor([1]).requires_grad_())
