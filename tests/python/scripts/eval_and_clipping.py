# model.train()/eval() with Dropout and BatchNorm, torch.no_grad evaluation, gradient clipping.
import tinyddp as torch
import tinyddp.nn as nn

torch.manual_seed(5)
model = nn.Sequential(nn.Linear(6, 12), nn.BatchNorm1d(12), nn.ReLU(), nn.Dropout(0.3), nn.Linear(12, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.2)
X, y = torch.randn(20, 6), torch.randint(0, 2, (20,))
for step in range(3):
    model.train()
    opt.zero_grad()
    loss = nn.functional.cross_entropy(model(X), y)
    loss.backward()
    total = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.5)
    opt.step()
    print(f"{step} {loss.item():.5f} norm {total.item():.5f}")
print(model.training, model[3].training)
model.eval()
print(model.training, model[3].training)
with torch.no_grad():
    a = model(X)
    b = model(X)
    print(torch.equal(a, b), a.requires_grad, torch.is_grad_enabled())
print(torch.is_grad_enabled())
print(model[1].running_mean.shape, model[1].num_batches_tracked.item())
print([f"{v:.4f}" for v in model[1].running_var[:4].tolist()])
acc = (a.argmax(1) == y).float().mean()
print(f"{acc.item():.4f}")
torch.nn.utils.clip_grad_value_(model.parameters(), 0.01)
print(max(p.grad.abs().max().item() for p in model.parameters()) <= 0.01)
