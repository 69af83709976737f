# A regression run with the bookkeeping of a real project: thread and determinism settings, a train/validation
# split, ReduceLROnPlateau, early stopping on the validation loss with a patience, the best model kept as a
# checkpoint (torch.save to a buffer, torch.load back), and a final report with set_printoptions.
import copy
import io

import tinyddp as torch
import tinyddp.nn as nn
from tinyddp.utils.data import DataLoader, TensorDataset, random_split

torch.set_num_threads(1)
torch.use_deterministic_algorithms(True)
print("threads", torch.get_num_threads(), "deterministic", torch.are_deterministic_algorithms_enabled(),
      "default dtype", torch.get_default_dtype())
torch.manual_seed(7)

X = torch.rand(120, 3) * 4 - 2
y = torch.sin(X[:, :1]) + 0.5 * X[:, 1:2] ** 2 - X[:, 2:3] + 0.05 * torch.randn(120, 1)
train_ds, val_ds = random_split(TensorDataset(X, y), [0.75, 0.25], generator=torch.Generator().manual_seed(0))
print(len(train_ds), len(val_ds))
train_loader = DataLoader(train_ds, batch_size=30, shuffle=True, drop_last=True)
val_loader = DataLoader(val_ds, batch_size=30)

model = nn.Sequential(nn.Linear(3, 24), nn.SiLU(), nn.Linear(24, 24), nn.SiLU(), nn.Linear(24, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode="min", factor=0.5, patience=2)
loss_fn = nn.MSELoss()

best_loss, best_state, best_epoch, patience, bad_epochs = float("inf"), None, -1, 4, 0
buffer = io.BytesIO()
for epoch in range(40):
    model.train()
    for xb, yb in train_loader:
        optimizer.zero_grad()
        loss_fn(model(xb), yb).backward()
        optimizer.step()
    model.eval()
    with torch.inference_mode():
        val_loss = sum(loss_fn(model(xb), yb).item() * len(xb) for xb, yb in val_loader) / len(val_ds)
    scheduler.step(val_loss)
    lr = optimizer.param_groups[0]["lr"]
    if val_loss < best_loss - 1e-4:
        best_loss, best_epoch, bad_epochs = val_loss, epoch, 0
        best_state = copy.deepcopy(model.state_dict())
        buffer.seek(0)
        buffer.truncate()
        torch.save({"epoch": epoch, "model": model.state_dict(), "val_loss": val_loss}, buffer)
        marker = "*"
    else:
        bad_epochs += 1
        marker = ""
    print(f"epoch {epoch:2d} val {val_loss:.4f} lr {lr:.4g} {marker}")
    if bad_epochs >= patience:
        print(f"early stopping at epoch {epoch}, best epoch {best_epoch}")
        break

buffer.seek(0)
ckpt = torch.load(buffer)
print(sorted(ckpt), ckpt["epoch"], f"{ckpt['val_loss']:.4f}")
restored = nn.Sequential(nn.Linear(3, 24), nn.SiLU(), nn.Linear(24, 24), nn.SiLU(), nn.Linear(24, 1))
print(restored.load_state_dict(ckpt["model"]))
same = all(torch.equal(a, b) for a, b in zip(restored.state_dict().values(), best_state.values()))
print("restored equals best:", same)
torch.set_printoptions(precision=2, sci_mode=False)
with torch.no_grad():
    print(restored(X[:4]).squeeze(1), y[:4].squeeze(1))
torch.set_printoptions(profile="default")
print(restored[0].bias[:3])
torch.use_deterministic_algorithms(False)
