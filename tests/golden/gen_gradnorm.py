"""Golden data for GradNorm (Chen et al., ICML 2018) and its squared variant, float64.

A reference written from the paper, not from any public implementation (docs/gradnorm.md, section 2, says
what those do differently). The weights take plain SGD steps here; gen_gradnorm_toy.py covers Adam:

  paper:   G_i = ||grad_W (w_i L_i)||, computed by autograd with create_graph so that L_grad is
           differentiated through G_i w.r.t. w (the C++ side uses G_i = w_i ||grad_W L_i|| and must agree);
           r_i = L~_i / mean(L~), L~_i = L_i(t)/L_i(0); target_i = mean(G) r_i^alpha, DETACHED (held constant);
           L_grad = sum_i |G_i - target_i|; gradient w.r.t. w ONLY (torch.autograd.grad on w, never
           .backward(), so the network's .grad never sees it); w <- w - lr dL_grad/dw; clamp at min_weight;
           renormalize to sum w = T after every update.
  squared: balance = sum_i (w_i G_i - G_W r_i)^2, G_i = ||grad_W L_i||, G_W = ||grad_W sum_i w_i L_i|| with
           create_graph (differentiable in w), r_i = L_i(t)/L_i(0); gradient w.r.t. w only; same step, clamp and
           renormalization.

Each step t (10 of them, one fixed batch each): forward; the weight update from w(t); then the network's SGD step
(lr 0.01) on L(t) = sum_i w_i(t) L_i(t) with w(t) as plain numbers, as the paper's Algorithm 1 (the network's
gradient is taken at the weights the step started from, while w moves to w(t+1)).

Model: tinyddp's models::SharedBottomMLP(4, {8, 8}, 3, f64): trunk Linear(4,8) ReLU Linear(8,8) ReLU,
reg_head Linear(8,1) (MSE), cls_head Linear(8,3) (cross-entropy); W = trunk.2.weight. Seed 2018.

Writes next to this script: gradnorm_paper.{params,json}, gradnorm_squared.{params,json} (same initial
parameters in both .params files; each JSON holds the batches, per-step records and the final parameters).
Run: /usr/bin/python3 tests/golden/gen_gradnorm.py
"""
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.dont_write_bytecode = True  # keep __pycache__ out of tests/golden
from gen_tdp_params import here, tensor_json, write_json, write_params

grad = torch.autograd.grad

STEPS = 10
N = 8             # batch size
T = 2
NET_LR = 0.01     # the network's SGD learning rate
MIN_WEIGHT = 1e-6
# Weight learning rates: chosen so that the weights move visibly (several percent per step) without hitting the
# clamp: the paper's alpha = 1.5, and lr 0.1 rather than its 0.025, since this tiny network's G_i are O(1).
PAPER = {"alpha": 1.5, "lr": 0.1}
SQUARED = {"lr": 0.002}


class SharedBottomMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 8), nn.ReLU())
        self.reg_head = nn.Linear(8, 1)
        self.cls_head = nn.Linear(8, 3)

    def task_losses(self, batch):
        h = self.trunk(batch["x"])
        return [F.mse_loss(self.reg_head(h), batch["y_reg"]), F.cross_entropy(self.cls_head(h), batch["y_cls"])]


def make_model_and_batches():
    torch.manual_seed(2018)
    model = SharedBottomMLP()
    batches = []
    for _ in range(STEPS):
        x = torch.randn(N, 4)
        # Regression targets on a larger scale than the classification loss, so the tasks are imbalanced.
        y_reg = 3.0 * torch.randn(N, 1) + 2.0
        y_cls = torch.randint(0, 3, (N,))
        batches.append({"x": x, "y_reg": y_reg, "y_cls": y_cls})
    return model, batches


def clamp_and_renormalize(w):
    w = torch.clamp(w, min=MIN_WEIGHT)
    return w * T / w.sum()


