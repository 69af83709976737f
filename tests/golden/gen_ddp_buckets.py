"""PyTorch 1.13 DDP bucket assignment, for tinyddp's Reducer.

Writes ddp_buckets.json next to this script. Run by hand:

    /usr/bin/python3 tests/golden/gen_ddp_buckets.py

Three parts:
- "assignment": direct calls of torch.distributed._compute_bucket_assignment_by_size
  (the C++ compute_bucket_assignment_by_size) on the scenario model's parameters
  and on synthetic parameter lists, with the limits DDP uses: [sys.maxsize] at
  construction when find_unused_parameters=False or static_graph=True,
  [_DEFAULT_FIRST_BUCKET_BYTES, bucket_bytes_cap] otherwise and at the rebuild
  (where tensors arrive in gradient-ready order together with tensor_indices).
  For each call the inputs and the result are recorded, plus "as_passed_to_reducer":
  the two lists reversed, which is what DistributedDataParallel._ddp_init_helper
  hands to dist.Reducer at construction (the rebuild inside the Reducer does
  not reverse).
- "ddp_runs": real 2-rank gloo DDP runs (forked ranks, 127.0.0.1), recording
  after construction and after every forward/backward: the reducer's actual
  buckets (Reducer._get_zeros_like_grad_buckets(): bucket index -> parameter
  indices), and _get_ddp_logging_data() without the time/port fields.
- in runs with "comm_hook": a recording comm hook (divide by world size, then
  allreduce, like default_hooks.allreduce_hook) logs the order in which the
  reducer launches bucket allreduces in each backward.
"""
import json
import os
import re
import socket
import sys
import tempfile
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

sys.dont_write_bytecode = True  # keep __pycache__ out of tests/golden
from gen_scenario_model import ScenarioModel  # noqa: E402
from gen_tdp_params import here, write_json  # noqa: E402

MIB = 1024 * 1024
FIRST = dist._DEFAULT_FIRST_BUCKET_BYTES
CAP = 25 * MIB
MAXSIZE = sys.maxsize
WORLD = 2
# times, ports, environment, and gloo_num_threads (uninitialized in 1.13's logger)
_NONDET = re.compile(r"time|master_port|gloo_num_threads|cuda_visible_devices")

SCENARIO_NAMES = ["trunk.0.weight", "trunk.0.bias", "trunk.2.weight", "trunk.2.bias",
                  "head_a.weight", "head_a.bias", "head_b.weight", "head_b.bias",
                  "text_decoder.weight", "text_decoder.bias"]


class MLP(nn.Module):
    """Bigger parameters, so a 1 MiB cap splits them into several buckets."""

    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                                 nn.Linear(512, 256))

    def forward(self, x):
        return self.net(x)


# ---------------------------------------------------------------------------
# Part 1: direct calls
# ---------------------------------------------------------------------------
def assign(tensors, limits, tensor_indices=None):
    n = len(tensors)
    if tensor_indices is None:
        idx, lim = dist._compute_bucket_assignment_by_size(tensors, limits, [False] * n)
    else:
        idx, lim = dist._compute_bucket_assignment_by_size(tensors, limits, [False] * n,
                                                           tensor_indices)
    return [list(b) for b in idx], list(lim)


def case(name, note, tensors, limits, tensor_indices=None, names=None, construction=False):
    buckets, per_limits = assign(tensors, limits, tensor_indices)
    rec = {
        "name": name, "note": note,
        "inputs": {
            "shapes": [list(t.shape) for t in tensors],
            "numel": [t.numel() for t in tensors],
            "dtype": [str(t.dtype).replace("torch.", "") for t in tensors],
            "element_size": [t.element_size() for t in tensors],
            "bytes": [t.numel() * t.element_size() for t in tensors],
            "names": names,
            "bucket_size_limits": [int(x) for x in limits],
            "tensor_indices": tensor_indices,
        },
        "bucket_indices": buckets,
        "per_bucket_size_limits": [int(x) for x in per_limits],
        "bucket_bytes": [sum(tensors[(tensor_indices.index(i) if tensor_indices else i)].numel()
                             * tensors[(tensor_indices.index(i) if tensor_indices else i)].element_size()
                             for i in b) for b in buckets],
    }
    if construction:
        rec["as_passed_to_reducer"] = {"bucket_indices": list(reversed(buckets)),
                                       "per_bucket_size_limits": list(reversed(rec["per_bucket_size_limits"]))}
    return rec


