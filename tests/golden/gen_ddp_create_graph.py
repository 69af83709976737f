"""Behavioural reference for create_graph and autograd.grad under DDP (issue 18), on real PyTorch 1.13.1
DistributedDataParallel (gloo, 2 ranks on 127.0.0.1).

Writes two files next to this script. Run by hand, from anywhere:

    /usr/bin/python3 tests/golden/gen_ddp_create_graph.py            # both files
    /usr/bin/python3 tests/golden/gen_ddp_create_graph.py --only ID  # one plan run, JSON to stdout

- ddp_create_graph.json: plans of the plan language (`tinyddp repro --help`; apps/tinyddp/repro/plan.h) with
  backward(EXPR, create_graph), and static_graph with grad() before the one backward, run by
  gen_ddp_scenarios.py's machinery on the scenario model (same model, data and record format as
  ddp_scenarios.json). In 1.13 the scenario model's 10 parameters always share one bucket (the first
  iteration's bucket has no size limit, the rebuilt first bucket holds 1 MiB), so a create_graph backward
  writes a gradient that requires grad into one view of a bucket and then any write into another view of
  that bucket raises.
- ddp_create_graph_single.json: a model with ONE parameter (Linear(4, 1, bias=False)), so its bucket holds
  one view: loss = mean(ddp(x)^2), loss.backward(create_graph=True), then sum(w.grad^2) differentiated
  w.r.t. the weight. Records, per rank: the weight, x, the gradient PyTorch leaves in .grad (averaged or
  not), whether it requires grad, the rank-local gradient, the second-order gradient, and the C++ log
  lines (glog W) the backward printed.
"""
import hashlib
import json
import os
import socket
import sys
import tempfile

sys.dont_write_bytecode = True  # keep __pycache__ out of tests/golden
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import gen_ddp_scenarios as scen  # noqa: E402
from gen_ddp_patterns import R  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
FU = {"find_unused_parameters": True}
SG = {"static_graph": True}
CG = "forward; backward(a+b+t, create_graph); step"
# Per-task gradients for analysis (gradient surgery, GradNorm's G_i) with autograd.grad, then the one
# backward DDP reduces. The plan's grad() also assigns .grad by hand, which the backward then adds to.
PER_TASK_GRAD = "forward; grad(a, retain); grad(b+t, retain); backward(a+b+t); step"

RUNS = [
    # 1. backward(create_graph=True) under DDP
    R("create-graph", CG, "loss.backward(create_graph=True) of the summed task losses: every gradient but "
      "the ones of constants requires grad"),
    R("create-graph/find-unused", CG, "as create-graph, find_unused_parameters=True", **FU),
    R("create-graph/static-graph", CG, "as create-graph, static_graph=True (the first iteration's hooks only "
      "count; delay_all_reduce copies every gradient into the bucket at the end of the backward)", **SG),
    R("create-graph/after-first-iteration",
      "iter(1){ forward; backward(a+b+t) }; iter(2+){ forward; backward(a+b+t, create_graph) }; step",
      "a plain first iteration (the buckets are rebuilt: still one bucket), create_graph from iteration 2"),
    R("create-graph/constant-gradients", "forward; backward(dummy, create_graph); step",
      "create_graph on the dummy loss 0*sum(params): no gradient has history, nothing requires grad"),
    R("create-graph/retain", "forward; backward(a+b+t, retain, create_graph); step",
      "create_graph with retain_graph=True spelled out"),
    # 2. autograd.grad per task, then one backward
    R("per-task-grad", PER_TASK_GRAD, "torch.autograd.grad of each task's loss (retain_graph), then one "
      "backward of the sum"),
    R("per-task-grad/find-unused", PER_TASK_GRAD, "as per-task-grad, find_unused_parameters=True", **FU),
    R("per-task-grad/static-graph", PER_TASK_GRAD, "as per-task-grad, static_graph=True", **SG),
    R("per-task-grad/static-graph-from-iteration-2",
      "iter(1){ forward; backward(a+b+t) }; iter(2+){ forward; grad(a, retain); grad(b+t, retain); "
      "backward(a+b+t) }; step",
      "static_graph=True; a plain first iteration, per-task grad() only from iteration 2 on", **SG),
]

