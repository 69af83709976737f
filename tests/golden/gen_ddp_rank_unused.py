"""A parameter used on some ranks only, under find_unused_parameters=True, on real PyTorch 1.13 DDP
(gloo, 2 processes on 127.0.0.1): what every rank's .grad holds after each backward.

Run by hand from anywhere: /usr/bin/python3 tests/golden/gen_ddp_rank_unused.py
Writes ddp_rank_unused.json next to this script (deterministic; about 5 s).

The model (float64): out = x @ w.T (+ b where the iteration uses b on this rank); u is never used.
loss = mean((out - y)^2). Three iterations, no optimizer step, so .grad accumulates unless cleared:
  1. grads cleared (None); b used on rank 0 only
  2. grads kept;           b used on rank 0 only (rank 1's b.grad is defined, from iteration 1)
  3. grads cleared;        b used on rank 1 only
What it shows: a locally unused but globally used parameter (b on the rank that skips it) receives the
averaged gradient; a parameter unused on every rank (u) keeps .grad None.

Layout: {"params": {name: tensor}, "param_order": [...], "iterations": [{"clear_grads", "b_used_on_ranks",
"data": [per rank {"x", "y"}], "grads": [per rank {name: tensor or null}]}]}, tensors as
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
ITERATIONS = [  # (clear grads before the forward, ranks whose forward uses b)
    (True, [0]),
    (False, [0]),
    (True, [1]),
]


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        g = torch.Generator().manual_seed(0)
        self.w = nn.Parameter(torch.randn(3, 4, generator=g, dtype=torch.float64))
        self.b = nn.Parameter(torch.randn(3, generator=g, dtype=torch.float64))
        self.u = nn.Parameter(torch.randn(2, generator=g, dtype=torch.float64))

    def forward(self, x, use_b):
        out = x @ self.w.t()
        return out + self.b if use_b else out


def data(rank, it):
    g = torch.Generator().manual_seed(100 * (it + 1) + rank)
    return torch.randn(5, 4, generator=g, dtype=torch.float64), torch.randn(5, 3, generator=g, dtype=torch.float64)


def rank_main(rank, port):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), GLOO_SOCKET_IFNAME="lo")
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=WORLD)
    model = Model()
    ddp = nn.parallel.DistributedDataParallel(model, find_unused_parameters=True)
    out = {"params": {n: tensor_json(p) for n, p in model.named_parameters()},
           "param_order": [n for n, _ in model.named_parameters()], "iterations": []}
    for it, (clear, b_ranks) in enumerate(ITERATIONS):
        if clear:
            for p in model.parameters():
                p.grad = None
        x, y = data(rank, it)
        loss = ((ddp(x, rank in b_ranks) - y) ** 2).mean()
        loss.backward()
        out["iterations"].append({
            "data": {"x": tensor_json(x), "y": tensor_json(y)},
            "grads": {n: None if p.grad is None else tensor_json(p.grad) for n, p in model.named_parameters()}})
    dist.barrier()
    dist.destroy_process_group()
    return out



def main():
    ranks = run_ranks(rank_main, WORLD, TIMEOUT_S)
    assert ranks[0]["params"] == ranks[1]["params"]
    result = {"generator": "gen_ddp_rank_unused.py", "torch_version": torch.__version__, "world_size": WORLD,
              "dtype": "float64", "params": ranks[0]["params"], "param_order": ranks[0]["param_order"],
              "iterations": []}
    for it, (clear, b_ranks) in enumerate(ITERATIONS):
        result["iterations"].append({
            "clear_grads": clear, "b_used_on_ranks": b_ranks,
            "data": [r["iterations"][it]["data"] for r in ranks],
            "grads": [r["iterations"][it]["grads"] for r in ranks]})
    write_json(result, here("ddp_rank_unused.json"))


if __name__ == "__main__":
    main()
