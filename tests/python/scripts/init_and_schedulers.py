# Weight init through model.apply, parameter counting, optimizer param groups and repr, schedulers (cosine,
# plateau, warmup via LambdaLR), early stopping on a validation loss.
import tinyddp as torch
import tinyddp.nn as nn


def init_weights(m):
    if isinstance(m, nn.Linear):
        nn.init.xavier_uniform_(m.weight)
        nn.init.zeros_(m.bias)


torch.manual_seed(2)
model = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 1))
model.apply(init_weights)
model[-1].weight.requires_grad_(False)
total = sum(p.numel() for p in model.parameters())
trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
print(total, trainable, [type(m).__name__ for m in model.modules()][:3])
print([name for name, _ in model.named_children()], f"{model[0].weight.abs().max().item():.6f}")
decay = [p for n, p in model.named_parameters() if n.endswith("weight") and p.requires_grad]
no_decay = [p for n, p in model.named_parameters() if n.endswith("bias")]
opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                        lr=0.01)
print(opt)
warmup = torch.optim.lr_scheduler.LambdaLR(opt, lambda step: min(1.0, (step + 1) / 3))
X, y = torch.randn(32, 3), torch.randn(32, 1)
Xv, yv = torch.randn(8, 3), torch.randn(8, 1)
best, bad = float("inf"), 0
for epoch in range(6):
    model.train()
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(X), y)
    loss.backward()
    opt.step()
    warmup.step()
    model.eval()
    with torch.no_grad():
        val = nn.functional.mse_loss(model(Xv), yv).item()
    if val < best - 1e-4:
        best, bad = val, 0
    else:
        bad += 1
    print(f"{epoch} {loss.item():.5f} {val:.5f} lr {opt.param_groups[0]['lr']:.5f} {opt.param_groups[1]['lr']:.5f}")
opt2 = torch.optim.SGD(model.parameters(), lr=0.1)
cosine = torch.optim.lr_scheduler.CosineAnnealingLR(opt2, T_max=4, eta_min=0.01)
plateau_opt = torch.optim.SGD(model.parameters(), lr=0.1)
plateau = torch.optim.lr_scheduler.ReduceLROnPlateau(plateau_opt, mode="min", factor=0.5, patience=1)
lrs = []
for step in range(5):
    opt2.step()
    cosine.step()
    plateau.step(1.0)
    lrs.append((round(cosine.get_last_lr()[0], 5), plateau_opt.param_groups[0]["lr"]))
print(lrs)
print(sorted(opt.state_dict()["state"].keys()), opt.state_dict()["param_groups"][0]["weight_decay"])
