# An MLP classifier: nn.Sequential, CrossEntropyLoss, SGD with momentum, StepLR, accuracy by argmax.
import tinyddp as torch
import tinyddp.nn as nn

torch.manual_seed(0)
X = torch.randn(64, 4)
y = (X[:, 0] + X[:, 1] > 0).long() + (X[:, 2] > 0.5).long()

model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 3))
print(model)
print(sum(p.numel() for p in model.parameters()))
print(list(model.state_dict().keys()))
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=5, gamma=0.5)

for epoch in range(12):
    optimizer.zero_grad()
    logits = model(X)
    loss = criterion(logits, y)
    loss.backward()
    optimizer.step()
    scheduler.step()
    pred = logits.argmax(dim=1)
    correct = (pred == y).sum().item()
    acc = correct / y.size(0)
    print(f"epoch {epoch} loss {loss.item():.5f} acc {acc:.4f} lr {scheduler.get_last_lr()[0]:.4f}")

with torch.no_grad():
    out = model(X[:5])
    probs = torch.softmax(out, dim=1)
    print(probs.argmax(1).tolist(), y[:5].tolist())
    print(f"{probs.sum(dim=1).mean().item():.4f}")
print(loss.grad_fn.name(), loss.requires_grad, out.requires_grad)
print(type(y.size(0)).__name__, y.dtype, pred.dtype, logits.shape)
