# Train a small classifier, then evaluate it the ways people do: under torch.inference_mode() and a @torch.no_grad()
# function, accuracy by argmax, top-k accuracy, a confusion matrix and per-class counts with bincount, precision
# and recall, torch.isin to pick a subset of classes, and the inference tensors' rules after the block.
import tinyddp as torch
import tinyddp.nn as nn
import tinyddp.nn.functional as F
from tinyddp.utils.data import DataLoader, TensorDataset, random_split

torch.manual_seed(0)
num_classes = 4
X = torch.randn(200, 8)
centers = torch.randn(num_classes, 8) * 2
y = torch.cdist(X, centers).argmin(dim=1)
print("class counts:", torch.bincount(y, minlength=num_classes).tolist())

train_set, val_set = random_split(TensorDataset(X, y), [160, 40], generator=torch.Generator().manual_seed(1))
train_loader = DataLoader(train_set, batch_size=32, shuffle=True)
val_loader = DataLoader(val_set, batch_size=16)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 32, bias=False)   # BatchNorm follows
        self.bn = nn.BatchNorm1d(32)
        self.fc2 = nn.Linear(32, num_classes)

    def forward(self, x):
        return self.fc2(F.relu(self.bn(self.fc1(x))))


model = Net()
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for epoch in range(5):
    model.train()
    for xb, yb in train_loader:
        opt.zero_grad()
        loss = F.cross_entropy(model(xb), yb)
        loss.backward()
        opt.step()
    print(f"epoch {epoch} train loss {loss.item():.4f}")


@torch.no_grad()
def evaluate(loader):
    model.eval()
    losses, correct, n = 0.0, 0, 0
    for xb, yb in loader:
        out = model(xb)
        losses += F.cross_entropy(out, yb, reduction="sum").item()
        correct += (out.argmax(1) == yb).sum().item()
        n += yb.numel()
    return losses / n, correct / n


val_loss, val_acc = evaluate(val_loader)
print(f"val loss {val_loss:.4f} val acc {val_acc:.4f} grad enabled {torch.is_grad_enabled()}")

model.eval()
with torch.inference_mode():
    logits = torch.cat([model(xb) for xb, _ in val_loader])
    targets = torch.cat([yb for _, yb in val_loader])
    probs = logits.softmax(dim=-1)
    preds = probs.argmax(dim=-1)
    top2 = probs.topk(2, dim=1).indices
    print("inference:", torch.is_inference_mode_enabled(), logits.is_inference(), logits.requires_grad)

print("top1", (preds == targets).float().mean().item())
print("top2", (top2 == targets.unsqueeze(1)).any(dim=1).float().mean().item())
confusion = torch.bincount(targets * num_classes + preds, minlength=num_classes ** 2).reshape(num_classes, num_classes)
print(confusion)
tp = confusion.diag().float()
precision = tp / confusion.sum(0).clamp(min=1)
recall = tp / confusion.sum(1).clamp(min=1)
print("precision", precision)
print("recall", recall)
f1 = 2 * precision * recall / (precision + recall + 1e-8)
print(f"macro f1 {f1.mean().item():.4f}")
mask = torch.isin(targets, torch.tensor([0, 2]))
print("classes 0 and 2:", mask.sum().item(), (preds[mask] == targets[mask]).float().mean().item())
print(torch.isin(preds, targets, invert=True).any().item())
print(probs[:3])
print(probs.is_inference(), probs.clone().is_inference(), (probs * 1).is_inference())
try:
    probs.mul_(2)
except RuntimeError as e:
    print("RuntimeError:", e)
try:
    logits.requires_grad_()
except RuntimeError as e:
    print("RuntimeError:", e)
safe = probs.clone()
safe.mul_(2)
print(f"{safe.sum().item():.4f}")   # 4 decimals: the logits come from a trained model (matmul rounding)
