"""Module buffers under real PyTorch 1.13 DDP (gloo, 2 processes on 127.0.0.1): when the buffers are copied
from rank 0, and the version counters of parameters and buffers after each copy.

Run by hand from anywhere: /usr/bin/python3 tests/golden/gen_ddp_buffers.py
Writes ddp_buffers.json next to this script (deterministic; about 5 s).

The model (float32): out = lin(x) * scale, lin = Linear(4, 8) (seed 0 on every rank), plus
  - scale: a buffer of 8, filled with rank + 1 before DDP is built (so the construction broadcast shows);
  - empty: a buffer of 0 elements (does the construction broadcast bump its version? it does);
  - frozen: a parameter of 2 with requires_grad=False, filled with rank + 1 (not in the reducer, but 1.13's
    _sync_module_states broadcasts every named parameter).
Runs, each on a fresh model and DDP:
  - "sync_rules/broadcast_buffers=<b>": a sequence of forwards in modes "sync" (grad enabled, synchronized),
    "no_sync" (inside ddp.no_sync()) or "no_grad" (torch.no_grad()); before each, every rank fills scale in
    place with 100 * (step + 1) + rank; after each, scale's first value and version are recorded (a copy from
    rank 0 shows as rank 0's fill on rank 1); grad-enabled forwards are followed by out.sum().backward().
  - "two_forwards/broadcast_buffers=<b>": two forwards, then (out1.sum() + out2.sum()).backward(): str(e)
    of the RuntimeError, or null.
Layout: {"runs": {id: {"broadcast_buffers", "before_construction" and "after_construction": [per rank
{name: {"version", "first"}}] (every named parameter and buffer),
"steps": [{"mode", "ranks": [per rank {"scale_first", "scale_version", "weight_version"}]}],
"error": [per rank str or null]}}}.
"""
import json
import os
import sys

import torch
import torch.distributed as dist
import torch.nn as nn

sys.dont_write_bytecode = True  # keep __pycache__ out of tests/golden
from gen_tdp_params import here, run_ranks, write_json

WORLD = 2
TIMEOUT_S = 60
# The first forward syncs under no_sync too (require_forward_param_sync starts True); a forward that is not
# synchronized (no_sync or no_grad) turns the next forward's buffer broadcast off.
SYNC_RULE_STEPS = ["no_sync", "sync", "sync", "no_grad", "sync", "sync", "no_sync", "no_grad", "sync"]


class Model(nn.Module):
    def __init__(self, rank):
        super().__init__()
        torch.manual_seed(0)
        self.lin = nn.Linear(4, 8)
        self.frozen = nn.Parameter(torch.full((2,), rank + 1.0), requires_grad=False)
        self.register_buffer("scale", torch.full((8,), rank + 1.0))
        self.register_buffer("empty", torch.zeros(0))

    def forward(self, x):
        return self.lin(x) * self.scale


def states(model):
    named = dict(model.named_parameters())
    named.update(dict(model.named_buffers()))
    return {n: {"version": t._version, "first": float(t.reshape(-1)[0]) if t.numel() else None}
            for n, t in named.items()}


def run(rank, broadcast_buffers, kind):
    model = Model(rank)
    before = states(model)
    ddp = nn.parallel.DistributedDataParallel(model, broadcast_buffers=broadcast_buffers)
    out = {"before_construction": before, "after_construction": states(model), "steps": [], "error": None}
    x = torch.randn(3, 4, generator=torch.Generator().manual_seed(10 + rank))
    if kind == "two_forwards":
        y1, y2 = ddp(x), ddp(x)
        try:
            (y1.sum() + y2.sum()).backward()
        except RuntimeError as e:
            out["error"] = str(e)
        return out
    for step, mode in enumerate(SYNC_RULE_STEPS):
        with torch.no_grad():
            model.scale.fill_(100.0 * (step + 1) + rank)
        if mode == "no_grad":
            with torch.no_grad():
                ddp(x)
        elif mode == "no_sync":
            with ddp.no_sync():
                ddp(x).sum().backward()
        else:
            ddp(x).sum().backward()
        out["steps"].append({"scale_first": float(model.scale[0]), "scale_version": model.scale._version,
                             "weight_version": model.lin.weight._version})
    return out


RUNS = [(f"{kind}/broadcast_buffers={str(b).lower()}", kind, b)
        for kind in ("sync_rules", "two_forwards") for b in (True, False)]


def rank_main(rank, port):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), GLOO_SOCKET_IFNAME="lo")
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=WORLD)
    result = {id_: run(rank, b, kind) for id_, kind, b in RUNS}
    dist.barrier()
    dist.destroy_process_group()
    return result



def main():
    ranks = run_ranks(rank_main, WORLD, TIMEOUT_S)
    runs = {}
    for id_, kind, b in RUNS:
        r0, r1 = ranks[0][id_], ranks[1][id_]
        runs[id_] = {"kind": kind, "broadcast_buffers": b,
                     "before_construction": [r0["before_construction"], r1["before_construction"]],
                     "after_construction": [r0["after_construction"], r1["after_construction"]],
                     "steps": [{"mode": m, "ranks": [r0["steps"][i], r1["steps"][i]]}
                               for i, m in enumerate(SYNC_RULE_STEPS)] if kind == "sync_rules" else [],
                     "error": [r0["error"], r1["error"]]}
    write_json({"generator": "gen_ddp_buffers.py", "torch_version": torch.__version__, "world_size": WORLD,
                "dtype": "float32", "sync_rule_steps": SYNC_RULE_STEPS, "runs": runs}, here("ddp_buffers.json"))


if __name__ == "__main__":
    main()
