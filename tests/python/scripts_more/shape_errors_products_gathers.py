# The shape and dtype errors scripts hit most in products and gathers, with 1.13's texts: torch.mm / bmm / mv /
# dot / outer on the wrong ranks, matmul reaching dot, mv, mm or bmm (a batch folded into one matrix, broadcast
# batch dims, a transposed batch that goes to bmm), a float64 batch against a float32 model, einsum's sizes; and
# gather / scatter with indices out of range, negative, of other ranks or dtypes, or smaller than the input.
import tinyddp as torch


def attempt(label, fn):
    try:
        r = fn()
        print(label, tuple(r.shape), r.dtype, r.flatten()[:4].tolist())
    except Exception as e:   # noqa: BLE001  (the error is what is compared)
        print(label, type(e).__name__, e)


a, v, b3 = torch.ones(2, 3), torch.ones(3), torch.ones(5, 2, 3)
attempt("mm(a, v)", lambda: torch.mm(a, v))
attempt("mm(v, a)", lambda: torch.mm(v, a))
attempt("a.mm(4x2)", lambda: a.mm(torch.ones(4, 2)))
attempt("mm dtypes", lambda: torch.mm(a, torch.ones(3, 2, dtype=torch.float64)))
attempt("bmm 2-D", lambda: torch.bmm(a, a.t()))
attempt("bmm batch", lambda: torch.bmm(b3, torch.ones(4, 3, 2)))
attempt("bmm inner", lambda: torch.bmm(b3, torch.ones(5, 4, 2)))
attempt("bmm dtypes", lambda: torch.bmm(b3, torch.ones(5, 3, 2, dtype=torch.float64)))
attempt("mv", lambda: torch.mv(a, torch.ones(2)))
attempt("mv ranks", lambda: torch.mv(v, v))
attempt("dot sizes", lambda: torch.dot(v, torch.ones(2)))
attempt("dot ranks", lambda: torch.dot(a, a))
attempt("dot dtypes", lambda: torch.dot(v, torch.ones(3, dtype=torch.float64)))
attempt("outer", lambda: torch.outer(v, a))
attempt("matmul mv", lambda: torch.matmul(a, torch.ones(4)))
attempt("matmul row", lambda: torch.matmul(v, torch.ones(2, 4)))
attempt("matmul fold", lambda: torch.matmul(b3, torch.ones(4, 2)))
attempt("matmul fold mv", lambda: b3 @ torch.ones(4))
attempt("matmul fold right", lambda: torch.ones(3) @ torch.ones(4, 2, 5))
attempt("matmul broadcast", lambda: torch.matmul(torch.ones(2, 2, 3), torch.ones(3, 4, 5)))
attempt("matmul bmm", lambda: torch.matmul(torch.ones(1, 2, 3), torch.ones(2, 4, 5)))
attempt("matmul transposed batch", lambda: torch.ones(3, 2, 4).permute(0, 2, 1) @ torch.ones(3, 3))
attempt("matmul transposed ok", lambda: torch.ones(3, 2, 4).permute(0, 2, 1) @ torch.ones(2, 3))
attempt("@ dtypes", lambda: torch.ones(2, 3, dtype=torch.float64) @ torch.ones(3, 2))
attempt("@ 0-d", lambda: torch.tensor(2.) @ a)
attempt("@ ok", lambda: torch.ones(4, 1, 2, 3) @ torch.ones(5, 3, 2))

model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 1))
attempt("float64 batch", lambda: model(torch.ones(8, 3, dtype=torch.float64)))
attempt("wrong features", lambda: model(torch.ones(8, 5)))

attempt("einsum j", lambda: torch.einsum("ij,jk->ik", a, torch.ones(2, 2)))
attempt("einsum batch", lambda: torch.einsum("bij,bjk->bik", torch.ones(2, 2, 3), torch.ones(3, 3, 2)))
attempt("einsum ellipsis", lambda: torch.einsum("...ij,...jk", torch.ones(5, 2, 2, 3), torch.ones(4, 3, 2)))

src = torch.arange(10.).reshape(2, 5)
attempt("gather past the end", lambda: torch.gather(src, 1, torch.tensor([[0, 7]])))
attempt("gather negative", lambda: torch.gather(src, 1, torch.tensor([[0, -1]])))
attempt("gather dim 0 past", lambda: torch.gather(src, 0, torch.tensor([[2, 0]])))
attempt("gather ranks", lambda: torch.gather(src, 1, torch.tensor([0, 1])))
attempt("gather float index", lambda: torch.gather(src, 1, torch.tensor([[0., 1.]])))
attempt("gather larger index", lambda: torch.gather(src, 1, torch.tensor([[0, 1], [1, 1], [2, 2]])))
attempt("gather smaller index", lambda: torch.gather(src, 0, torch.tensor([[1], [0]])))
attempt("gather smaller rows", lambda: torch.gather(src, 1, torch.tensor([[4, 3, 2]])))
attempt("gather empty", lambda: torch.gather(src, 1, torch.zeros(3, 0, dtype=torch.long)))
attempt("take_along_dim past", lambda: torch.take_along_dim(src, torch.tensor([[7]]), 1))
attempt("scatter negative", lambda: src.scatter(1, torch.tensor([[0, -1]]), 1.))
attempt("scatter past", lambda: src.scatter(0, torch.tensor([[2, 0]]), 1.))
attempt("scatter_add negative", lambda: src.scatter_add(1, torch.tensor([[0, -1]]), torch.ones(1, 2)))
attempt("scatter ok", lambda: torch.zeros(2, 5).scatter_(1, torch.tensor([[4], [0]]), 1.))
w = torch.arange(6., requires_grad=True)
torch.gather(w.reshape(2, 3) * 2, 1, torch.tensor([[2], [0]])).sum().backward()
print("gather grad", w.grad.tolist())
