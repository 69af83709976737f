# Checkpoint and resume: torch.save of the model's, optimizer's and scheduler's state dicts mid-run, a fresh
# model/optimizer/scheduler loaded from the file, and the run continued; it must print what the uninterrupted
# run prints. Also copy.deepcopy of a model (an EMA-style copy) and torch.load(map_location=..., weights_only=True).
import copy
import io
import os
import tempfile

import tinyddp as torch
import tinyddp.nn as nn


def make():
    torch.manual_seed(3)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))
    opt = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    return model, opt, sched


def step(model, opt, sched, x, y):
    opt.zero_grad()
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    sched.step()
    return loss.item()


torch.manual_seed(0)
x, y = torch.randn(16, 4), torch.randint(0, 2, (16,))

model, opt, sched = make()
straight = [step(model, opt, sched, x, y) for _ in range(6)]
print("straight", " ".join(f"{v:.6f}" for v in straight))

model, opt, sched = make()
first = [step(model, opt, sched, x, y) for _ in range(3)]
with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "ckpt.pt")
    torch.save({"model": model.state_dict(), "optimizer": opt.state_dict(), "scheduler": sched.state_dict(),
                "epoch": 3, "note": "mid-run"}, path)
    ckpt = torch.load(path, map_location="cpu")
print(sorted(ckpt), ckpt["epoch"], ckpt["note"], list(ckpt["model"].keys()))
print(ckpt["optimizer"]["param_groups"][0]["lr"], ckpt["scheduler"]["last_epoch"])
model, opt, sched = make()
model.load_state_dict(ckpt["model"])
opt.load_state_dict(ckpt["optimizer"])
sched.load_state_dict(ckpt["scheduler"])
second = [step(model, opt, sched, x, y) for _ in range(3)]
print("resumed ", " ".join(f"{v:.6f}" for v in first + second))
print("same as straight:", first + second == straight)

ema = copy.deepcopy(model)
with torch.no_grad():
    for p_ema, p in zip(ema.parameters(), model.parameters()):
        p_ema.mul_(0.9).add_(p, alpha=0.1)
print("ema is a copy:", all(a is not b for a, b in zip(ema.parameters(), model.parameters())))
print("ema equal:", all(torch.equal(a, b) for a, b in zip(ema.parameters(), model.parameters())))

buf = io.BytesIO()
torch.save(model.state_dict(), buf)
buf.seek(0)
weights = torch.load(buf, weights_only=True)
print(type(weights).__name__, [tuple(v.shape) for v in weights.values()])
print(f"{weights['2.bias'].sum().item():.6f}")
