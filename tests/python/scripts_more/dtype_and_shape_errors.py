# The errors of mixed dtypes and shapes that models and tensor code hit, with 1.13's texts: float64 data into a
# float32 Linear (with and without bias), convolution, LSTM, loss, BatchNorm (its CPU kernel's mixed-dtype texts)
# and LayerNorm; random draws into integer tensors; integer matmul (1.13 computes it); tensordot/inner/einsum/
# movedim/rot90/masked_select/glu shape mistakes.
import tinyddp as torch
import tinyddp.nn as nn
import tinyddp.nn.functional as F


def attempt(label, fn):
    try:
        print(label, fn())
    except Exception as e:
        print(label, type(e).__name__, str(e).splitlines()[0])


torch.manual_seed(0)
m = nn.Linear(3, 2)
for shape in [(4, 3), (3,), (2, 4, 3)]:
    attempt(f"linear {shape}", lambda: m(torch.ones(*shape, dtype=torch.float64)))
attempt("linear without bias", lambda: F.linear(torch.ones(2, 3, dtype=torch.float64), torch.ones(4, 3)))
attempt("matmul", lambda: torch.ones(2, 3) @ torch.ones(3, 2, dtype=torch.float64))
attempt("conv", lambda: nn.Conv2d(1, 1, 3)(torch.ones(1, 1, 5, 5, dtype=torch.float64)))
attempt("lstm", lambda: nn.LSTM(3, 4)(torch.ones(2, 1, 3, dtype=torch.float64)))
attempt("cross_entropy", lambda: F.cross_entropy(torch.ones(2, 3, dtype=torch.float64), torch.tensor([0, 1])))
attempt("linear int", lambda: m(torch.ones(4, 3, dtype=torch.int64)))
attempt("batch_norm", lambda: nn.BatchNorm1d(3)(torch.ones(4, 3, dtype=torch.float64)))
attempt("batch_norm eval", lambda: nn.BatchNorm1d(3).eval()(torch.ones(4, 3, dtype=torch.float64)))
attempt("batch_norm no affine", lambda: nn.BatchNorm1d(3, affine=False)(torch.ones(4, 3, dtype=torch.float64)))
attempt("batch_norm no stats", lambda: nn.BatchNorm1d(3, affine=False, track_running_stats=False)(
    torch.ones(4, 3, dtype=torch.float64)).dtype)
attempt("batch_norm float64 weight", lambda: F.batch_norm(torch.ones(4, 3), None, None,
                                                          torch.ones(3, dtype=torch.float64), training=True))
attempt("embedding float indices", lambda: nn.Embedding(5, 2)(torch.tensor([1.0, 2.0])))
attempt("mse mixed", lambda: F.mse_loss(torch.ones(2), torch.ones(2, dtype=torch.float64)))
attempt("mse int", lambda: F.mse_loss(torch.tensor([1]), torch.tensor([2])))
attempt("layer_norm", lambda: nn.LayerNorm(3)(torch.ones(2, 3, dtype=torch.float64)))

for expression in ["torch.randn(2, dtype=torch.int64)", "torch.rand(2, dtype=torch.int64)",
                   "torch.randn(2, dtype=torch.bool)", "torch.rand(2, dtype=torch.bool)",
                   "torch.randn_like(torch.ones(2, dtype=torch.long))", "torch.empty(2, dtype=torch.long).normal_()",
                   "torch.empty(2, dtype=torch.long).uniform_()"]:
    attempt(expression, lambda: eval(expression))

a = torch.tensor([[1, 2], [3, 4]])
attempt("int @", lambda: a @ a)
attempt("int matmul vec", lambda: torch.matmul(a, torch.tensor([1, -1])))
attempt("int vec vec", lambda: torch.tensor([1, 2]) @ torch.tensor([3, 4]))
attempt("int batched", lambda: torch.arange(8).reshape(2, 2, 2) @ a)
attempt("int mm", lambda: torch.mm(a, a))
attempt("int and float", lambda: a @ torch.ones(2, 2))
attempt("bool @", lambda: torch.tensor([[True]]) @ torch.tensor([[True]]))
attempt("int shapes", lambda: a @ torch.tensor([[1, 2, 3]]))
attempt("int overflow", lambda: torch.tensor([[2 ** 62]]) @ torch.tensor([[4]]))

x = torch.ones(2, 3)
attempt("inner", lambda: torch.inner(x, torch.ones(3, 4)))
attempt("tensordot", lambda: torch.tensordot(x, torch.ones(4, 3), dims=1))
attempt("tensordot lists", lambda: torch.tensordot(x, torch.ones(4, 3), dims=([1], [0])))
attempt("tensordot empty", lambda: torch.tensordot(torch.ones(2, 0), torch.ones(0, 3), dims=1))
attempt("einsum missing output", lambda: torch.einsum("ij->ik", x))
attempt("einsum repeated output", lambda: torch.einsum("ij->ii", x))
attempt("movedim repeated", lambda: torch.movedim(x, (0, 1), (0, 0)))
attempt("movedim repeated source", lambda: torch.movedim(x, (1, -1), (0, 1)))
attempt("rot90 1-D", lambda: torch.rot90(torch.ones(3)))
attempt("masked_select broadcast", lambda: x.masked_select(torch.tensor([True, False])))
attempt("glu dim", lambda: F.glu(torch.ones(4), 1))

# activations of integer and bool tensors: the kernels 1.13 dispatches over floating types refuse them
import warnings  # noqa: E402
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    for dtype in (torch.int64, torch.bool):
        x = torch.tensor([1, -2, 3]).to(dtype)
        for name in ["gelu", "silu", "elu", "mish", "softplus", "hardswish", "hardsigmoid", "relu6", "leaky_relu", "selu",
                     "celu", "softsign", "tanhshrink", "logsigmoid", "softshrink", "hardshrink", "hardtanh", "softmax",
                     "log_softmax", "threshold", "relu"]:
            fn = getattr(F, name)
            attempt(f"{name} {dtype}", lambda: fn(x, 0.5, 0.0) if name == "threshold" else
                    fn(x, dim=0) if name in ("softmax", "log_softmax") else fn(x))

for expression in ["torch.zeros(3).index_add_(0, torch.tensor([0, 2]), torch.ones(2, dtype=torch.float64))",
                   "torch.tensor([True]).dot(torch.tensor([False]))", "torch.tensor([1, 2]).dot(torch.tensor([3, 4]))",
                   "torch.mv(torch.tensor([[1, 2], [3, 4]]), torch.tensor([1, 1]))",
                   "torch.tensor([1, 2]).clamp_(0.5)", "torch.tensor([True]).clamp_(max=0.5)",
                   "torch.tensor([2]).pow_(0.5)", "torch.tensor([2]).pow_(2)",
                   "F.mse_loss(torch.tensor([True]), torch.tensor([1]))"]:
    attempt(expression, lambda: eval(expression))
