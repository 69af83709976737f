# Stochastic weight averaging: SGD with a CosineAnnealingLR, then SWALR and an AveragedModel from epoch 3,
# update_bn over the loader, and the averaged model's state and predictions.
import tinyddp as torch
import tinyddp.nn as nn
from tinyddp.optim.swa_utils import SWALR, AveragedModel, update_bn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 1))
swa_model = AveragedModel(model)
print(swa_model)
print(list(swa_model.state_dict().keys())[:3], swa_model.n_averaged)
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=10)
swa_sched = SWALR(opt, swa_lr=0.05, anneal_epochs=2, anneal_strategy="linear")
x = torch.randn(32, 4)
y = x.sum(1, keepdim=True) * 0.5
loader = [(x[i:i + 8], y[i:i + 8]) for i in range(0, 32, 8)]
for epoch in range(6):
    for xb, yb in loader:
        opt.zero_grad()
        loss = ((model(xb) - yb) ** 2).mean()
        loss.backward()
        opt.step()
    if epoch >= 3:
        swa_model.update_parameters(model)
        swa_sched.step()
    else:
        sched.step()
    print(f"epoch {epoch} loss {loss.item():.4f} lr {opt.param_groups[0]['lr']:.5f}")
print(int(swa_model.n_averaged), opt.param_groups[0]["swa_lr"])
update_bn(loader, swa_model)
bn = swa_model.module[1]
print(bn.momentum, int(bn.num_batches_tracked), [f"{v:.4f}" for v in bn.running_mean.tolist()[:3]])
swa_model.eval()
with torch.no_grad():
    print(f"{((swa_model(x) - y) ** 2).mean().item():.4f}")
ema = AveragedModel(model, avg_fn=lambda avg, cur, n: 0.9 * avg + 0.1 * cur)
ema.update_parameters(model)
ema.update_parameters(model)
print(int(ema.n_averaged), f"{ema.module[0].weight.sum().item():.4f}")
try:
    SWALR(opt, swa_lr=[0.1, 0.2])
except ValueError as e:
    print("ValueError:", e)
