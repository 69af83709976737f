"""GradNorm (Chen et al., ICML 2018) written in Python, in the textbook form: the per-task gradient norms
G_i = ||grad_W (w_i L_i)|| are taken with autograd.grad(..., create_graph=True), and the balance loss
L_grad = sum_i |G_i - target_i| is differentiated w.r.t. the task weights w through them.

    PYTHONPATH=build/python python3 examples/gradnorm.py --steps 200
    build/apps/tinyddp train --experiment toy2 --weighting gradnorm --steps 200   # the C++ loop: the same weights

The data and the initial network weights are those of `tinyddp train` (models/experiments, bound as
tinyddp._C._experiments); the network, the loop and GradNorm are written here against PyTorch's API. Per step,
as the C++ loop (apps/tinyddp/train/train.cpp) and models/weighting/gradnorm.cpp do:
  1. L_i on the step's batch; L_i(0) from step 0; r_i = (L_i / L_i(0)) / mean_j (L_j / L_j(0)).
  2. G_i = ||grad_W w_i L_i|| (create_graph), target_i = mean(G) r_i^alpha (a constant), L_grad = sum |G - target|.
  3. w <- w - lr_w dL_grad/dw, clamped at 1e-6, renormalized to sum T (the weights are plain numbers between
     steps, as in C++).
  4. The network trains on sum_i w_i(t) L_i with the weights of step 1 (before the update), by Adam.
"""
import argparse
import json
import sys

import tinyddp as torch
import tinyddp.nn as nn
import tinyddp.nn.functional as F
from tinyddp import _C

MIN_WEIGHT = 1e-6   # WeightingOptions::min_weight: the clamp before renormalizing


class MultiRegressionMLP(nn.Module):
    """models::MultiRegressionMLP(250, 100, 4 layers, T tasks, 100 outputs per task): a ReLU trunk and one affine
    head whose column block i is task i's prediction. Its parameter names are the C++ model's."""

    def __init__(self, in_features, hidden, num_layers, num_tasks, outputs_per_task):
        super().__init__()
        layers, width = [], in_features
        for _ in range(num_layers):
            layers += [nn.Linear(width, hidden), nn.ReLU()]
            width = hidden
        self.trunk = nn.Sequential(*layers)
        self.head = nn.Linear(hidden, num_tasks * outputs_per_task)
        self.num_tasks, self.outputs_per_task = num_tasks, outputs_per_task

    def shared_weight(self):
        """GradNorm's W: the weight of the last layer all tasks share."""
        return self.trunk[len(self.trunk) - 2].weight

    def forward(self, x, y):
        prediction = self.head(self.trunk(x))   # (N, T K)
        K = self.outputs_per_task
        return [F.mse_loss(prediction[:, i * K:(i + 1) * K], y[:, i * K:(i + 1) * K]) for i in range(self.num_tasks)]


def gradnorm_update(weights, losses, initial_losses, W, alpha, lr):
    """One GradNorm step on the task weights (plain floats); returns the new weights and the G_i."""
    T = len(weights)
    w = torch.tensor(weights, requires_grad=True)   # (T), a leaf private to this step
    G = []
    for i in range(T):
        (g,) = torch.autograd.grad(w[i] * losses[i], W, retain_graph=True, create_graph=True)
        G.append((g * g).sum().sqrt())              # ||grad_W w_i L_i||, a function of w
    inverse_rate = [losses[i].item() / initial_losses[i] for i in range(T)]
    r = [v / (sum(inverse_rate) / T) for v in inverse_rate]
    G_mean = sum(G_i.item() for G_i in G) / T
    targets = [G_mean * r_i ** alpha for r_i in r]   # held constant
    L_grad = sum((G[i] - targets[i]).abs() for i in range(T))
    (grad_w,) = torch.autograd.grad(L_grad, w)
    new = [max(weights[i] - lr * grad_w[i].item(), MIN_WEIGHT) for i in range(T)]
    total = sum(new)
    return [v * T / total for v in new], [G_i.item() for G_i in G]


def train(experiment="toy2", steps=200, alpha=None, lr_weights=0.025, lr=None, batch_size=None, data_seed=0,
          model_seed=1, train_rows=0):
    e = _C._experiments.Experiment(experiment, data_seed, _C.DType.f32, train_rows)
    alpha = e.default_alpha if alpha is None else alpha
    lr = e.default_lr if lr is None else lr
    batch_size = e.default_batch_size if batch_size is None else batch_size
    T = len(e.task_names)
    model = MultiRegressionMLP(250, 100, 4, T, 100)
    model.load_state_dict(dict(e.initial_parameters(model_seed)))
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    W = model.shared_weight()

    weights, initial_losses, history = [1.0] * T, None, []
    for step in range(steps):
        x, (y,) = e.batch(step, batch_size)
        losses = model(x, y)
        values = [l.item() for l in losses]
        if initial_losses is None:
            initial_losses = values
        applied = weights                                   # w(t): what this step's network update uses
        weights, G = gradnorm_update(weights, losses, initial_losses, W, alpha, lr_weights)
        history.append({"step": step, "weights": applied, "losses": values, "grad_norms": G})
        optimizer.zero_grad()
        sum(applied[i] * losses[i] for i in range(T)).backward()
        optimizer.step()
    return {"experiment": experiment, "steps": steps, "alpha": alpha, "weights": weights, "history": history}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--experiment", default="toy2", choices=["toy2", "toy10"])
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--alpha", type=float, default=None, help="default: the experiment's (0.12 on the toy problem)")
    p.add_argument("--lr-weights", type=float, default=0.025)
    p.add_argument("--lr", type=float, default=None, help="the network's Adam learning rate (default 1e-3)")
    p.add_argument("--batch", type=int, default=None)
    p.add_argument("--data-seed", type=int, default=0)
    p.add_argument("--seed", type=int, default=1, help="seed of the initial network weights")
    p.add_argument("--json", action="store_true", help="print one JSON object (weights, history)")
    a = p.parse_args(argv)
    result = train(a.experiment, a.steps, a.alpha, a.lr_weights, a.lr, a.batch, a.data_seed, a.seed)
    if a.json:
        print(json.dumps(result))
        return 0
    every = max(1, a.steps // 10)
    for row in result["history"]:
        if row["step"] % every == 0:
            losses = " ".join(f"{v:.4g}" for v in row["losses"])
            weights = " ".join(f"{v:.4f}" for v in row["weights"])
            print(f"step {row['step']:5d}  losses {losses}  weights {weights}")
    print("final weights " + " ".join(f"{v:.6f}" for v in result["weights"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
