"""Golden data for gradient surgery (models/gradient_surgery): PCGrad (Yu et al., NeurIPS 2020) and MGDA-UB
(Sener & Koltun, NeurIPS 2018) on one fixed multi-task MLP and batch, float64, single process.

A reference written from the papers, not from any public implementation:
  PCGrad (Algorithm 1): g_i = grad of L_i w.r.t. every shared (trunk) parameter, flattened and concatenated
    in named_parameters order; for each task i: g_i^PC = g_i, then for j in order_i (the other tasks):
    if <g_i^PC, g_j> < 0: g_i^PC -= <g_i^PC, g_j> / ||g_j||^2 g_j (against the original g_j); g^PC = sum_i g_i^PC.
    order_i is tinyddp's seeded stream (surgery::pcgrad_order: splitmix64 keyed by (seed, step, task), a
    Fisher-Yates shuffle), re-implemented here, so the C++ weighting must pick the same orders.
    The step's .grad: g^PC on the trunk, the ordinary grad of sum_i L_i on the head.
  MGDA-UB (Algorithms 1 and 2): v_i = grad of L_i w.r.t. Z = trunk(x) (N, H); M_ij = <v_i, v_j>;
    Frank-Wolfe from alpha = 1/T: t = argmin_r (M alpha)_r, gamma from Algorithm 1 on the segment
    [theta, v_t], alpha = (1 - gamma) alpha + gamma e_t, until alpha moves by less than 1e-5 (L1) or after 250
    iterations. The result is checked here against the min-norm optimality condition (M alpha)_r >= alpha^T M alpha for every r (up to
    the solver's stopping tolerance) and, for a 2-task subproblem, against the closed form.

Model: tinyddp's models::MultiRegressionMLP(5, 6, 2 layers, 3 tasks, 2 outputs per task, f64): trunk
Linear(5,6) ReLU Linear(6,6) ReLU, head Linear(6, 6), task i = columns [2 i, 2 i + 2), L_i = MSE. Seed 16,
chosen so that some task pairs conflict (PCGrad projects) and every MGDA weight is interior (in (0, 1)).
Batch N = 8.

Writes gradient_surgery.{params,json} next to this script. Run: /usr/bin/python3 tests/golden/gen_gradient_surgery.py
"""
import sys

import torch
import torch.nn as nn

sys.dont_write_bytecode = True  # keep __pycache__ out of tests/golden
from gen_tdp_params import here, tensor_json, write_json, write_params

D, H, T, K, N = 5, 6, 3, 2, 8
SEED = 16
PCGRAD_SEED, STEP = 7, 3          # the stream key the C++ test passes (WeightingOptions::seed, the step)
MAX_ITER, STOP_CHANGE = 250, 1e-5
M64 = (1 << 64) - 1


class MultiRegressionMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(D, H), nn.ReLU(), nn.Linear(H, H), nn.ReLU())
        self.head = nn.Linear(H, T * K)

    def losses(self, x, y):
        z = self.trunk(x)
        p = self.head(z)
        return z, [torch.mean((p[:, K * i:K * (i + 1)] - y[:, K * i:K * (i + 1)]) ** 2) for i in range(T)]


def splitmix64(state):
    state = (state + 0x9E3779B97F4A7C15) & M64
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return state, z ^ (z >> 31)


def pcgrad_order(task, seed, step):
    others = [j for j in range(T) if j != task]
    state = seed
    state, r = splitmix64(state)
    state ^= (r + step) & M64
    state, r = splitmix64(state)
    state ^= (r + task) & M64
    for k in range(len(others), 1, -1):
        state, r = splitmix64(state)
        j = r % k
        others[k - 1], others[j] = others[j], others[k - 1]
    return others


def pcgrad(g, orders):
    projected, projections = [], 0
    for i in range(T):
        gi = g[i].clone()
        for j in orders[i]:
            d = torch.dot(gi, g[j])
            if d < 0:
                gi = gi - d / torch.dot(g[j], g[j]) * g[j]
                projections += 1
        projected.append(gi)
    return torch.stack(projected).sum(0), projected, projections


