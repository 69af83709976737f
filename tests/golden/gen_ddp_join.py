"""Uneven inputs with DDP.join() on real PyTorch 1.13 DDP (gloo, 2 processes on 127.0.0.1): the gradients every
rank holds after each of its backwards, its parameters after the join, and what it raised.

Run by hand from anywhere: /usr/bin/python3 tests/golden/gen_ddp_join.py
Writes ddp_join.json next to this script (deterministic; about 5 s).

The model (float64): out = x @ w.T + b (+ u where the run's rank uses u), loss = mean((out - y)^2); rank 0 has
3 batches, rank 1 has 2 (fixed values below). Every iteration: grads set to None, forward, backward, SGD
step p -= 0.1 * p.grad. All inside `with ddp.join(...)`. The runs:
  divide-initial   divide_by_initial_world_size=True: rank 0's third gradient is its own / 2
  divide-effective divide_by_initial_world_size=False: ... its own / 1
  find-unused      find_unused_parameters=True, u used by rank 1 only; shows what the joined rank's shadow of
                   the local-used map allreduce sends (1.13: the map's last reduced value, not zeros)
  throw            throw_on_early_termination=True: both ranks raise, rank 0 at its third forward
The final parameters: every rank holds rank 0's (the last to join).

Layout: {"runs": [{"id", "options", "params" (initial, by name), "param_order", "ranks": [per rank
{"batches": [{"x", "y"}], "grads": [per backward {name: tensor or null}], "params": {name: tensor} (after the
join), "error": null or {"type", "message", "raised_at": "forward <k>" or "join exit"}}]}]}, tensors as
gen_tdp_params.tensor_json.
"""
import json
import os
import sys

import torch
import torch.distributed as dist
import torch.nn as nn

sys.dont_write_bytecode = True  # keep __pycache__ out of tests/golden
from gen_tdp_params import here, run_ranks, tensor_json, write_json

WORLD = 2
TIMEOUT_S = 30
LR = 0.1

# Per rank, its batches: x (2, 3), y (2, 2).
BATCHES = [
    [([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]], [[1.0, -2.0], [0.5, 0.0]]),
     ([[-0.75, 0.5, 1.0], [2.0, -1.5, 0.5]], [[0.0, 1.0], [-1.0, 0.5]]),
     ([[1.0, 1.0, -1.0], [0.0, -0.5, 1.5]], [[2.0, -0.5], [0.25, 1.0]])],
    [([[-1.0, 0.0, 0.5], [0.75, 2.0, -1.25]], [[-0.5, 1.5], [1.0, -1.0]]),
     ([[0.25, -0.25, 1.0], [-2.0, 1.0, 0.0]], [[0.5, 0.5], [-1.5, 2.0]])],
]

RUNS = [
    {"id": "divide-initial", "divide_by_initial_world_size": True, "find_unused_parameters": False,
     "throw_on_early_termination": False, "u_used_on_ranks": []},
    {"id": "divide-effective", "divide_by_initial_world_size": False, "find_unused_parameters": False,
     "throw_on_early_termination": False, "u_used_on_ranks": []},
    {"id": "find-unused", "divide_by_initial_world_size": True, "find_unused_parameters": True,
     "throw_on_early_termination": False, "u_used_on_ranks": [1]},
    {"id": "throw", "divide_by_initial_world_size": True, "find_unused_parameters": False,
     "throw_on_early_termination": True, "u_used_on_ranks": []},
]


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.tensor([[0.2, -0.4, 0.6], [0.8, 0.1, -0.3]], dtype=torch.float64))
        self.b = nn.Parameter(torch.tensor([0.05, -0.15], dtype=torch.float64))
        self.u = nn.Parameter(torch.tensor([0.3, -0.7], dtype=torch.float64))

    def forward(self, x, use_u):
        out = x @ self.w.t() + self.b
        return out + self.u if use_u else out


def run_one(rank, spec):
    model = Model()
    params_init = {n: tensor_json(p) for n, p in model.named_parameters()}
    if not spec["u_used_on_ranks"]:
        model.u.requires_grad_(False)  # DDP leaves it out; the model is then the plain Linear
    ddp = nn.parallel.DistributedDataParallel(model, find_unused_parameters=spec["find_unused_parameters"])
    use_u = rank in spec["u_used_on_ranks"]
    out = {"batches": [], "grads": [], "error": None}
    where = "join exit"
    try:
        with ddp.join(divide_by_initial_world_size=spec["divide_by_initial_world_size"],
                      throw_on_early_termination=spec["throw_on_early_termination"]):
            for k, (x, y) in enumerate(BATCHES[rank]):
                x = torch.tensor(x, dtype=torch.float64)
                y = torch.tensor(y, dtype=torch.float64)
                out["batches"].append({"x": tensor_json(x), "y": tensor_json(y)})
                for p in model.parameters():
                    p.grad = None
                where = f"forward {k + 1}"
                pred = ddp(x, use_u)
                where = f"backward {k + 1}"
                ((pred - y) ** 2).mean().backward()
                out["grads"].append({n: None if p.grad is None else tensor_json(p.grad)
                                     for n, p in model.named_parameters()})
                with torch.no_grad():
                    for p in model.parameters():
                        if p.grad is not None:
                            p.add_(p.grad, alpha=-LR)
                where = "join exit"
    except RuntimeError as e:
        out["error"] = {"type": type(e).__name__, "message": str(e), "raised_at": where}
    out["params"] = {n: tensor_json(p) for n, p in model.named_parameters()}
    return params_init, out


def rank_main(rank, port):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), GLOO_SOCKET_IFNAME="lo")
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=WORLD)
    runs = []
    for spec in RUNS:
        params_init, out = run_one(rank, spec)
        runs.append({"params": params_init, "rank": out})
        dist.barrier()  # the runs do not overlap
    dist.destroy_process_group()
    return runs



def main():
    ranks = run_ranks(rank_main, WORLD, TIMEOUT_S)
    result = {"generator": "gen_ddp_join.py", "torch_version": torch.__version__, "world_size": WORLD,
              "dtype": "float64", "lr": LR, "param_order": ["w", "b", "u"], "runs": []}
    for i, spec in enumerate(RUNS):
        assert ranks[0][i]["params"] == ranks[1][i]["params"]
        result["runs"].append({"id": spec["id"], "options": {k: v for k, v in spec.items() if k != "id"},
                               "params": ranks[0][i]["params"], "ranks": [r[i]["rank"] for r in ranks]})
    write_json(result, here("ddp_join.json"))


if __name__ == "__main__":
    main()
