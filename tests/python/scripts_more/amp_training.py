# Mixed-precision training written for a GPU and run on a CPU-only machine, as many tutorials are: the device is
# chosen by torch.cuda.is_available(), autocast and GradScaler are enabled and warn that CUDA is missing, the
# gradients are unscaled and clipped, the scaler's state is checkpointed, seeds and cudnn flags are set up front.
import random

import numpy as np

import tinyddp as torch
import tinyddp.nn as nn
from tinyddp.utils.data import DataLoader, TensorDataset


def seed_everything(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False


seed_everything(42)
print("torch", torch.__version__, "cuda available:", torch.cuda.is_available())
print("version >= 1.12:", torch.__version__ >= "1.12", "cuda:", torch.version.cuda)
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
print("device:", device, device.type)
use_amp = True

X = torch.randn(96, 10)
w_true = torch.randn(10, 1)
y = (X @ w_true > 0).float().squeeze(1).long()
loader = DataLoader(TensorDataset(X, y), batch_size=16, shuffle=True)

model = nn.Sequential(nn.Linear(10, 32), nn.GELU(), nn.Dropout(0.1), nn.Linear(32, 2)).to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
scaler = torch.cuda.amp.GradScaler(enabled=use_amp)
criterion = nn.CrossEntropyLoss()
print("scaler enabled:", scaler.is_enabled(), "scale:", scaler.get_scale())

for epoch in range(4):
    model.train()
    total, correct, running = 0, 0, 0.0
    for step, (xb, yb) in enumerate(loader):
        xb, yb = xb.to(device, non_blocking=True), yb.to(device, non_blocking=True)
        optimizer.zero_grad(set_to_none=True)
        with torch.cuda.amp.autocast(enabled=use_amp):
            logits = model(xb)
            loss = criterion(logits, yb)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
        scaler.step(optimizer)
        scaler.update()
        running += loss.item() * xb.size(0)
        total += xb.size(0)
        correct += (logits.argmax(dim=1) == yb).sum().item()
    print(f"epoch {epoch}: loss {running / total:.4f} acc {correct / total:.3f} "
          f"grad_norm {grad_norm.item():.4f} scale {scaler.get_scale()}")

with torch.autocast(device_type=device.type, enabled=False):
    print("autocast cpu enabled:", torch.is_autocast_cpu_enabled())
with torch.autocast(device_type="cuda", dtype=torch.float16):
    out = model(X[:3])
print(out.dtype, out.shape)

checkpoint = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "scaler": scaler.state_dict(),
              "epoch": 4}
print(sorted(checkpoint), checkpoint["scaler"])
scaler2 = torch.cuda.amp.GradScaler(enabled=False)
scaler2.load_state_dict(checkpoint["scaler"])
print(scaler2.state_dict(), scaler2.is_enabled())
