# Small things scripts do with tensors, as 1.13 answers them: BCE of an input outside [0, 1]; random_(from, to)
# and random_(to) drawn as 1.13 draws them (the stream after them too); assigning a .grad of another dtype, size
# or type; cat/stack of one tensor; torch.tensor of a range, a dict, a set, None or a string; % and fmod by a
# Python float in the tensor's dtype; logical_not/and/or of numbers; and the texts of a negative size, eye(-1),
# an int64 overflow, a float index_select, unflatten's sizes and torch.Size of non-integers.
import tinyddp as torch
import tinyddp.nn.functional as F


def attempt(label, fn):
    try:
        print(label, fn())
    except Exception as e:   # noqa: BLE001  (the error is what is compared)
        print(label, type(e).__name__, e)


torch.manual_seed(0)
w = torch.ones(2, requires_grad=True)


def setgrad(v):
    w.grad = v
    return w.grad


attempt("bce range", lambda: F.binary_cross_entropy(torch.tensor([0.5, 1.5]), torch.tensor([0., 1.])))
attempt("bce nan", lambda: F.binary_cross_entropy(torch.tensor([0.5, float("nan")]), torch.tensor([0., 1.])))
attempt("bce target range", lambda: F.binary_cross_entropy(torch.tensor([0.5, 0.5]), torch.tensor([0., 2.])))
attempt("random_ from to", lambda: torch.empty(4).random_(0, 10))
attempt("random_ to", lambda: torch.empty(4).random_(5))
attempt("random_", lambda: torch.empty(3, dtype=torch.float64).random_(3, 7))
attempt("random_ long", lambda: torch.empty(4, dtype=torch.long).random_(-5, 5))
attempt("random_ bad", lambda: torch.empty(4).random_(5, 2))
attempt("after", lambda: torch.rand(2))
attempt("grad dtype", lambda: setgrad(torch.ones(2, dtype=torch.float64)))
attempt("grad shape", lambda: setgrad(torch.ones(3)))
attempt("grad ok", lambda: setgrad(torch.ones(2)))
attempt("grad none", lambda: setgrad(None))
attempt("cat tensor", lambda: torch.cat(torch.ones(2, 2)))
attempt("stack tensor", lambda: torch.stack(torch.ones(2, 2)))
attempt("tensor range", lambda: torch.tensor(range(4)))
attempt("tensor dict", lambda: torch.tensor({1: 2}))
attempt("tensor set", lambda: torch.tensor({1, 2}))
attempt("tensor str", lambda: torch.tensor("a"))
attempt("tensor tuple of tensors", lambda: torch.tensor((torch.tensor(1.), torch.tensor(2.))))
attempt("tensor list of 1d tensors", lambda: torch.tensor([torch.tensor([1.]), torch.tensor([2.])]))
attempt("tensor none", lambda: torch.tensor([None]))
attempt("rem", lambda: (torch.tensor([10.]) % 0.1).item())
attempt("rem2", lambda: (torch.tensor([1., 2.5, -3.7]) % 0.3).tolist())
attempt("fmod", lambda: torch.fmod(torch.tensor([10., -3.7]), 0.3).tolist())
attempt("rem t", lambda: torch.remainder(torch.tensor([10.]), torch.tensor([0.1])).item())
attempt("floordiv", lambda: (torch.tensor([10., -3.7]) // 0.3).tolist())
attempt("div", lambda: (torch.tensor([10., -3.7]) / 0.3).tolist())
attempt("mul", lambda: (torch.tensor([10., -3.7]) * 0.3).tolist())
attempt("add", lambda: (torch.tensor([10., -3.7]) + 0.3).tolist())
attempt("lnot int", lambda: torch.logical_not(torch.tensor([0, 2, 3])))
attempt("lnot float", lambda: torch.logical_not(torch.tensor([0., 2.])))
attempt("land int", lambda: torch.logical_and(torch.tensor([0, 2]), torch.tensor([1, 1])))
attempt("lor float", lambda: torch.logical_or(torch.tensor([0., 2.]), torch.tensor([0., 0.])))
attempt("zeros -1", lambda: torch.zeros(-1))
attempt("eye -1", lambda: torch.eye(-1))
attempt("tensor big", lambda: torch.tensor(2 ** 63))
attempt("index_select float", lambda: torch.ones(3).index_select(0, torch.tensor([0.])))
attempt("unflatten", lambda: torch.ones(2, 6).unflatten(1, (2, 2)))
attempt("Size float", lambda: torch.Size([2.5]))
attempt("Size tensor", lambda: torch.Size([torch.tensor(3)]))
attempt("unflatten -1 bad", lambda: torch.ones(2, 6).unflatten(1, (4, -1)))
attempt("unflatten -1 ok", lambda: torch.ones(2, 6).unflatten(1, (3, -1)).shape)
attempt("unflatten 0", lambda: torch.ones(2, 0).unflatten(1, (0, -1)))
attempt("unflatten two", lambda: torch.ones(2, 6).unflatten(1, (-1, -1)))
attempt("unflatten empty", lambda: torch.ones(2, 6).unflatten(1, ()))
attempt("eye m", lambda: torch.eye(2, -3))
attempt("ones neg", lambda: torch.ones(2, -3))
attempt("Size np", lambda: torch.Size([__import__("numpy").int64(3), 2]))
attempt("Size ok", lambda: (torch.Size([2, 3]), torch.Size(), torch.Size((4,)) + (1,)))
attempt("divmod", lambda: divmod(torch.tensor([1.5]), 2))
attempt("round(t, str)", lambda: round(torch.tensor([1.5]), "a"))
attempt("type", lambda: (type(torch.tensor([1.5])), torch.Tensor.__name__))