def paper_update(L, W, w, L0, alpha, lr):
    w_leaf = w.clone().requires_grad_(True)
    # G_i = ||grad_W (w_i L_i)||, differentiable in w_i through create_graph.
    G = torch.stack([grad(w_leaf[i] * L[i], W, create_graph=True, retain_graph=True)[0].norm() for i in range(T)])
    Lv = torch.stack([l.detach() for l in L])
    inv_rate = Lv / L0
    r = inv_rate / inv_rate.mean()
    target = (G.mean() * r ** alpha).detach()          # held constant (the paper)
    Lgrad = (G - target).abs().sum()
    dw = grad(Lgrad, w_leaf, retain_graph=True)[0]     # w.r.t. w only
    new_w = clamp_and_renormalize(w - lr * dw)
    return new_w, {"grad_norms": G.tolist(), "targets": target.tolist(), "loss_ratios": r.tolist(),
                   "weight_grads": dw.tolist(), "balance_loss": Lgrad.item()}


def squared_update(L, W, w, L0, lr):
    G = torch.stack([grad(L[i], W, retain_graph=True)[0].norm() for i in range(T)])   # ||grad_W L_i||, constants
    w_leaf = w.clone().requires_grad_(True)
    weighted = sum(w_leaf[i] * L[i] for i in range(T))
    G_W = grad(weighted, W, create_graph=True, retain_graph=True)[0].norm()          # differentiable in w
    r = torch.stack([l.detach() for l in L]) / L0
    balance = ((w_leaf * G - G_W * r) ** 2).sum()
    dw = grad(balance, w_leaf, retain_graph=True)[0]
    new_w = clamp_and_renormalize(w - lr * dw)
    return new_w, {"grad_norms": G.tolist(), "total_grad_norm": G_W.item(), "targets": (G_W * r).tolist(),
                   "loss_ratios": r.tolist(), "weight_grads": dw.tolist(), "balance_loss": balance.item()}


def run(variant, options):
    model, batches = make_model_and_batches()
    write_params(model, here(f"gradnorm_{variant}.params"))
    W = model.trunk[2].weight
    opt = torch.optim.SGD(model.parameters(), lr=NET_LR)
    w = torch.ones(T)
    L0 = None
    steps = []
    for t, batch in enumerate(batches):
        L = model.task_losses(batch)
        Lv = torch.stack([l.detach() for l in L])
        if L0 is None:
            L0 = Lv.clone()
        w_t = w.clone()
        if variant == "paper":
            w, record = paper_update(L, W, w, L0, options["alpha"], options["lr"])
        else:
            w, record = squared_update(L, W, w, L0, options["lr"])
        # The network's step on L(t) = sum_i w_i(t) L_i(t), weights as plain numbers.
        opt.zero_grad()
        total = L[0] * w_t[0].item() + L[1] * w_t[1].item()
        total.backward()
        # The balance loss never reached the network: its .grad is exactly grad L(t).
        assert all(p.grad is not None for p in model.parameters())
        opt.step()
        record.update({"step": t, "losses": Lv.tolist(), "baseline": L0.tolist(), "loss_weights": w_t.tolist(),
                       "weights": w.tolist()})
        assert abs(sum(record["weights"]) - T) < 1e-12 and min(record["weights"]) > 0
        steps.append(record)
    write_json({
        "torch_version": torch.__version__,
        "variant": variant,
        "model": "SharedBottomMLP(4, {8, 8}, 3, f64); W = trunk.2.weight",
        "params": f"tests/golden/gradnorm_{variant}.params",
        "T": T, "net_lr": NET_LR, "min_weight": MIN_WEIGHT, **options,
        "batches": [{"x": tensor_json(b["x"]), "y_reg": tensor_json(b["y_reg"]), "y_cls": b["y_cls"].tolist()}
                    for b in batches],
        "steps": steps,
        "final_params": {n: tensor_json(p) for n, p in model.named_parameters()},
    }, here(f"gradnorm_{variant}.json"))
    return steps


def main():
    torch.set_default_dtype(torch.float64)
    for variant, options in (("paper", PAPER), ("squared", SQUARED)):
        steps = run(variant, options)
        print(variant)
        for s in steps:
            print(f"  step {s['step']}: losses {[round(v, 4) for v in s['losses']]}  G {[round(v, 4) for v in s['grad_norms']]}"
                  f"  r {[round(v, 4) for v in s['loss_ratios']]}  w {[round(v, 5) for v in s['weights']]}")


if __name__ == "__main__":
    main()
