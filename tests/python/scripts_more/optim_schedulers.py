# Optimizers and schedulers past SGD/Adam: Adagrad (lr_decay, initial_accumulator_value), Adadelta, Adamax, NAdam,
# RAdam, ASGD and Rprop with their options, each trained a few steps and then resumed from its state_dict (the
# resumed run must match the uninterrupted one); the lr traces of OneCycleLR, CosineAnnealingWarmRestarts, CyclicLR
# (triangular2 and exp_range), MultiplicativeLR, LinearLR, ConstantLR, SequentialLR and ChainedScheduler, with
# get_last_lr(); a scheduler's state_dict round trip; add_param_group; and the warning for calling
# scheduler.step() before optimizer.step().
import warnings

import tinyddp as torch
import tinyddp.nn as nn
import tinyddp.nn.functional as F
from tinyddp.optim import lr_scheduler

torch.manual_seed(0)
X = torch.randn(32, 5)
w_true = torch.randn(5, 1)
Y = X @ w_true + 0.1 * torch.randn(32, 1)


def make_model():
    torch.manual_seed(1)
    return nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 1))


def train(model, opt, steps):
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = F.mse_loss(model(X), Y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


configs = [
    ("Adagrad", lambda p: torch.optim.Adagrad(p, lr=0.1, lr_decay=0.01, initial_accumulator_value=0.1,
                                              weight_decay=0.01)),
    ("Adadelta", lambda p: torch.optim.Adadelta(p, lr=1.0, rho=0.8)),
    ("Adamax", lambda p: torch.optim.Adamax(p, lr=0.02, weight_decay=0.001)),
    ("NAdam", lambda p: torch.optim.NAdam(p, lr=0.01, momentum_decay=0.005)),
    ("RAdam", lambda p: torch.optim.RAdam(p, lr=0.01, weight_decay=0.01)),
    ("ASGD", lambda p: torch.optim.ASGD(p, lr=0.05, t0=2, lambd=1e-3)),
    ("Rprop", lambda p: torch.optim.Rprop(p, lr=0.01, etas=(0.4, 1.3), step_sizes=(1e-5, 1.0))),
]
for name, make in configs:
    model = make_model()
    opt = make(model.parameters())
    full = train(model, opt, 8)
    model2 = make_model()
    opt2 = make(model2.parameters())
    train(model2, opt2, 4)
    saved_model, saved_opt = model2.state_dict(), opt2.state_dict()
    model3 = make_model()
    model3.load_state_dict(saved_model)
    opt3 = make(model3.parameters())
    opt3.load_state_dict(saved_opt)
    resumed = train(model3, opt3, 4)
    state0 = saved_opt["state"][0]
    print(f"{name}: " + " ".join(f"{v:.5f}" for v in full))
    print(f"  resumed equal: {all(abs(a - b) < 1e-6 for a, b in zip(full[4:], resumed))}"
          f"  state keys: {sorted(state0.keys())}  step: {state0['step']}")
    print("  groups:", sorted(k for k in saved_opt["param_groups"][0] if k != "params"))

print(torch.optim.Adagrad(make_model().parameters(), lr=0.1))


def trace(make_sched, steps=12, lr=0.1, **opt_kw):
    opt = torch.optim.SGD([nn.Parameter(torch.zeros(1))], lr=lr, **opt_kw)
    sched = make_sched(opt)
    out = []
    for _ in range(steps):
        opt.step()
        sched.step()
        out.append(sched.get_last_lr()[0])
    return " ".join(f"{v:.5f}" for v in out), opt


with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    s, opt = trace(lambda o: lr_scheduler.OneCycleLR(o, max_lr=1.0, total_steps=13), momentum=0.9)
    print("OneCycleLR:", s, "momentum now", round(opt.param_groups[0]["momentum"], 5))
    s, _ = trace(lambda o: lr_scheduler.OneCycleLR(o, max_lr=0.5, epochs=3, steps_per_epoch=5,
                                                   anneal_strategy="linear", three_phase=True), steps=14)
    print("OneCycleLR linear 3-phase:", s)
print("WarmRestarts:", trace(lambda o: lr_scheduler.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2, eta_min=0.01))[0])
print("CyclicLR tri2:", trace(lambda o: lr_scheduler.CyclicLR(o, 0.01, 0.1, step_size_up=2, mode="triangular2"),
                              momentum=0.9)[0])
print("CyclicLR exp:", trace(lambda o: lr_scheduler.CyclicLR(o, 0.01, 0.1, step_size_up=3, mode="exp_range",
                                                             gamma=0.9, cycle_momentum=False))[0])
print("Multiplicative:", trace(lambda o: lr_scheduler.MultiplicativeLR(o, lambda e: 0.9 if e < 5 else 1.0))[0])
print("LinearLR:", trace(lambda o: lr_scheduler.LinearLR(o, start_factor=0.25, total_iters=4))[0])
print("ConstantLR:", trace(lambda o: lr_scheduler.ConstantLR(o, factor=0.5, total_iters=3))[0])


def seq(o):
    warm = lr_scheduler.LinearLR(o, start_factor=0.1, total_iters=3)
    decay = lr_scheduler.ExponentialLR(o, gamma=0.8)
    return lr_scheduler.SequentialLR(o, schedulers=[warm, decay], milestones=[3])


print("SequentialLR:", trace(seq)[0])
print("Chained:", trace(lambda o: lr_scheduler.ChainedScheduler(
    [lr_scheduler.ConstantLR(o, factor=0.5, total_iters=4), lr_scheduler.ExponentialLR(o, gamma=0.9)]))[0])

opt = torch.optim.SGD([nn.Parameter(torch.zeros(1))], lr=0.1)
sched = lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=4)
for _ in range(5):
    opt.step()
    sched.step()
sd = sched.state_dict()
print("sched state:", sorted(sd.keys()), sd["last_epoch"], sd["T_cur"], [round(v, 6) for v in sd["_last_lr"]])
opt_b = torch.optim.SGD([nn.Parameter(torch.zeros(1))], lr=0.1)
sched_b = lr_scheduler.CosineAnnealingWarmRestarts(opt_b, T_0=4)
sched_b.load_state_dict(sd)
opt_b.step()
sched_b.step()
opt.step()
sched.step()
print("resumed lr:", round(sched_b.get_last_lr()[0], 6), round(sched.get_last_lr()[0], 6),
      round(opt_b.param_groups[0]["lr"], 6))

opt = torch.optim.Adam([nn.Parameter(torch.ones(2))], lr=0.01)
opt.add_param_group({"params": [nn.Parameter(torch.ones(3))], "lr": 0.001, "betas": (0.8, 0.9)})
print("groups:", [(len(g["params"]), g["lr"], g["betas"]) for g in opt.param_groups])
sched = lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
print(sched, torch.Generator())
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    sched.step()
print([str(w.message)[:80] for w in caught])
print("lrs:", sched.get_last_lr())
try:
    opt.add_param_group({"params": opt.param_groups[0]["params"]})
except ValueError as e:
    print("ValueError:", e)
try:
    lr_scheduler.OneCycleLR(opt, max_lr=0.1)
except ValueError as e:
    print("ValueError:", e)
