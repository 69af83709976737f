"""Golden data: the first 50 GradNorm updates of `tinyddp train --experiment toy2 --dtype f64`, in PyTorch 1.13.

The toy problem of Chen et al. 2018 exactly as tinyddp builds it (models/experiments/toy.cpp, data_rng.h): the same
data stream (SplitMix64 + Box-Muller, re-implemented below; seed 0), the same network
(MultiRegressionMLP(250, 100, 4 layers, 2 tasks, 100 outputs per task)) with tinyddp's initial parameters for
--seed 1, read from the parameter file `tinyddp train --save-initial-params` writes, and the same loop
(apps/tinyddp/train/train.cpp): per step t, on rows [100 t, 100 t + 100) of the 5,000 training rows,
  1. L_i (MSE of task i's 100 columns); L_i(0) from step 0; r_i = (L_i/L_i(0)) / mean_j (L_j/L_j(0));
  2. G_i = ||grad_W (w_i L_i)|| by autograd with create_graph (W = trunk.6.weight), target_i = mean(G) r_i^0.12
     held constant, L_grad = sum_i |G_i - target_i|, dL_grad/dw by torch.autograd.grad on a leaf w only;
  3. the task weights' optimizer step on that leaf: torch.optim.Adam([w], lr=0.025) ("adam") or w - 0.025 dw
     ("sgd"); then, under no_grad, w <- clamp(w, min=1e-6), w <- w * 2 / sum(w), in place (Adam's moments stay);
  4. the network's torch.optim.Adam(lr=1e-3) step on sum_i w_i(t) L_i with the weights before step 3 as numbers.

Writes gradnorm_toy2.json next to this script: per optimizer, per step the losses, G_i, targets, r_i, dL_grad/dw,
the weights after the update and how many the clamp raised; plus the FNV-1a 64 digest of the parameter file, which
the C++ test (tests/apps/train_gradnorm_golden_test.cpp) checks against its own initial parameters.

Run after building tinyddp (it runs the binary once for the parameter file, in a temporary directory):
    /usr/bin/python3 tests/golden/gen_gradnorm_toy.py [--tinyddp build/apps/tinyddp]
"""
import argparse
import math
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.dont_write_bytecode = True  # keep __pycache__ out of tests/golden
from gen_tdp_params import here, write_json

STEPS = 50
T = 2
SIGMAS = (1.0, 100.0)          # toy_sigmas(2, seed)
D, K, HIDDEN = 250, 100, 100   # input features, outputs per task, trunk width
TRAIN_ROWS, BATCH = 5000, 100  # make_toy's defaults: 50 steps walk the training set once
ALPHA, LR_WEIGHTS, MIN_WEIGHT = 0.12, 0.025, 1e-6
NET_LR = 1e-3
DATA_SEED, MODEL_SEED = 0, 1
MASK = (1 << 64) - 1
GAMMA = 0x9E3779B97F4A7C15


# ---- models/experiments/data_rng.h ----

def mix(z):
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


class DataRng:
    def __init__(self, seed, stream):
        self.state = mix((seed * GAMMA + mix(stream + 1)) & MASK)

    def uniforms(self, n):
        """n uniforms in [0, 1) (53 bits each), vectorized: output k is mix(state + (k + 1) GAMMA)."""
        with np.errstate(over="ignore"):
            z = np.uint64(self.state) + np.arange(1, n + 1, dtype=np.uint64) * np.uint64(GAMMA)
            z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
            z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
            z = z ^ (z >> np.uint64(31))
        self.state = (self.state + n * GAMMA) & MASK
        return (z >> np.uint64(11)).astype(np.float64) * 2.0 ** -53

    def normals(self, n, stddev):
        """Box-Muller with the C library's log/cos (Python's math), as std::log/std::cos."""
        u = self.uniforms(2 * n).tolist()
        return [stddev * (math.sqrt(-2.0 * math.log(1.0 - u[2 * k])) * math.cos(2.0 * math.pi * u[2 * k + 1]))
                for k in range(n)]


def toy2_train_data():
    """(x_in, y) of the 5,000 training rows, f64: x_in = x sqrt(D), y = [sigma_i tanh(x (B + eps_i)^T)]."""
    b = torch.tensor(DataRng(DATA_SEED, 1).normals(K * D, math.sqrt(10.0))).reshape(K, D)
    # The x stream holds train then test rows; the training rows are its first TRAIN_ROWS * D values.
    x = DataRng(DATA_SEED, 2).uniforms(TRAIN_ROWS * D)
    x = (-1.0 + 2.0 * x).reshape(TRAIN_ROWS, D)
    norm2 = np.cumsum(x * x, axis=1)[:, -1]          # left to right, as the C++ loop sums
    x = torch.from_numpy(x * (1.0 / np.sqrt(norm2))[:, None])
    ys = []
    for i in range(T):
        eps = torch.tensor(DataRng(DATA_SEED, 100 + i).normals(K * D, math.sqrt(3.5))).reshape(K, D)
        ys.append(torch.tanh(x @ (b + eps).t()) * SIGMAS[i])
    return x * math.sqrt(D), torch.cat(ys, 1)