NOTES = {
    "runs": "as in ddp_patterns.json; the plan language's backward(EXPR[, retain][, create_graph]) calls "
            "loss.backward(retain_graph=True if retain else None, create_graph=...) (None: PyTorch's default, "
            "the value of create_graph); grad(...) assigns the results to .grad",
    "warnings": scen.NOTES["warnings"].replace("Python warnings (none occurred)", "Python warnings"),
    "create_graph_log": "reducer.cpp's 'Using DistributedDataParallel with create_graph=True ...' is a "
                        "C10_LOG_EVERY_N(WARNING, 1000) glog line (warnings_detail, source stderr, level W), "
                        "printed at the first create_graph gradient a process copies into a bucket, then at "
                        "every 1000th; the Python UserWarning 'Using backward() with create_graph=True will "
                        "create a reference cycle ...' comes from torch/csrc/autograd/engine.cpp",
}


# ---------------------------------------------------------------------------
# One parameter per bucket: values, sync and the second-order gradient
# ---------------------------------------------------------------------------
def digest(t):
    return hashlib.sha1(t.detach().contiguous().numpy().tobytes()).hexdigest()


def single_rank(rank, port, out_path, err_path):
    err_fd = os.open(err_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(err_fd, 2)
    import warnings

    import torch
    import torch.distributed as dist
    from datetime import timedelta
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=2,
                            timeout=timedelta(seconds=20))
    torch.manual_seed(100 + rank)   # different initial weights: DDP's construction broadcasts rank 0's
    model = torch.nn.Linear(4, 1, bias=False).double()
    ddp = torch.nn.parallel.DistributedDataParallel(model)
    w = model.weight
    x = torch.randn(6, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(7 + rank))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        loss = ddp(x).pow(2).mean()
        loss.backward(create_graph=True)
    g = w.grad
    (local,) = torch.autograd.grad(model(x).pow(2).mean(), w)
    (second,) = torch.autograd.grad(g.pow(2).sum(), w)
    recipes = ddp_recipes(torch, rank)
    rec = {"rank": rank, "recipes": recipes, "weight": w.detach().flatten().tolist(), "x": x.flatten().tolist(),
           "loss": loss.item(), "grad": g.detach().flatten().tolist(), "grad_digest": digest(g),
           "grad_requires_grad": g.requires_grad, "grad_fn": type(g.grad_fn).__name__ if g.grad_fn else None,
           "local_grad": local.flatten().tolist(), "second_order": second.flatten().tolist(),
           "python_warnings": sorted({str(c.message) for c in caught})}
    with open(out_path, "w") as f:
        json.dump(rec, f)
    dist.barrier()
    dist.destroy_process_group()


def ddp_recipes(torch, rank):
    """The issue's model, Sequential(Linear(4, 8), ReLU, Linear(8, 1)) in DDP (4 parameters, one bucket), with
    the higher-order part kept out of the DDP backward: each recipe's outcome, and the digests of the network
    gradients that the driver compares across ranks."""
    import torch.nn as nn
    out = {}

    def run(name, body):
        torch.manual_seed(5)
        net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1)).double()
        ddp = torch.nn.parallel.DistributedDataParallel(net)
        x = torch.randn(6, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(11 + rank))
        rec = {"error": None}
        try:
            rec.update(body(net, ddp, x))
            rec["grad_digests"] = [digest(p.grad) for p in net.parameters()]
        except RuntimeError as e:
            rec["error"] = str(e)
        out[name] = rec

    def penalty(net, ddp, x):
        # a gradient penalty: ||d loss / d params||^2 by autograd.grad(create_graph=True), then one backward
        loss = ddp(x).pow(2).mean()
        gs = torch.autograd.grad(loss, list(net.parameters()), create_graph=True)
        (loss + sum(g.pow(2).sum() for g in gs)).backward()
        return {}

    def gradnorm(net, ddp, x):
        # GradNorm's G_i = ||grad_W (w_i L_i)|| on the last shared layer W (net[0].weight) with
        # create_graph, the weights' gradient by autograd.grad, then one plain backward of sum_i w_i L_i
        w = torch.ones(2, dtype=torch.float64, requires_grad=True)
        y = ddp(x)
        losses = [y.pow(2).mean(), (y - 1).abs().mean()]
        G = torch.stack([torch.autograd.grad(w[i] * losses[i], net[0].weight, retain_graph=True,
                                             create_graph=True)[0].norm() for i in range(2)])
        balance = (G - G.mean().detach()).abs().sum()
        (w_grad,) = torch.autograd.grad(balance, w, retain_graph=True)
        (w * torch.stack(losses)).sum().backward()
        return {"G": G.tolist(), "w_grad": w_grad.tolist()}

    def textbook(net, ddp, x):
        # the same, but the balance loss backpropagated with backward(): it reaches the network through the
        # create_graph graph, after the reducer finalized the weighted loss's reduction
        w = torch.ones(2, dtype=torch.float64, requires_grad=True)
        y = ddp(x)
        losses = [y.pow(2).mean(), (y - 1).abs().mean()]
        (w * torch.stack(losses)).sum().backward(retain_graph=True)
        G = torch.stack([torch.autograd.grad(w[i] * losses[i], net[0].weight, retain_graph=True,
                                             create_graph=True)[0].norm() for i in range(2)])
        (G - G.mean().detach()).abs().sum().backward()
        return {"w_grad": w.grad.tolist()}

    run("penalty", penalty)
    run("gradnorm_grad", gradnorm)
    run("gradnorm_balance_backward", textbook)
    return out