def min_norm_line(uu, uv, vv):
    if uv >= uu:
        return 1.0
    if uv >= vv:
        return 0.0
    return (vv - uv) / (uu + vv - 2 * uv)


def frank_wolfe(M):
    n = M.shape[0]
    alpha = torch.full((n,), 1.0 / n, dtype=torch.float64)
    iterations = 0
    for _ in range(MAX_ITER):
        m_alpha = M @ alpha
        t = int(torch.argmin(m_alpha))
        gamma = min_norm_line(float(M[t, t]), float(m_alpha[t]), float(alpha @ m_alpha))
        iterations += 1
        e_t = torch.zeros(n, dtype=torch.float64)
        e_t[t] = 1.0
        change = gamma * float((e_t - alpha).abs().sum())  # ||alpha_new - alpha||_1
        alpha = (1 - gamma) * alpha
        alpha[t] += gamma
        if change < STOP_CHANGE:
            break
    return alpha, iterations


def main():
    torch.manual_seed(SEED)
    net = MultiRegressionMLP().double()
    x = torch.randn(N, D, dtype=torch.float64)
    y = torch.randn(N, T * K, dtype=torch.float64)
    write_params(net, here("gradient_surgery.params"))
    shared = list(net.trunk.parameters())
    z, L = net.losses(x, y)

    # PCGrad
    g = [torch.cat([t.reshape(-1) for t in torch.autograd.grad(L[i], shared, retain_graph=True)]) for i in range(T)]
    orders = [pcgrad_order(i, PCGRAD_SEED, STEP) for i in range(T)]
    combined, projected, projections = pcgrad(g, orders)
    assert projections >= 1, "choose a seed where some task gradients conflict"
    cos = [float(torch.dot(g[i], g[j]) / (g[i].norm() * g[j].norm())) for i in range(T) for j in range(i + 1, T)]
    head_grads = torch.autograd.grad(sum(L), list(net.head.parameters()), retain_graph=True)

    # MGDA-UB
    v = [torch.autograd.grad(L[i], z, retain_graph=True)[0] for i in range(T)]
    M = torch.tensor([[float((v[i] * v[j]).sum()) for j in range(T)] for i in range(T)], dtype=torch.float64)
    alpha, iterations = frank_wolfe(M)
    norm_sq = float(alpha @ M @ alpha)
    assert all(float((M @ alpha)[r]) >= norm_sq - 1e-4 * norm_sq for r in range(T)), "not the min-norm point"
    assert 0 < iterations < MAX_ITER
    # The 2-task closed form, alpha_0 = clamp(<v_1 - v_0, v_1> / ||v_0 - v_1||^2, 0, 1), on tasks 0 and 1.
    M2 = M[:2, :2]
    alpha2, _ = frank_wolfe(M2)
    closed = min(1.0, max(0.0, float((M2[1, 1] - M2[0, 1]) / (M2[0, 0] + M2[1, 1] - 2 * M2[0, 1]))))
    assert abs(float(alpha2[0]) - closed) < 1e-12

    write_json({
        "generator": "tests/golden/gen_gradient_surgery.py", "torch_version": torch.__version__,
        "params": "tests/golden/gradient_surgery.params", "D": D, "H": H, "T": T, "K": K,
        "x": tensor_json(x), "y": tensor_json(y), "losses": [float(l) for l in L],
        "pcgrad": {"seed": PCGRAD_SEED, "step": STEP, "orders": orders,
                   "task_grads": [tensor_json(t) for t in g], "projected": [tensor_json(t) for t in projected],
                   "combined": tensor_json(combined), "projections": projections, "cosines": cos,
                   "head_grads": [tensor_json(t) for t in head_grads]},
        "mgda": {"gram": tensor_json(M), "alpha": [float(a) for a in alpha], "iterations": iterations,
                 "two_task_alpha": [float(a) for a in alpha2], "two_task_closed_form": closed},
    }, here("gradient_surgery.json"))
    print(f"orders {orders} projections {projections} cos {[round(c, 3) for c in cos]} "
          f"alpha {[round(float(a), 4) for a in alpha]} ({iterations} FW iterations)")


if __name__ == "__main__":
    main()