def assignment_cases():
    out = []
    torch.manual_seed(0)
    m = ScenarioModel()
    ps = [p for p in m.parameters()]
    out.append(case("scenario/construction/default", "DDP construction, find_unused_parameters=False "
                    "(or static_graph=True): limits [sys.maxsize]", ps, [MAXSIZE], names=SCENARIO_NAMES,
                    construction=True))
    out.append(case("scenario/construction/find-unused", "DDP construction, find_unused_parameters=True: "
                    "limits [1 MiB, 25 MiB]", ps, [FIRST, CAP], names=SCENARIO_NAMES, construction=True))
    ready = [9, 8, 7, 6, 5, 4, 3, 2, 1, 0]
    out.append(case("scenario/rebuild/reverse-order", "rebuild: tensors in a gradient-ready order "
                    "(reverse registration order), tensor_indices = their parameter indices",
                    [ps[i] for i in ready], [FIRST, CAP], tensor_indices=ready, names=SCENARIO_NAMES))
    me = ScenarioModel(extra_unused=True)
    pe = list(me.parameters())
    names_e = ["unused_scale"] + SCENARIO_NAMES
    out.append(case("scenario-extra-unused/construction/default", "with unused_scale registered first "
                    "(11 parameters), limits [sys.maxsize]", pe, [MAXSIZE], names=names_e, construction=True))
    out.append(case("scenario-extra-unused/construction/find-unused", "with unused_scale, limits [1 MiB, 25 MiB]",
                    pe, [FIRST, CAP], names=names_e, construction=True))

    sizes = [300000, 10, 200000, 65536, 1000000, 5, 7000000, 262144, 262144]
    ts = [torch.empty(n, dtype=torch.float32) for n in sizes]
    for lname, limits in [("1MiB-25MiB", [FIRST, CAP]), ("maxsize", [MAXSIZE]),
                          ("1MiB-2MiB", [FIRST, 2 * MIB])]:
        out.append(case(f"synthetic/construction/{lname}", "synthetic float32 sizes, registration order, "
                        "no tensor_indices (buckets sorted by their smallest index)", ts, limits,
                        construction=True))
        rev = list(reversed(range(len(ts))))
        out.append(case(f"synthetic/rebuild-reverse/{lname}", "tensors in reverse order with tensor_indices "
                        "(as the rebuild passes them)", [ts[i] for i in rev], limits, tensor_indices=rev))
        perm = [6, 2, 8, 0, 5, 7, 1, 4, 3]
        out.append(case(f"synthetic/rebuild-permuted/{lname}", "tensors in an arbitrary ready order with "
                        "tensor_indices: no sorting, buckets follow the given order",
                        [ts[i] for i in perm], limits, tensor_indices=perm))
    # exact-limit boundary: 262144 float32 = exactly 1 MiB
    bsizes = [262144, 1, 262143, 1, 524288, 3]
    bts = [torch.empty(n) for n in bsizes]
    out.append(case("boundary/1MiB-2MiB", "a bucket closes as soon as its size >= the current limit "
                    "(262144 float32 = exactly 1 MiB)", bts, [FIRST, 2 * MIB], construction=True))
    out.append(case("boundary/limits-1MiB-1MiB-2MiB", "three limits: each closed bucket advances to the next "
                    "limit, the last one repeats", bts, [FIRST, FIRST, 2 * MIB], construction=True))
    # mixed dtypes: buckets are keyed by (dtype, device)
    msizes = [100000, 300000, 100000, 300000, 10, 10]
    mdt = [torch.float32, torch.float64, torch.float32, torch.float64, torch.float32, torch.float64]
    mts = [torch.empty(n, dtype=d) for n, d in zip(msizes, mdt)]
    out.append(case("mixed-dtype/1MiB-2MiB", "float32 and float64 interleaved: separate buckets per dtype, "
                    "each dtype starts with the first limit", mts, [FIRST, 2 * MIB], construction=True))
    out.append(case("mixed-dtype/maxsize", "float32 and float64 interleaved, [sys.maxsize]", mts, [MAXSIZE],
                    construction=True))
    return out


# ---------------------------------------------------------------------------
# Part 2: real DDP runs
# ---------------------------------------------------------------------------
RUNS = [
    {"id": "scenario/default", "model": "scenario", "options": {}, "comm_hook": False},
    {"id": "scenario/default/comm-hook", "model": "scenario", "options": {}, "comm_hook": True},
    {"id": "scenario/find-unused", "model": "scenario", "options": {"find_unused_parameters": True},
     "comm_hook": False},
    {"id": "scenario/static-graph", "model": "scenario", "options": {"static_graph": True}, "comm_hook": False},
    {"id": "scenario-extra-unused/find-unused", "model": "scenario-extra-unused",
     "options": {"find_unused_parameters": True}, "comm_hook": False},
    {"id": "mlp/cap-1MiB", "model": "mlp", "options": {"bucket_cap_mb": 1}, "comm_hook": False},
    {"id": "mlp/cap-1MiB/comm-hook", "model": "mlp", "options": {"bucket_cap_mb": 1}, "comm_hook": True},
    {"id": "mlp/cap-1MiB/find-unused", "model": "mlp", "options": {"bucket_cap_mb": 1,
                                                                  "find_unused_parameters": True},
     "comm_hook": True},
    {"id": "mlp/cap-1MiB/static-graph", "model": "mlp", "options": {"bucket_cap_mb": 1, "static_graph": True},
     "comm_hook": True},
]
ITERATIONS = 3