def single_parameter():
    import torch
    import torch.multiprocessing as mp
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with tempfile.TemporaryDirectory(prefix="ddp_cg_") as tmp:
        outs = [os.path.join(tmp, f"r{r}.json") for r in range(2)]
        errs = [os.path.join(tmp, f"r{r}.stderr") for r in range(2)]
        procs = [mp.get_context("fork").Process(target=single_rank, args=(r, port, outs[r], errs[r]))
                 for r in range(2)]
        for p in procs:
            p.start()
        for p in procs:
            p.join(60)
            assert p.exitcode == 0, "a rank failed; see its stderr"
        ranks = []
        for r in range(2):
            with open(outs[r]) as f:
                rec = json.load(f)
            with open(errs[r]) as f:
                rec["logs"] = [{"level": e["level"], "file": e["file"], "message": e["message"]}
                               for e in scen.parse_stderr(f.read()) if e["level"] in ("W", "E")]
            ranks.append(rec)
    out = {"generator": "tests/golden/gen_ddp_create_graph.py", "torch_version": torch.__version__,
           "backend": "gloo", "ranks": 2,
           "model": "Linear(4, 1, bias=False), float64; rank r: torch.manual_seed(100 + r) before the model "
                    "(DDP broadcasts rank 0's weight); x (6, 4) from torch.Generator().manual_seed(7 + r)",
           "step": "loss = ddp(x).pow(2).mean(); loss.backward(create_graph=True); g = weight.grad; "
                   "local_grad = autograd.grad(model(x).pow(2).mean(), weight); "
                   "second_order = autograd.grad(g.pow(2).sum(), weight)",
           "grads_in_sync": ranks[0]["grad_digest"] == ranks[1]["grad_digest"],
           "recipes": {name: {"error": ranks[0]["recipes"][name]["error"],
                              "grads_in_sync": ranks[0]["recipes"][name].get("grad_digests")
                              == ranks[1]["recipes"][name].get("grad_digests")}
                       for name in ranks[0]["recipes"]},
           "recipes_note": "ddp_recipes(): the issue's model, Sequential(Linear(4, 8), ReLU, Linear(8, 1)) in DDP, "
                           "with the higher-order part kept out of the DDP backward: penalty (autograd.grad "
                           "create_graph, then one plain backward), gradnorm_grad (G_i by autograd.grad create_graph, "
                           "the weights' gradient by autograd.grad, one plain backward), gradnorm_balance_backward "
                           "(the balance loss by .backward(), after the DDP backward). grads_in_sync: the network's "
                           ".grad bitwise equal on both ranks; per rank in ranks[r].recipes",
           "ranks": ranks}
    with open(os.path.join(HERE, "ddp_create_graph_single.json"), "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    scen.main(RUNS, NOTES, "tests/golden/gen_ddp_create_graph.py", "ddp_create_graph.json")
    if "--only" not in sys.argv:
        single_parameter()
