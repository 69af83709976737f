# The seed's multi-task DDP patterns written as Python scripts on 2 spawn ranks (the `tinyddp repro` model and
# plans, in PyTorch's API): each gives the outcome, exception type, message, raising call, replica
# synchronization and drift warning that `tinyddp repro NAME --json` reports for it (and so, through
# tests/apps/repro_golden_test.cpp, what PyTorch 1.13.1 does).
import json
import os
import subprocess
import warnings

import pytest

import tinyddp as torch
import tinyddp.distributed as dist
import tinyddp.multiprocessing as mp
import tinyddp.nn as nn
import tinyddp.nn.functional as F
from tinyddp.nn.parallel import DistributedDataParallel as DDP


class ScenarioModel(nn.Module):
    """models/scenario/scenario_model.h: [unused_scale], trunk Linear(4, 8) -> ReLU -> Linear(8, 8), head_a (1),
    head_b (3 classes), text_decoder (5); `mode` is the plan's forward(...)."""

    def __init__(self, extra_unused_parameter=False):
        super().__init__()
        if extra_unused_parameter:
            self.unused_scale = nn.Parameter(torch.ones(1))
        self.trunk = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 8))
        self.head_a = nn.Linear(8, 1)
        self.head_b = nn.Linear(8, 3)
        self.text_decoder = nn.Linear(8, 5)

    def forward(self, x, mode="normal"):
        h = self.trunk(x)
        if mode == "detach":
            hd = h.detach()
            return self.head_a(h), self.head_b(hd), self.text_decoder(hd)
        a, b = self.head_a(h), self.head_b(h)
        if mode == "no_text":
            return a, b
        t = self.text_decoder(h)
        return (a, b) if mode == "drop_text" else (a, b, t)


def parse(plan):
    """The seed's plan language: forward[(mode)], backward(EXPR[, retain]), no_sync{ ... }, step."""
    steps, depth, cur, parts = [], 0, "", []
    for ch in plan:
        depth += ch in "({"
        depth -= ch in ")}"
        if ch == ";" and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    parts.append(cur.strip())
    for p in filter(None, parts):
        if p.startswith("no_sync"):
            steps.append(("no_sync", parse(p[p.index("{") + 1:p.rindex("}")])))
        elif p.startswith("forward"):
            steps.append(("forward", p[8:-1] if "(" in p else "normal"))
        elif p.startswith("backward"):
            expr, _, retain = p[9:-1].partition(",")
            steps.append(("backward", [t.strip() for t in expr.split("+")], retain.strip() == "retain"))
        else:
            assert p == "step", p
            steps.append(("step",))
    return steps


def run_plan(rank, plan, options, results):
    """One rank of the scenario; records its error (type, message, call) and final parameters."""
    dist.init_process_group("thread")
    torch.manual_seed(rank + 1)   # ranks start apart; DDP's construction broadcasts rank 0's
    model = ScenarioModel(options.get("extra_unused_parameter", False))
    record = {"error": None}
    ddp = DDP(model, find_unused_parameters=options["find_unused_parameters"],
              static_graph=options["static_graph"])
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    state = {}
    where = ["DistributedDataParallel construction"]

    def loss_of(terms):
        out, (ya, yb, yt) = state["out"], state["targets"]
        values = {"a": lambda: F.mse_loss(out[0], ya), "b": lambda: F.cross_entropy(out[1], yb),
                  "t": lambda: F.mse_loss(out[2], yt),
                  "dummy": lambda: 0 * sum(p.sum() for p in model.parameters())}
        return sum(values[t]() for t in terms)

    def run(steps, it, counts):
        for step in steps:
            if step[0] == "no_sync":
                with ddp.no_sync():
                    run(step[1], it, counts)
                continue
            counts[step[0]] = counts.get(step[0], 0) + 1
            where[0] = f"{step[0]} #{counts[step[0]]} of iteration {it}"
            if step[0] == "forward":
                x = torch.randn(6, 4)
                state["targets"] = (torch.randn(6, 1), torch.tensor([0, 1, 2, 0, 1, 2]), torch.randn(6, 5))
                state["out"] = ddp(x, mode=step[1])
            elif step[0] == "backward":
                loss_of(step[1]).backward(retain_graph=step[2])
            else:
                opt.step()

    try:
        for it in range(1, 4):
            opt.zero_grad()
            run(plan, it, {})
    except Exception as e:  # noqa: BLE001 - the outcome under test
        record["error"] = {"type": type(e).__name__, "message": str(e), "raised_at": where[0]}
    record["params"] = [p.detach().tolist() for p in model.parameters()]   # exact: f32 values as Python floats
    results[rank] = record


SEED_PATTERNS = ["two-backward", "find-unused", "combined-loss", "dummy-loss", "dummy-in-loss", "accumulate",
                 "no-sync-microbatch", "detach-split", "unused-param", "static-graph"]


@pytest.mark.parametrize("scenario", SEED_PATTERNS)
def test_seed_pattern_as_a_python_script_matches_the_repro(tinyddp_bin, recorded_by_python, capsys, scenario):
    env = {k: v for k, v in os.environ.items() if k != "TORCH_DISTRIBUTED_DEBUG"}
    run = subprocess.run([tinyddp_bin, "repro", scenario, "--json"], capture_output=True, text=True, env=env)
    assert run.returncode in (0, 1), run.stderr   # 1: the reproduced program raised (README, exit codes)
    ref = json.loads(run.stdout)
    results = {}
    # One recorder for both rank threads (catch_warnings swaps process-wide state: one per thread would race).
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mp.spawn(run_plan, args=(parse(ref["plan"]), ref["options"], results), nprocs=2)
    assert sorted(results) == [0, 1]
    for rank, mine in results.items():
        theirs = ref["rank_outcomes"][rank]
        if theirs["outcome"] == "ok":
            assert mine["error"] is None, mine["error"]
        else:
            assert mine["error"] == {"type": theirs["type"], "message": theirs["message"],
                                     "raised_at": theirs["raised_at"]}
    assert (results[0]["params"] == results[1]["params"]) == ref["replicas_in_sync"]
    # The warnings 1.13 records, recorded; tinyddp's own report of gradients DDP never averaged, on stderr
    # exactly when the repro has it.
    assert sorted({str(w.message) for w in caught}) == sorted({w for w in ref["warnings"] if recorded_by_python(w)})
    printed = capsys.readouterr().err
    assert ("] tinyddp: " in printed) == any(w.startswith("tinyddp: ") for w in ref["warnings"])