def _rank_main(rank, port, spec, outpath):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), GLOO_SOCKET_IFNAME="lo")
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=WORLD, timeout=timedelta(seconds=20))
    torch.manual_seed(0)
    if spec["model"] == "mlp":
        model = MLP()
    else:
        model = ScenarioModel(extra_unused=spec["model"] == "scenario-extra-unused")
    names = [n for n, _ in model.named_parameters()]
    ptr = {p.data_ptr(): i for i, p in enumerate(model.parameters())}
    ddp = DDP(model, **spec["options"])
    launches = []
    if spec["comm_hook"]:
        def hook(state, bucket):
            launches.append({"bucket": bucket.index(), "is_last": bucket.is_last(),
                             "param_indices": [ptr.get(p.data_ptr()) for p in bucket.parameters()],
                             "numel": bucket.buffer().numel()})
            t = bucket.buffer().div_(WORLD)
            return dist.all_reduce(t, async_op=True).get_future().then(lambda f: f.value()[0])
        ddp.register_comm_hook(None, hook)

    def buckets():
        return [{"index": b.index(), "param_indices": [ptr.get(p.data_ptr()) for p in b.parameters()],
                 "numel": b.buffer().numel()} for b in ddp.reducer._get_zeros_like_grad_buckets()]

    def logging_data():
        d = ddp._get_ddp_logging_data()
        return {k: d[k] for k in sorted(d) if not _NONDET.search(k)}

    snaps = [{"at": "after construction", "buckets": buckets(), "logging_data": logging_data()}]
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    gen = torch.Generator().manual_seed(1234 + 1000 * rank)
    for it in range(ITERATIONS):
        opt.zero_grad()
        if spec["model"] == "mlp":
            x = torch.randn(6, 256, generator=gen)
            y = torch.randn(6, 256, generator=gen)
            out = ddp(x)
            loss = F.mse_loss(out, y)
        else:
            x = torch.randn(6, 4, generator=gen)
            ya = torch.randn(6, 1, generator=gen)
            yb = torch.randint(0, 3, (6,), generator=gen)
            yt = torch.randn(6, 5, generator=gen)
            a, b, t = ddp(x)
            loss = F.mse_loss(a, ya) + F.cross_entropy(b, yb) + F.mse_loss(t, yt)
        snaps.append({"at": f"after forward of iteration {it}", "buckets": buckets(),
                      "logging_data": logging_data()})
        n0 = len(launches)
        loss.backward()
        snap = {"at": f"after backward of iteration {it}", "buckets": buckets(), "logging_data": logging_data()}
        if spec["comm_hook"]:
            snap["allreduce_launches"] = launches[n0:]
        snaps.append(snap)
        opt.step()
    with open(outpath, "w") as f:
        json.dump({"param_names": names, "param_numel": [p.numel() for p in model.parameters()],
                   "snapshots": snaps}, f)
    dist.barrier()
    dist.destroy_process_group()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def real_runs():
    ctx = mp.get_context("fork")  # torch is imported, no thread has started
    out = []
    with tempfile.TemporaryDirectory(prefix="ddp_buckets_") as tmp:
        for spec in RUNS:
            port = free_port()
            paths = [os.path.join(tmp, f"r{r}.json") for r in range(WORLD)]
            procs = [ctx.Process(target=_rank_main, args=(r, port, spec, paths[r])) for r in range(WORLD)]
            for p in procs:
                p.start()
            for p in procs:
                p.join(120)
                assert p.exitcode == 0, (spec["id"], p.exitcode)
            res = [json.load(open(p)) for p in paths]
            r0 = res[0]
            differs = []
            for s0, s1 in zip(r0["snapshots"], res[1]["snapshots"]):
                keys = sorted(k for k in set(s0["logging_data"]) | set(s1["logging_data"])
                              if s0["logging_data"].get(k) != s1["logging_data"].get(k))
                if s0["buckets"] != s1["buckets"] or s0.get("allreduce_launches") != s1.get("allreduce_launches"):
                    keys.append("<buckets or allreduce_launches>")
                differs.append({"at": s0["at"], "keys": keys})
            out.append({"id": spec["id"], "model": spec["model"], "options": spec["options"],
                        "comm_hook": spec["comm_hook"], "iterations": ITERATIONS,
                        "plan": "forward; backward(sum of all task losses); step" if spec["model"] != "mlp"
                        else "forward; backward(mse); step",
                        "param_names": r0["param_names"], "param_numel": r0["param_numel"],
                        "rank0": r0["snapshots"], "rank1_differs_from_rank0": differs})
            print(f"{spec['id']}: ok", file=sys.stderr)
    return out


def main():
    result = {
        "generator": "tests/golden/gen_ddp_buckets.py",
        "torch_version": torch.__version__,
        "signature": dist._compute_bucket_assignment_by_size.__doc__.strip().splitlines()[0],
        "constants": {"_DEFAULT_FIRST_BUCKET_BYTES": FIRST, "default_bucket_cap_bytes": CAP,
                      "sys.maxsize": MAXSIZE},
        "assignment": assignment_cases(),
        "ddp_runs": real_runs(),
    }
    write_json(result, here("ddp_buckets.json"))


if __name__ == "__main__":
    main()
