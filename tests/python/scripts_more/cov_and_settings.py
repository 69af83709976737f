# torch.cov and corrcoef (frequency and analytic weights, correction, their checks and warning, gradients) and
# set/get_float32_matmul_precision, as 1.13 answers them.
import tinyddp as torch


def attempt(label, fn):
    try:
        print(label, fn())
    except Exception as e:
        print(label, type(e).__name__, e)
print(torch.get_float32_matmul_precision())
torch.set_float32_matmul_precision('high'); print(torch.get_float32_matmul_precision())
torch.set_float32_matmul_precision('medium'); print(torch.get_float32_matmul_precision())
attempt("int", lambda: torch.set_float32_matmul_precision(3))
x = torch.tensor([[0., 1., 2.], [2., 1., 0.5], [1., -1., 3.]])
print(torch.cov(x), torch.cov(x, correction=0), torch.corrcoef(x), torch.cov(x[0]), x.cov(), x.corrcoef())
print(torch.cov(x, fweights=torch.tensor([1, 2, 1]), aweights=torch.tensor([0.5, 1., 2.])))
print(torch.cov(x, fweights=torch.tensor([1, 2, 1])), torch.cov(x, aweights=torch.tensor([0.5, 1., 2.]), correction=2))
xg = x.clone().requires_grad_(); c = torch.cov(xg); print(c.grad_fn.name())
r = torch.corrcoef(xg); print(r.grad_fn.name()); r.sum().backward(); print(xg.grad)
print(torch.corrcoef(torch.tensor([1., 2., 3.])), torch.corrcoef(torch.tensor([1., 1.])))
attempt("3d", lambda: torch.cov(torch.ones(2, 2, 2)))
attempt("bool", lambda: torch.cov(torch.ones(2, 2, dtype=torch.bool)))
attempt("fw float", lambda: torch.cov(x, fweights=torch.ones(3)))
attempt("aw int", lambda: torch.cov(x, aweights=torch.ones(3, dtype=torch.long)))
attempt("fw numel", lambda: torch.cov(x, fweights=torch.ones(2, dtype=torch.long)))
attempt("fw neg", lambda: torch.cov(x, fweights=torch.tensor([1, -1, 1])))
attempt("zero", lambda: torch.cov(x, fweights=torch.tensor([0, 0, 0])))
attempt("dof", lambda: torch.cov(torch.tensor([[1., 2.]]), correction=2))
attempt("long input", lambda: torch.cov(torch.tensor([[1, 2, 4], [0, 1, 1]])))
