"""Golden data for higher-order autograd (create_graph=True), float64.

Writes next to this script:
  create_graph_mlp.params / .json      (a) grad-of-grad-norm through a small MLP
  gradnorm_second_order.params / .json (b) GradNorm (Chen et al. 2018) quantities
Each part re-seeds with torch.manual_seed(1234) before building its module.
Run: /usr/bin/python3 tests/golden/gen_create_graph.py
"""
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.dont_write_bytecode = True  # keep __pycache__ out of tests/golden
from gen_tdp_params import here, tensor_json, write_json, write_params

grad = torch.autograd.grad


def named(module, tensors):
    return {n: tensor_json(t) for (n, _), t in zip(module.named_parameters(), tensors)}


def create_graph_mlp():
    torch.manual_seed(1234)
    mlp = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 8), nn.ReLU(),
                        nn.Linear(8, 3))
    x = torch.randn(5, 4)
    y = torch.randn(5, 3)
    params = list(mlp.parameters())

    loss = F.mse_loss(mlp(x), y)
    grads = grad(loss, params, create_graph=True)
    gn2 = sum((g * g).sum() for g in grads)
    gg = grad(gn2, params)  # d/dtheta of ||dL/dtheta||^2 (= 2 H g)

    # Cross-check: plain first-order backward on a fresh graph gives the same grads.
    F.mse_loss(mlp(x), y).backward()
    for p, g in zip(params, grads):
        assert torch.allclose(p.grad, g, rtol=0, atol=1e-15)

    write_params(mlp, here("create_graph_mlp.params"))
    write_json({"x": tensor_json(x), "y": tensor_json(y), "loss": loss.item(),
                "grads": named(mlp, grads), "grad_norm_sq": gn2.item(),
                "grad_of_grad_norm_sq": named(mlp, gg)},
               here("create_graph_mlp.json"))


class TwoTask(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 8), nn.ReLU())
        self.head_a = nn.Linear(8, 1)
        self.head_b = nn.Linear(8, 3)


def gradnorm_second_order():
    torch.manual_seed(1234)
    m = TwoTask()
    x = torch.randn(6, 4)
    ya = torch.randn(6, 1)
    yb = torch.tensor([0, 2, 1, 1, 0, 2])

    h = m.trunk(x)
    L1 = F.mse_loss(m.head_a(h), ya)
    L2 = F.cross_entropy(m.head_b(h), yb)
    L = [L1, L2]
    w = torch.tensor([0.7, 1.3], requires_grad=True)
    W = m.trunk[2].weight  # last shared layer

    # Norm of the gradient of the weighted total loss, and its derivative wrt w.
    total = w[0] * L1 + w[1] * L2
    gW = grad(total, W, create_graph=True)[0]
    n = gW.norm()
    dn_dw = grad(n, w, retain_graph=True)[0]

    # Per-task weighted gradient norms G_i = ||grad_W (w_i L_i)||.
    G = [grad(w[i] * L[i], W, create_graph=True, retain_graph=True)[0].norm()
         for i in range(2)]

    # GradNorm balance loss, alpha = 1.5, with synthetic initial losses L(0).
    alpha = 1.5
    L0 = [1.1 * L1.item(), 0.9 * L2.item()]
    Lt = torch.stack([L[i] / L0[i] for i in range(2)])
    r = Lt / Lt.mean()
    Gs = torch.stack(G)
    target = (Gs.mean() * r ** alpha).detach()
    Lgrad = (Gs - target).abs().sum()
    dLgrad_dw = grad(Lgrad, w)[0]

    # Closed form: G_i = w_i ||grad_W L_i|| and target is constant, so
    # dLgrad/dw_i = sign(G_i - target_i) * ||grad_W L_i||.
    gnorm = [grad(L[i], W, retain_graph=True)[0].norm() for i in range(2)]
    closed = torch.stack([torch.sign(Gs[i] - target[i]) * gnorm[i] for i in range(2)]).detach()
    assert torch.allclose(closed, dLgrad_dw, rtol=1e-12, atol=0)

    write_params(m, here("gradnorm_second_order.params"))
    write_json({
        "x": tensor_json(x), "ya": tensor_json(ya), "yb": yb.tolist(),
        "w": tensor_json(w), "alpha": alpha,
        "L1": L1.item(), "L2": L2.item(),
        "dW_total": tensor_json(gW),
        "total_grad_norm": n.item(), "d_total_grad_norm_dw": tensor_json(dn_dw),
        "G": [g.item() for g in G],
        "grad_W_L_norm": [g.item() for g in gnorm],
        "L0": L0, "r": r.tolist(), "target": target.tolist(),
        "Lgrad": Lgrad.item(), "d_Lgrad_dw": tensor_json(dLgrad_dw),
        "d_Lgrad_dw_closed_form": tensor_json(closed),
    }, here("gradnorm_second_order.json"))


if __name__ == "__main__":
    torch.set_default_dtype(torch.float64)
    create_graph_mlp()
    gradnorm_second_order()
