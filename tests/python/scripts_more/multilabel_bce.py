# Multi-label classification with imbalanced labels: BCEWithLogitsLoss with pos_weight computed from label
# frequencies (and per-sample weights), BCELoss with a weight on sigmoid outputs, the reductions, thresholded
# predictions and per-label precision / recall / F1, a layer initialised with nn.init.sparse_ and orthogonal_,
# torch.full with bool / int / float fill values, and a Gram matrix written with .mT.
import tinyddp as torch
import tinyddp.nn as nn
import tinyddp.nn.functional as F

torch.manual_seed(0)
n, d, k = 64, 10, 4
X = torch.randn(n, d)
W_true = torch.randn(d, k)
Y = ((X @ W_true) > torch.tensor([0.5, 1.5, 2.5, 3.0])).float()
pos = Y.sum(0)
print("positives per label:", pos.tolist())
pos_weight = (n - pos) / pos.clamp(min=1)
print("pos_weight:", pos_weight)

torch.manual_seed(1)
model = nn.Sequential(nn.Linear(d, 16), nn.ReLU(), nn.Linear(16, k))
nn.init.sparse_(model[0].weight, sparsity=0.3, std=0.1)
nn.init.orthogonal_(model[2].weight)
print("zeros per column:", (model[0].weight == 0).sum(0).tolist())
w2 = model[2].weight.detach()
print("orthogonal rows:", torch.allclose(w2 @ w2.mT, torch.eye(k), atol=1e-5))

criterion = nn.BCEWithLogitsLoss(pos_weight=pos_weight)
print(criterion, list(dict(criterion.named_buffers()).keys()))
opt = torch.optim.Adam(model.parameters(), lr=0.02)
for epoch in range(30):
    opt.zero_grad()
    logits = model(X)
    loss = criterion(logits, Y)
    loss.backward()
    opt.step()
    if epoch % 6 == 0:
        print(f"epoch {epoch}: loss {loss.item():.4f}")

with torch.no_grad():
    logits = model(X)
    probs = torch.sigmoid(logits)
    sample_w = torch.linspace(0.5, 1.5, n).unsqueeze(1)
    print("weighted logits loss: %.4f" % F.binary_cross_entropy_with_logits(logits, Y, weight=sample_w,
                                                                          pos_weight=pos_weight).item())
    print("per-label loss:", F.binary_cross_entropy_with_logits(logits, Y, pos_weight=pos_weight,
                                                               reduction="none").mean(0))
    print("sum loss: %.3f" % F.binary_cross_entropy_with_logits(logits, Y, reduction="sum").item())
    print("BCELoss weighted: %.4f" % nn.BCELoss(weight=torch.tensor([1.0, 2.0, 3.0, 4.0]))(probs, Y).item())
    print("BCE vs logits: %.5f %.5f" % (F.binary_cross_entropy(probs, Y).item(),
                                        F.binary_cross_entropy_with_logits(logits, Y).item()))
    pred = probs > 0.5
    tp = (pred & (Y == 1)).sum(0).float()
    fp = (pred & (Y == 0)).sum(0).float()
    fn = (~pred & (Y == 1)).sum(0).float()
    precision = tp / (tp + fp).clamp(min=1)
    recall = tp / (tp + fn).clamp(min=1)
    f1 = 2 * precision * recall / (precision + recall).clamp(min=1e-8)
    print("precision:", precision)
    print("recall:", recall)
    print("f1:", f1, "macro %.4f" % f1.mean().item())
    print("exact match: %.4f" % (pred == Y.bool()).all(dim=1).float().mean().item())

x = torch.randn(3, 2, 4, requires_grad=True)
gram = x @ x.mT
gram.diagonal(dim1=-2, dim2=-1).sum().backward()
print("gram:", tuple(gram.shape), gram.grad_fn.name(), torch.allclose(x.grad, 2 * x))
print(torch.full((2, 2), True), torch.full((3,), 7), torch.full((2,), -1.5), torch.full((1,), False).dtype)
mask = torch.full((4,), True)
mask[1] = False
print("masked mean: %.4f" % X[:4, 0][mask].mean().item())
try:
    torch.ones(3).mT
except RuntimeError as e:
    print("RuntimeError:", e)
try:
    F.binary_cross_entropy_with_logits(logits, Y[:, :2])
except ValueError as e:
    print("ValueError:", e)
