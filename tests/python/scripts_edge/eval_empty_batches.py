# Evaluation code meeting the edges: a classifier whose weights start at zero (every logit ties), batches that
# turn out empty after filtering, masks selecting nothing, per-class metrics over classes that never occur,
# top-k accuracy with ties, and the mean of nothing printed as nan.
import tinyddp as torch
import tinyddp.nn as nn
import tinyddp.nn.functional as F

num_classes = 5
model = nn.Linear(4, num_classes)
nn.init.zeros_(model.weight)
nn.init.zeros_(model.bias)

x = torch.tensor([[0.5, -1.0, 2.0, 0.0], [1.5, 0.25, -0.5, 1.0], [0.0, 0.0, 1.0, -2.0],
                  [2.0, 1.0, 0.0, 0.5], [-1.0, 0.5, 0.5, 0.5], [0.25, 0.75, -1.5, 1.0]])
y = torch.tensor([1, 3, 3, 0, 1, 4])
keep = [torch.tensor([True, False, True, False, True, False]), torch.zeros(6, dtype=torch.bool),
        torch.tensor([False, True, False, True, False, True])]

with torch.no_grad():
    for step, mask in enumerate(keep):
        xb, yb = x[mask], y[mask]
        logits = model(xb)
        print(f"batch {step}: {tuple(xb.shape)} logits {tuple(logits.shape)}")
        pred = logits.argmax(dim=1)
        print("  pred", pred.tolist(), "max", logits.max(1).indices.tolist())
        top2 = logits.topk(2, dim=1).indices
        print("  top2", top2.tolist())
        correct = (pred == yb).float()
        print("  accuracy", correct.mean().item(), "correct", correct.sum().item(), "n", len(yb))
        print("  top2 hit", (top2 == yb.unsqueeze(1)).any(dim=1).float().mean())
        loss = F.cross_entropy(logits, yb)
        print("  loss", loss)
        probs = logits.softmax(dim=-1)
        print("  entropy", -(probs * probs.clamp_min(1e-12).log()).sum(-1).mean())

    logits = model(x)
    pred = logits.argmax(1)
    conf = torch.bincount(y * num_classes + pred, minlength=num_classes * num_classes).view(num_classes, -1)
    print(conf)
    tp = conf.diag()
    precision = tp / conf.sum(0)
    recall = tp / conf.sum(1)
    print("precision", precision)
    print("recall", recall)
    print("macro recall (nan ignored)", recall[~recall.isnan()].mean())
    rare = y == 2
    print("class 2 accuracy", (pred[rare] == y[rare]).float().mean())
    print("class 2 samples", x[rare].shape, x[rare].sum(0), x[rare].sum())
    try:
        print(x[rare].max())
    except RuntimeError as e:
        print("RuntimeError:", e)
    print("ranks", logits.argsort(dim=1, descending=True)[0].tolist())
    print("sorted", torch.sort(logits[0], descending=True))
