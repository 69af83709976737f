# Training-loop code around 0-dim tensors and empty lists: losses accumulated from torch.tensor(0.), .item() and
# float() of scalars, max/argmax/sort/topk of a 0-dim tensor, torch.cat / torch.stack of nothing caught, per-sample
# losses summed over an empty selection, and reductions with dtype= and axis=.
import tinyddp as torch
import tinyddp.nn.functional as F

w = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
data = [torch.tensor([1.0, 2.0, 3.0]), torch.tensor([0.0, -1.0, 0.5]), torch.tensor([2.0, 2.0, 2.0])]
targets = [torch.tensor(1.5), torch.tensor(-0.5), torch.tensor(4.0)]

total = torch.tensor(0.)
losses = []
for xb, tb in zip(data, targets):
    pred = (w * xb).sum()
    loss = F.mse_loss(pred, tb)
    losses.append(loss)
    total = total + loss
print("total", total, total.item(), float(total), total.dim(), total.shape)
stacked = torch.stack(losses)
print("stacked", stacked, stacked.max(), stacked.argmax(), stacked.mean(dim=0, keepdim=True))
total.backward()
print("grad", w.grad)

s = torch.tensor(3.25)
print(s.max(), s.min(), s.argmax(), s.max(0), s.sort(), s.topk(1), s.cumsum(0), s.std(), s.norm())
print(s.sum(0), s.sum(-1, keepdim=True), s.mean(dtype=torch.float64), s.unsqueeze(0), s.flatten(), s.repeat(3))
print(int(torch.tensor(7.9)), bool(torch.tensor(0.0)), torch.tensor([[2.5]]).item())

for make in (lambda: torch.cat([]), lambda: torch.stack([]), lambda: torch.cat([s, s]),
             lambda: torch.tensor([]).max(), lambda: torch.zeros(3, 0).argmax(), lambda: s.sum(1),
             lambda: torch.tensor(2).float().mean(2), lambda: torch.zeros(2, 3).sum(dim=(0, -2))):
    try:
        print(make())
    except (RuntimeError, IndexError) as e:
        print(type(e).__name__ + ":", e)

per_sample = torch.tensor([0.5, 1.5, 0.25, 2.0])
selected = per_sample[per_sample > 10]
print("selected", selected, selected.sum(), selected.mean(), selected.numel(), selected.shape)
print("sum dtype", torch.tensor([1, 2, 3]).sum(dtype=torch.float32), torch.tensor([True, True]).sum())
m = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
print(m.sum(axis=0), m.mean(axis=1, keepdims=True), torch.max(m, axis=1), m.std(axis=0))
big = torch.tensor([2 ** 62, 2 ** 62])
print("int64 wraps", big.sum(), big.cumsum(0), big.prod())