# ---- the network, with tinyddp's initial parameters ----

class MultiRegressionMLP(nn.Module):
    def __init__(self):
        super().__init__()
        layers, width = [], D
        for _ in range(4):
            layers += [nn.Linear(width, HIDDEN), nn.ReLU()]
            width = HIDDEN
        self.trunk = nn.Sequential(*layers)
        self.head = nn.Linear(HIDDEN, T * K)

    def task_losses(self, x, y):
        p = self.head(self.trunk(x))
        return [F.mse_loss(p[:, i * K:(i + 1) * K], y[:, i * K:(i + 1) * K]) for i in range(T)]


def read_params(path):
    with open(path) as f:
        lines = f.read().split("\n")
    assert lines[0] == "# tinyddp parameters v1", lines[0]
    state = {}
    for k in range(1, len(lines) - 1, 2):
        name, dtype, ndim, *dims = lines[k].split()
        assert dtype == "f64" and int(ndim) == len(dims), lines[k]
        state[name] = torch.tensor([float(v) for v in lines[k + 1].split()]).reshape([int(d) for d in dims])
    return state


def fnv1a64(data):
    h = 1469598103934665603
    for byte in data:
        h = ((h ^ byte) * 1099511628211) & MASK
    return h


def tinyddp_initial_params(tinyddp):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "toy2.params")
        subprocess.run([tinyddp, "train", "--experiment", "toy2", "--dtype", "f64", "--seed", str(MODEL_SEED),
                        "--steps", "1", "--quiet", "--json", "--save-initial-params", path],
                       check=True, stdout=subprocess.DEVNULL)
        with open(path, "rb") as f:
            data = f.read()
        return read_params(path), fnv1a64(data)


# ---- the loop ----

def run(optimizer, state, x_all, y_all):
    model = MultiRegressionMLP()
    model.load_state_dict(state, strict=True)
    W = model.trunk[6].weight
    net_opt = torch.optim.Adam(model.parameters(), lr=NET_LR)
    w = torch.ones(T).requires_grad_(True)              # the task weights: a leaf the weights' optimizer steps
    w_opt = torch.optim.Adam([w], lr=LR_WEIGHTS) if optimizer == "adam" else torch.optim.SGD([w], lr=LR_WEIGHTS)
    L0 = None
    steps = []
    for t in range(STEPS):
        rows = slice(t * BATCH, (t + 1) * BATCH)
        L = model.task_losses(x_all[rows], y_all[rows])
        Lv = torch.stack([l.detach() for l in L])
        if L0 is None:
            L0 = Lv.clone()
        w_t = w.detach().clone()                        # w(t): what the network's loss applies
        G = torch.stack([torch.autograd.grad(w[i] * L[i], W, create_graph=True, retain_graph=True)[0].norm()
                         for i in range(T)])
        inv_rate = Lv / L0
        r = inv_rate / inv_rate.mean()
        target = (G.mean() * r ** ALPHA).detach()
        L_grad = (G - target).abs().sum()
        dw = torch.autograd.grad(L_grad, w, retain_graph=True)[0]
        w.grad = dw
        w_opt.step()
        with torch.no_grad():
            clamped = int((w < MIN_WEIGHT).sum())
            w.copy_(torch.clamp(w, min=MIN_WEIGHT))
            w.copy_(w * T / w.sum())
        net_opt.zero_grad()
        (L[0] * w_t[0].item() + L[1] * w_t[1].item()).backward()
        assert w.grad is dw                             # the network's backward never reached w
        net_opt.step()
        steps.append({"step": t, "losses": Lv.tolist(), "grad_norms": G.tolist(), "targets": target.tolist(),
                      "loss_ratios": r.tolist(), "weight_grads": dw.tolist(), "loss_weights": w_t.tolist(),
                      "weights": w.detach().tolist(), "clamped": clamped})
    return steps


def main():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tinyddp", default=os.path.join(root, "build", "apps", "tinyddp"))
    args = parser.parse_args()
    torch.set_default_dtype(torch.float64)
    state, digest = tinyddp_initial_params(args.tinyddp)
    x_all, y_all = toy2_train_data()
    runs = {name: run(name, state, x_all, y_all) for name in ("adam", "sgd")}
    write_json({
        "torch_version": torch.__version__,
        "experiment": "toy2", "dtype": "f64", "data_seed": DATA_SEED, "model_seed": MODEL_SEED,
        "initial_params_fnv1a": f"{digest:016x}",
        "T": T, "alpha": ALPHA, "lr_weights": LR_WEIGHTS, "min_weight": MIN_WEIGHT, "net_optimizer": "adam",
        "net_lr": NET_LR, "batch_size": BATCH, "steps": STEPS,
        "runs": runs,
    }, here("gradnorm_toy2.json"))
    for name, steps in runs.items():
        print(name, "clamped updates:", sum(s["clamped"] > 0 for s in steps))
        for s in steps[:3] + steps[-2:]:
            print(f"  step {s['step']}: losses {[round(v, 4) for v in s['losses']]}  "
                  f"G {[round(v, 4) for v in s['grad_norms']]}  w {[round(v, 6) for v in s['weights']]}")


if __name__ == "__main__":
    main()
