# Tensor utilities a training script reaches for: one-hot targets and label smoothing with scatter, per-class
# sums with scatter_add / index_add_, an einsum attention score, a meshgrid of pixel coordinates, nearest
# neighbours with cdist, robust statistics (median, quantile, prod, cumprod), diagonals and stacks.
import tinyddp as torch

torch.manual_seed(0)
labels = torch.tensor([2, 0, 1, 2])
one_hot = torch.zeros(4, 3).scatter(1, labels.unsqueeze(1), 1.0)
print(one_hot)
smooth = torch.full((4, 3), 0.1 / 2).scatter_(1, labels.unsqueeze(1), 0.9)
print(smooth, smooth.sum(1))

features = torch.randn(4, 2)
sums = torch.zeros(3, 2).index_add_(0, labels, features)
counts = torch.zeros(3).scatter_add_(0, labels, torch.ones(4))
print(sums / counts.unsqueeze(1))
print(torch.zeros(3, 2).scatter_add(0, labels.unsqueeze(1).expand(4, 2), features))

q = torch.randn(2, 3, 4)
k = torch.randn(2, 5, 4)
scores = torch.einsum("bqd,bkd->bqk", q, k) / 2.0
print(scores.shape, torch.allclose(scores, q @ k.transpose(1, 2) / 2.0))
print(torch.einsum("bij->bj", scores).round(decimals=3))

ys, xs = torch.meshgrid(torch.arange(3), torch.arange(4), indexing="ij")
print(torch.stack([ys, xs], -1).reshape(-1, 2)[:5])
grid_x, grid_y = torch.meshgrid(torch.linspace(0, 1, 3), torch.linspace(0, 1, 2), indexing="xy")
print(grid_x, grid_y)

points = torch.randn(6, 2)
centers = torch.tensor([[0.0, 0.0], [1.0, 1.0]])
d = torch.cdist(points, centers)
print(d.argmin(1), d.min(1).values.round(decimals=4))

values = torch.tensor([[3.0, 1.0, 4.0, 1.5], [5.0, 9.0, 2.0, 6.0]])
print(torch.median(values), values.median(dim=1))
print(torch.quantile(values, torch.tensor([0.25, 0.75]), dim=1))
print(values.prod(1), torch.cumprod(values, 1), values.prod())
print(torch.diag(values[:, :2]), torch.trace(values[:, :2]), torch.diag(torch.tensor([1.0, 2.0])))
print(torch.hstack([values, values]).shape, torch.vstack([values, values]).shape, torch.tile(labels, (2,)))
print(torch.repeat_interleave(labels, 2), labels.repeat_interleave(torch.tensor([1, 0, 2, 1])))
print(torch.all(values > 0), torch.any(values > 8, dim=1), torch.masked_fill(values, values > 4, 0.0))
print(torch.log2(torch.tensor([1.0, 8.0])), torch.log10(torch.tensor([100.0])), torch.atan2(torch.ones(1), torch.ones(1)))
x = torch.tensor([0.5, -0.25], requires_grad=True)
y = (torch.tan(x) + torch.asin(x) + torch.cosh(x) + torch.prod(x * 2)).sum()
y.backward()
print(x.grad)
