"""Activation checkpointing under DDP: the famous "Expected to mark a variable ready only once" and its fixes.

    PYTHONPATH=build/python python3 examples/checkpoint_ddp.py                        # the error
    PYTHONPATH=build/python python3 examples/checkpoint_ddp.py --fix non-reentrant    # use_reentrant=False
    PYTHONPATH=build/python python3 examples/checkpoint_ddp.py --fix static-graph     # DDP(static_graph=True)
    PYTHONPATH=build/python python3 examples/checkpoint_ddp.py --fix no-find-unused   # find_unused_parameters=False
    PYTHONPATH=build/python python3 examples/checkpoint_ddp.py --frozen-input         # the other classic

Two ranks (threads over the "thread" backend), a trunk Linear(4, 8) -> ReLU -> Linear(8, 8) whose second Linear
runs under torch.utils.checkpoint, three heads, one combined loss, three iterations. Each variant is one of
`tinyddp repro`'s scenarios and ends as it does (tests/python/test_examples.py checks it against
`tinyddp repro NAME --json`):
  (none)          checkpoint: the reentrant checkpoint (1.13's default) with find_unused_parameters=True. DDP's
                  forward searches the graph for unused parameters, but the graph it sees ends at the checkpoint's
                  node: trunk.2 looks unused and is marked ready at once; the recomputation in the backward then
                  fires trunk.2's hooks in a nested backward, and the reducer raises "Expected to mark a variable
                  ready only once ... Parameter at index 3 has been marked as ready twice".
  non-reentrant   checkpoint-non-reentrant: use_reentrant=False keeps the ordinary graph (saved-tensor hooks
                  recompute the activations), so the search sees trunk.2. No error; 1.13 prints (to stderr)
                  its "did not find any unused parameters" warning, since none is.
  static-graph    checkpoint-static-graph: DDP(static_graph=True) learns the hooks of the first iteration and
                  stops searching. No error; 1.13 warns that find_unused_parameters is redundant with it.
  no-find-unused  checkpoint-no-find-unused: without the search nothing is marked early. No error.
  --frozen-input  checkpoint-frozen-input: trunk.0 frozen after the wrap (no find_unused_parameters): the
                  checkpoint's input does not require grad, so PyTorch warns "None of the inputs have
                  requires_grad=True. Gradients will be None", trunk.2 gets no gradient, and the next forward
                  raises "Expected to have finished reduction in the prior iteration".
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
import tinyddp.utils.checkpoint  # noqa: F401  (torch.utils.checkpoint)
from tinyddp.nn.parallel import DistributedDataParallel as DDP

FIXES = {None: "checkpoint", "non-reentrant": "checkpoint-non-reentrant", "static-graph": "checkpoint-static-graph",
         "no-find-unused": "checkpoint-no-find-unused"}
ITERATIONS = 3


class MultiTask(nn.Module):
    def __init__(self, use_reentrant):
        super().__init__()
        self.use_reentrant = use_reentrant
        self.trunk = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 8))
        self.head_a = nn.Linear(8, 1)
        self.head_b = nn.Linear(8, 3)
        self.text_decoder = nn.Linear(8, 5)

    def forward(self, x):
        h = self.trunk[1](self.trunk[0](x))
        h = torch.utils.checkpoint.checkpoint(self.trunk[2], h, use_reentrant=self.use_reentrant)
        return {"a": self.head_a(h), "b": self.head_b(h), "t": self.text_decoder(h)}


def batch():
    return torch.randn(6, 4), torch.randn(6, 1), torch.randint(0, 3, (6,)), torch.randn(6, 5)


def run(rank, world_size, fix, frozen_input, results):
    dist.init_process_group("thread", rank=rank, world_size=world_size)
    torch.manual_seed(0)
    model = DDP(MultiTask(use_reentrant=(fix != "non-reentrant")),
                find_unused_parameters=(fix != "no-find-unused" and not frozen_input),
                static_graph=(fix == "static-graph"))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    if frozen_input:   # frozen after the wrap, as the classic report does (an embedding frozen for fine-tuning)
        model.module.trunk[0].requires_grad_(False)
    torch.manual_seed(1 + rank)   # each rank its own data
    result = {"error": None}
    where = ""
    try:
        for i in range(1, ITERATIONS + 1):
            opt.zero_grad()
            where = "forward #1"
            x, ya, yb, yt = batch()
            out = model(x)
            loss = F.mse_loss(out["a"], ya) + F.cross_entropy(out["b"], yb) + F.mse_loss(out["t"], yt)
            where = "backward #1"
            loss.backward()
            where = "step #1"
            opt.step()
    except RuntimeError as e:
        result["error"] = {"message": str(e), "raised_at": f"{where} of iteration {i}"}
    result["params"] = {name: p.detach().tolist() for name, p in model.module.named_parameters()}
    results[rank] = result
    dist.destroy_process_group()


def train(fix, frozen_input, world_size=2):
    results = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mp.spawn(run, args=(world_size, fix, frozen_input, results), nprocs=world_size)
    errors = [results[r]["error"] for r in range(world_size) if results[r]["error"]]
    names = list(results[0]["params"])
    drifted = [n for n in names if any(results[r]["params"][n] != results[0]["params"][n] for r in range(world_size))]
    return {"scenario": "checkpoint-frozen-input" if frozen_input else FIXES[fix],
            "outcome": "error" if errors else "ok",
            "errors": {r: results[r]["error"] for r in range(world_size)},
            "params_out_of_sync": [] if errors else drifted,
            "replicas_in_sync": None if errors else not drifted,
            "warnings": sorted({str(w.message) for w in caught if issubclass(w.category, UserWarning)})}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--fix", choices=[k for k in FIXES if k], default=None)
    p.add_argument("--frozen-input", action="store_true", help="trunk.0 frozen: the checkpoint's input needs no grad")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    a = p.parse_args(argv)
    if a.frozen_input and a.fix:
        p.error("--frozen-input is a variant of the plain script; give it without --fix")
    r = train(a.fix, a.frozen_input)
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
