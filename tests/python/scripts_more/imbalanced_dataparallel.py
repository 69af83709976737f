# An imbalanced classification set-up: a Dataset subclass returning dicts, class weights from bincount for the
# loss and for a WeightedRandomSampler, a custom collate_fn, the model wrapped in nn.DataParallel as multi-GPU
# code does (a plain wrapper without CUDA), its "module."-prefixed state_dict saved and loaded into a bare model.
import io

import tinyddp as torch
import tinyddp.nn as nn
from tinyddp.utils.data import DataLoader, Dataset, WeightedRandomSampler

torch.manual_seed(11)


class Tabular(Dataset):
    def __init__(self, n):
        self.x = torch.randn(n, 6)
        score = self.x[:, 0] * 2 + self.x[:, 1]
        self.y = (score > 1.2).long() + (score > 2.5).long()

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return {"features": self.x[i], "label": self.y[i]}


def collate(batch):
    return {"features": torch.stack([b["features"] for b in batch]),
            "label": torch.stack([b["label"] for b in batch])}


ds = Tabular(150)
counts = torch.bincount(ds.y, minlength=3)
print("counts", counts.tolist())
class_weights = counts.sum() / (len(counts) * counts.float())
print("class weights", class_weights)
sample_weights = class_weights[ds.y]
sampler = WeightedRandomSampler(sample_weights, num_samples=len(ds), replacement=True,
                                generator=torch.Generator().manual_seed(3))
loader = DataLoader(ds, batch_size=25, sampler=sampler, collate_fn=collate)
seen = torch.cat([b["label"] for b in loader])
print("sampled counts", torch.bincount(seen, minlength=3).tolist())

model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))
if torch.cuda.device_count() > 1:
    print("using", torch.cuda.device_count(), "GPUs")
model = nn.DataParallel(model)
print(model)
print(model.device_ids, isinstance(model, nn.Module), type(model.module).__name__)
criterion = nn.CrossEntropyLoss(weight=class_weights)
optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)
for epoch in range(4):
    total = 0.0
    for batch in loader:
        optimizer.zero_grad()
        loss = criterion(model(batch["features"]), batch["label"])
        loss.backward()
        optimizer.step()
        total += loss.item()
    print(f"epoch {epoch} weighted loss {total / len(loader):.4f}")

state = model.state_dict()
print(list(state)[:2])
buf = io.BytesIO()
torch.save(model.module.state_dict(), buf)
buf.seek(0)
bare = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))
print(bare.load_state_dict(torch.load(buf)))
try:
    bare.load_state_dict(state)
except RuntimeError as e:
    print(str(e).splitlines()[0])
with torch.no_grad():
    pred = bare(ds.x).argmax(1)
print("per-class recall", [round(((pred == c) & (ds.y == c)).sum().item() / max(counts[c].item(), 1), 3)
                           for c in range(3)])
