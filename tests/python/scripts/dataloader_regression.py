# Linear regression over a DataLoader(TensorDataset, shuffle=True) with Adam and MSELoss.
import tinyddp as torch
from tinyddp import nn
from tinyddp.utils.data import DataLoader, TensorDataset

torch.manual_seed(1)
true_w = torch.tensor([[2.0], [-3.0]])
X = torch.randn(40, 2)
y = X @ true_w + 0.5 + 0.01 * torch.randn(40, 1)
ds = TensorDataset(X, y)
loader = DataLoader(ds, batch_size=8, shuffle=True)
print(len(ds), len(loader))
xb, yb = ds[3]
print(xb.shape, yb.shape, xb.dtype)

model = nn.Linear(2, 1)
opt = torch.optim.Adam(model.parameters(), lr=0.05)
loss_fn = nn.MSELoss()
for epoch in range(5):
    total = 0.0
    for i, (xb, yb) in enumerate(loader):
        opt.zero_grad()
        loss = loss_fn(model(xb), yb)
        loss.backward()
        opt.step()
        total += loss.item() * xb.shape[0]
    print(f"epoch {epoch}: {total / len(ds):.5f} batches {i + 1}")
print([round(v, 4) for v in model.weight.detach().view(-1).tolist()], round(model.bias.item(), 4))
print(model)
first = next(iter(loader))
print(type(first).__name__, len(first), first[0].shape)
