"""The seed's multi-task DDP script and its fixes: one forward, then one backward() per task.

    PYTHONPATH=build/python python3 examples/multitask_ddp.py                  # the error
    PYTHONPATH=build/python python3 examples/multitask_ddp.py --fix combined   # one backward of a + b + t
    PYTHONPATH=build/python python3 examples/multitask_ddp.py --fix find-unused
    PYTHONPATH=build/python python3 examples/multitask_ddp.py --fix no-sync

Two ranks (threads over the "thread" backend), a shared trunk and three heads, three iterations, each rank on its
own data. Each variant is one of `tinyddp repro`'s scenarios and ends as it does (tests/python/test_examples.py
checks outcome, message, raising call, drifting parameters and warnings against `tinyddp repro NAME --json`):
  (none)       two-backward: backward(a, retain_graph=True), then backward(b + t): the second backward reaches
               the trunk again and the reducer raises "Expected to mark a variable ready only once".
  combined     combined-loss: backward(a + b + t), once per forward. Replicas stay equal.
  find-unused  find-unused: DDP(find_unused_parameters=True) with the two backwards. No error, but the reducer
               finalizes after backward(a): the gradients of backward(b + t) stay local and the replicas drift
               apart. PyTorch 1.13 says nothing; tinyddp says so on stderr.
  no-sync      no-sync-microbatch: two micro-batches accumulated, the first forward and backward inside
               no_sync(), the second synced, then one step. Replicas stay equal.
Written against PyTorch's API: replace the imports with torch's and it runs there (with the gloo backend).
"""
import argparse
import json
import sys
import warnings

import tinyddp as torch
import tinyddp.distributed as dist
import tinyddp.multiprocessing as mp
import tinyddp.nn as nn
import tinyddp.nn.functional as F
from tinyddp.nn.parallel import DistributedDataParallel as DDP

SCENARIOS = {None: "two-backward", "combined": "combined-loss", "find-unused": "find-unused",
             "no-sync": "no-sync-microbatch"}
ITERATIONS = 3


class MultiTask(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 8))
        self.head_a = nn.Linear(8, 1)         # regression
        self.head_b = nn.Linear(8, 3)         # 3 classes
        self.text_decoder = nn.Linear(8, 5)   # in the story, task b's loss is b + t

    def forward(self, x):
        h = self.trunk(x)
        return {"a": self.head_a(h), "b": self.head_b(h), "t": self.text_decoder(h)}


def micro_batch():
    return torch.randn(6, 4), torch.randn(6, 1), torch.randint(0, 3, (6,)), torch.randn(6, 5)


def task_losses(out, batch):
    _, ya, yb, yt = batch
    return F.mse_loss(out["a"], ya), F.cross_entropy(out["b"], yb), F.mse_loss(out["t"], yt)


def iteration(model, opt, fix, where):
    """One training iteration; `where` names the call in progress (reported if it raises)."""
    opt.zero_grad()
    if fix == "no-sync":
        with model.no_sync():
            where[0] = "forward #1"
            batch = micro_batch()
            a, b, t = task_losses(model(batch[0]), batch)
            where[0] = "backward #1"
            (a + b + t).backward()
        where[0] = "forward #2"
        batch = micro_batch()
        a, b, t = task_losses(model(batch[0]), batch)
        where[0] = "backward #2"
        (a + b + t).backward()
    else:
        where[0] = "forward #1"
        batch = micro_batch()
        a, b, t = task_losses(model(batch[0]), batch)
        if fix == "combined":
            where[0] = "backward #1"
            (a + b + t).backward()
        else:   # the seed's pattern; with find-unused too
            where[0] = "backward #1"
            a.backward(retain_graph=True)
            where[0] = "backward #2"
            (b + t).backward()
    where[0] = "step"
    opt.step()


def run(rank, world_size, fix, results):
    dist.init_process_group("thread", rank=rank, world_size=world_size)
    torch.manual_seed(0)   # the same initial replica on every rank (DDP broadcasts rank 0's anyway)
    model = DDP(MultiTask(), find_unused_parameters=(fix == "find-unused"))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    torch.manual_seed(1 + rank)   # each rank its own data
    result = {"error": None}
    where = [""]
    try:
        for i in range(1, ITERATIONS + 1):
            iteration(model, opt, fix, where)
    except RuntimeError as e:
        result["error"] = {"message": str(e), "raised_at": f"{where[0]} of iteration {i}"}
    result["params"] = {name: p.detach().tolist() for name, p in model.module.named_parameters()}
    results[rank] = result
    dist.destroy_process_group()


def train(fix, world_size=2):
    results = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mp.spawn(run, args=(world_size, fix, results), nprocs=world_size)
    errors = [results[r]["error"] for r in range(world_size) if results[r]["error"]]
    names = list(results[0]["params"])
    drifted = [n for n in names if any(results[r]["params"][n] != results[0]["params"][n] for r in range(world_size))]
    return {"scenario": SCENARIOS[fix], "outcome": "error" if errors else "ok",
            "errors": {r: results[r]["error"] for r in range(world_size)},
            "params_out_of_sync": [] if errors else drifted,
            "replicas_in_sync": None if errors else not drifted,
            "warnings": sorted({str(w.message) for w in caught})}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--fix", choices=[k for k in SCENARIOS if k], default=None)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    a = p.parse_args(argv)
    r = train(a.fix)
    if a.json:
        print(json.dumps(r))
        return 0
    print(f"{r['scenario']}: {r['outcome']}")
    for rank, error in r["errors"].items():
        if error:
            print(f"rank {rank}: RuntimeError at {error['raised_at']}: {error['message']}\n")
    if r["outcome"] == "ok":
        print("replicas in sync" if r["replicas_in_sync"] else
              "replicas DRIFTED APART: " + ", ".join(r["params_out_of_sync"]))
    for w in r["warnings"]:
        print("warning: " + w)
    return 0


if __name__ == "__main__":
    sys.exit(main())
