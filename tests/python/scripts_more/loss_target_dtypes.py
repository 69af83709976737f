# Targets of another dtype than the model's output, as they come from NumPy (float64) or label arrays (int64):
# 1.13's mse_loss and huber_loss compute a promoted value and fail in the backward ("Found dtype Double but
# expected Float"), binary_cross_entropy fails at once, binary_cross_entropy_with_logits refuses an integer
# target, kl_div integer inputs; l1, smooth_l1, soft_margin and the others promote and train. Then the fix users
# apply: the target converted with .float().
import numpy as np

import tinyddp as torch
import tinyddp.nn as nn
import tinyddp.nn.functional as F

losses = {"mse": F.mse_loss, "l1": F.l1_loss, "huber": F.huber_loss, "smooth_l1": F.smooth_l1_loss,
          "bce": F.binary_cross_entropy, "bce_logits": F.binary_cross_entropy_with_logits,
          "kl": lambda a, b, reduction: F.kl_div(a, b, reduction="batchmean"), "soft_margin": F.soft_margin_loss}
for target_dtype in (torch.float64, torch.int64, torch.float32):
    for reduction in ("mean", "none"):
        for name, loss_fn in losses.items():
            x = torch.tensor([0.2, 0.5, 0.7], requires_grad=True)
            y = torch.tensor([0, 1, 1], dtype=target_dtype)
            try:
                loss = loss_fn(x, y, reduction=reduction)
            except RuntimeError as e:
                print(name, reduction, target_dtype, "forward:", e)
                continue
            try:
                loss.sum().backward()
                print(name, reduction, target_dtype, loss.dtype, loss.grad_fn.name(), x.grad.dtype,
                      [f"{g:.4f}" for g in x.grad.tolist()])
            except RuntimeError as e:
                print(name, reduction, target_dtype, loss.dtype, loss.grad_fn.name(), "backward:", e)

x = torch.tensor([0.2, 0.5], dtype=torch.float64, requires_grad=True)
try:
    F.mse_loss(x, torch.tensor([0., 1.])).backward()
except RuntimeError as e:
    print("float64 input, float32 target:", e)

torch.manual_seed(0)
model = nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
features = np.linspace(-1, 1, 12).reshape(4, 3)
targets = features.sum(axis=1, keepdims=True)   # float64, as NumPy makes it
x, y = torch.from_numpy(features).float(), torch.from_numpy(targets)
loss = F.mse_loss(model(x), y)
print("loss", loss.dtype, f"{loss.item():.6f}")
try:
    loss.backward()
except RuntimeError as e:
    print("backward:", e)
for step in range(3):   # the fix: a float32 target
    opt.zero_grad()
    loss = F.mse_loss(model(x), y.float())
    loss.backward()
    opt.step()
    print(step, loss.dtype, f"{loss.item():.6f}", model.weight.grad.dtype)
