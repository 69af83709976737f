#!/usr/bin/env python3
"""PyTorch 1.13 peer for bench_allreduce and bench_ddp: gloo, 2 processes on 127.0.0.1, one thread each.

    /usr/bin/python3 bench/ddp_pytorch.py [--json out.json] [--iterations 30] [--only allreduce|ddp]

Optional: runs only where `import torch` works (Debian's python3-torch); nothing in the build or the tests
imports it. It measures what bench_allreduce and bench_ddp measure, the same way:

  allreduce  float32, 4 KiB to 64 MiB (x4): check (rank r holds (r+1) + i % 13; every rank counts elements that
             differ from the closed-form sum), then warm-up, then 7 repetitions of back-to-back
             all_reduce; a repetition's time is the slowest rank's; median. busbw = algbw * 2(n-1)/n.
  ddp step   the MLP 784-400x5-10 (ReLU, cross-entropy, 959,610 parameters), batch 64 per rank; variants
             local (no comm), flat (backward + one all_reduce of all gradients packed in one buffer, scaled
             by 1/n), DDP with bucket_cap_mb 0.25, 1, 4, 25, DDP at 25 with gradient_as_bucket_view=True
             (no copy back into .grad), and one process (rank 0 alone on the global
             batch of 2 x 64 rows while rank 1 waits); every step starts with zero_grad(set_to_none=True)
             (PyTorch 2.x's default; 1.13's is False); check that every DDP variant's .grad equals the flat
             one's (iterations 1-3, which include the bucket rebuild) and the one-process .grad to rounding,
             then timed round-robin, forward and backward per iteration, slowest rank, medians (min-max).
             parallel efficiency = step(one process) / step(ddp cap 25), per round, median (min-max).

The peer at its best: OMP_NUM_THREADS=1 and torch.set_num_threads(1) (2 ranks on 2 cores), OpenBLAS
as the BLAS when installed (libopenblas0-pthread). Gloo goes over TCP loopback.
"""
import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time

IN, HIDDEN, HIDDEN_LAYERS, CLASSES, BATCH = 784, 400, 5, 10, 64
CAPS_MB = [0.25, 1, 4, 25]
CHECK_ITERATIONS = 3
REPS = 7
MIN_BYTES, MAX_BYTES, SIZE_STEP = 4 << 10, 64 << 20, 4
BYTES_PER_REP = 64 << 20
ONE_PROCESS = "one process, N x B"
BUCKET_VIEW = "ddp 25 MB, bucket view"   # DDP at 25 MB with gradient_as_bucket_view=True
GLOBAL_TOLERANCE = 1e-4   # relative: the mean over N x B rows vs the mean of N means


def iterations_for(nbytes):
    return max(4, min(1000, BYTES_PER_REP // nbytes))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(args):
    """The parent: starts 2 ranks of this script and relays rank 0's output."""
    port = free_port()
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MASTER_ADDR="127.0.0.1",
               MASTER_PORT=str(port), WORLD_SIZE="2")
    procs = []
    for rank in range(2):
        cmd = [sys.executable, os.path.abspath(__file__), "--worker", "--iterations", str(args.iterations),
               "--only", args.only]
        if args.json:
            cmd += ["--json", args.json]
        procs.append(subprocess.Popen(cmd, env=dict(env, RANK=str(rank)),
                                      stdout=None if rank == 0 else subprocess.DEVNULL))
    return max(p.wait() for p in procs)


def worker(args):
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method="env://")
    rank, n = dist.get_rank(), dist.get_world_size()
    if rank == 0:
        # The BLAS the peer really runs on (Debian's torch takes whatever libblas.so.3 the alternatives select).
        torch.ones(2, 2) @ torch.ones(2, 2)
        with open("/proc/self/maps") as fh:
            blas = sorted({os.path.realpath(line.split()[-1]) for line in fh if "blas" in line.split()[-1]})
        print("# PyTorch's BLAS: " + (", ".join(blas) or "none mapped"))
        if not any("openblas" in b for b in blas):
            print("# warning: not OpenBLAS, so the peer's compute is not at its best (install libopenblas0-pthread; "
                  "the reference BLAS is many times slower)", flush=True)

    def max_over_ranks(values):
        t = torch.tensor(values, dtype=torch.float64)
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        return t.tolist()

    # ---------------- allreduce ----------------
    rows = []
    nbytes = MIN_BYTES
    while nbytes <= MAX_BYTES and args.only != "ddp":
        count = nbytes // 4
        idx = torch.arange(count, dtype=torch.int64) % 13
        buf = (rank + 1) + idx.to(torch.float32)
        dist.all_reduce(buf)
        expected = n * (n + 1) // 2 + n * idx.to(torch.float32)
        wrong = torch.tensor([float((buf != expected).sum())], dtype=torch.float64)
        dist.all_reduce(wrong)
        buf.zero_()
        iters = iterations_for(nbytes)
        for _ in range(max(2, iters // 4)):
            dist.all_reduce(buf)
        reps = []
        for _ in range(REPS):
            dist.barrier()
            t0 = time.perf_counter()
            for _ in range(iters):
                dist.all_reduce(buf)
            reps.append(max_over_ranks([(time.perf_counter() - t0) / iters])[0])
        s = statistics.median(reps)
        algbw = nbytes / s / 1e9
        rows.append({"bytes": nbytes, "count": count, "time_us": s * 1e6, "algbw_gbs": algbw,
                     "busbw_gbs": algbw * 2 * (n - 1) / n, "wrong": int(wrong.item())})
        nbytes *= SIZE_STEP
    if rank == 0 and rows:
        print(f"\n# allreduce, PyTorch {torch.__version__} gloo (TCP loopback), {n} ranks, float32, sum; "
              f"time = median of {REPS} repetitions, slowest rank")
        print(f"{'size(B)':>12} {'count':>12} {'type':>6} {'time(us)':>10} {'algbw(GB/s)':>12} "
              f"{'busbw(GB/s)':>12} {'#wrong':>7}")
        for r in rows:
            print(f"{r['bytes']:>12} {r['count']:>12} {'float':>6} {r['time_us']:>10.1f} {r['algbw_gbs']:>12.3f} "
                  f"{r['busbw_gbs']:>12.3f} {r['wrong']:>7}")
        print("# " + ("All results match." if all(r["wrong"] == 0 for r in rows) else "MISMATCH (see #wrong)"),
              flush=True)

    # ---------------- DDP step ----------------
    if args.only == "allreduce":
        return finish(args, rank, torch, n, rows, None)

    def make_mlp():
        torch.manual_seed(0)
        layers = []
        for i in range(HIDDEN_LAYERS):
            layers += [torch.nn.Linear(IN if i == 0 else HIDDEN, HIDDEN), torch.nn.ReLU()]
        return torch.nn.Sequential(*layers, torch.nn.Linear(HIDDEN, CLASSES))

    variants = [{"name": "local (no comm)", "cap_mb": 0, "comm": False}, {"name": "flat allreduce", "cap_mb": 0, "comm": True}]
    for cap in CAPS_MB:
        variants.append({"name": f"ddp cap {cap:g} MB" + (" (default)" if cap == 25 else ""), "cap_mb": cap, "comm": True})
    variants.append({"name": BUCKET_VIEW, "cap_mb": 25, "comm": True, "bucket_view": True})
    variants.append({"name": ONE_PROCESS, "cap_mb": 0, "comm": False, "global": True})
    for v in variants:
        v["model"] = make_mlp()
        v["params"] = list(v["model"].parameters())
        v["ddp"] = DDP(v["model"], bucket_cap_mb=v["cap_mb"], gradient_as_bucket_view=v.get("bucket_view", False)) \
            if v["cap_mb"] else None
        total = sum(p.numel() for p in v["params"])
        v["flat"] = torch.zeros(total) if v["comm"] and not v["ddp"] else None
        v["fwd"], v["bwd"] = [], []
    batches = []
    for r in range(n):   # every rank's rows; rank 0 concatenates them for the one-process variant
        torch.manual_seed(1000 + r)
        batches.append((torch.randn(BATCH, IN), torch.randint(0, CLASSES, (BATCH,))))
    x, y = batches[rank]
    gx, gy = torch.cat([b[0] for b in batches]), torch.cat([b[1] for b in batches])
    loss_fn = torch.nn.CrossEntropyLoss()

    def step(v):
        v["model"].zero_grad(set_to_none=True)   # PyTorch 2.x's default (1.13's: False)
        dist.barrier()
        if v.get("global") and rank != 0:
            return 0.0, 0.0   # the others idle (at the next step's barrier)
        t0 = time.perf_counter()
        loss = loss_fn((v["ddp"] or v["model"])(gx if v.get("global") else x), gy if v.get("global") else y)
        t1 = time.perf_counter()
        loss.backward()
        if v["flat"] is not None:
            flat, off = v["flat"], 0
            for p in v["params"]:   # pack, dividing by the world size as the reducer does
                k = p.numel()
                torch.mul(p.grad.view(-1), 1.0 / n, out=flat[off:off + k])
                off += k
            dist.all_reduce(flat)
            off = 0
            for p in v["params"]:   # unpack
                k = p.numel()
                p.grad.view(-1).copy_(flat[off:off + k])
                off += k
        return t1 - t0, time.perf_counter() - t1

    worst, global_rel = 0.0, 0.0
    for _ in range(CHECK_ITERATIONS):
        for v in variants:
            step(v)
        ref = variants[1]["params"]
        for v in variants[2:-1]:
            for p, q in zip(v["params"], ref):
                worst = max(worst, float((p.grad - q.grad).abs().max()))
        if rank == 0:
            scale = max(float(q.grad.abs().max()) for q in ref)
            d = max(float((p.grad - q.grad).abs().max()) for p, q in zip(variants[-1]["params"], ref))
            global_rel = max(global_rel, d / scale)
    worst, global_rel = max_over_ranks([worst, global_rel])
    if worst != 0 or not global_rel < GLOBAL_TOLERANCE:
        if rank == 0:
            print(f"MISMATCH: DDP's averaged gradients differ from the flat all_reduce's by up to {worst}, or one "
                  f"process on the global batch by {global_rel} relative", file=sys.stderr)
        return 1

    nv = len(variants)
    for it in range(args.iterations):
        for j in range(nv):
            v = variants[(j + it) % nv]
            f, b = step(v)
            v["fwd"].append(f)
            v["bwd"].append(b)
    out = []
    steps = {}
    for v in variants:
        f, b = max_over_ranks(v["fwd"]), max_over_ranks(v["bwd"])
        steps[v["name"]] = [a + c for a, c in zip(f, b)]
        if v["ddp"]:
            # DDP's logging data: bucket sizes in bytes, launch order, after the rebuild at iteration 2.
            logged = v["ddp"]._get_ddp_logging_data()
            sizes = logged.get("rebuilt_bucket_sizes") or logged.get("bucket_sizes", "")
            bucket_mb = [int(s) / (1 << 20) for s in str(sizes).split(",") if s.strip()]
        else:
            bucket_mb = [sum(p.numel() for p in v["params"]) * 4 / (1 << 20)] if v["comm"] else [0.0]
        st = steps[v["name"]]
        out.append({"name": v["name"], "cap_mb": v["cap_mb"], "buckets": len(bucket_mb) if v["comm"] else 0,
                    "bucket_mb": bucket_mb, "fwd_ms": statistics.median(f) * 1e3, "bwd_ms": statistics.median(b) * 1e3,
                    "step_ms": statistics.median(st) * 1e3, "step_min_ms": min(st) * 1e3, "step_max_ms": max(st) * 1e3})
    ddp_name = next(v["name"] for v in variants if v["cap_mb"] == 25)
    eff = [a / c for a, c in zip(steps[ONE_PROCESS], steps[ddp_name])]
    ddp = {"params": sum(p.numel() for p in variants[0]["params"]), "batch_per_rank": BATCH,
           "timed_iterations": args.iterations, "zero_grad": "set_to_none=True", "check_max_abs_diff": worst,
           "global_rel_diff": global_rel, "efficiency": statistics.median(eff), "efficiency_min": min(eff),
           "efficiency_max": max(eff), "rows": out}
    if rank == 0:
        params = ddp["params"]
        print(f"\n# DDP step, PyTorch {torch.__version__} gloo, {n} ranks: MLP {IN}-{HIDDEN}x{HIDDEN_LAYERS}-{CLASSES}, ReLU "
              f"({params} params, {params * 4 / (1 << 20):.2f} MiB f32), batch {BATCH} per rank; "
              "zero_grad(set_to_none=True) (PyTorch 2.x's default) before every step")
        print(f"# check: every DDP variant's averaged .grad == flat all_reduce's, iterations 1-{CHECK_ITERATIONS}: "
              f"max |diff| = {worst:g}; one process on the {n} x {BATCH} batch: max |diff| / max |grad| = "
              f"{global_rel:.2g} (< {GLOBAL_TOLERANCE:g}). All results match. Starting benchmarks.")
        print(f"# medians (min-max) of {args.iterations} iterations (slowest rank each); bwd includes the "
              "communication; ratio = step / step(flat)")
        flat = next(r["step_ms"] for r in out if r["name"].startswith("flat"))
        local = next(r["step_ms"] for r in out if r["name"].startswith("local"))
        ddp25 = next(r["step_ms"] for r in out if r["cap_mb"] == 25)
        print(f"{'variant':<24} {'fwd(ms)':>8} {'bwd(ms)':>9} {'step(ms)':>9} {'(min-max)':>17} {'vs flat':>8} "
              f"{'buckets':>7}  bucket sizes (MiB, launch order)")
        for r in out:
            rng = f"({r['step_min_ms']:.2f}-{r['step_max_ms']:.2f})"
            print(f"{r['name']:<24} {r['fwd_ms']:>8.2f} {r['bwd_ms']:>9.2f} {r['step_ms']:>9.2f} {rng:>17} "
                  f"{r['step_ms'] / flat:>8.3f} {r['buckets']:>7}  " + " ".join(f"{m:.2f}" for m in r["bucket_mb"]))
        print(f"# reducer overhead = step(ddp cap 25) / step(flat) = {ddp25 / flat:.3f}; communication in the flat "
              f"step = step(flat) - step(local) = {flat - local:.2f} ms")
        print(f"# parallel efficiency = throughput of {n} ranks / throughput of one process on {n} x {BATCH} = "
              f"step(one process) / step(ddp cap 25), per round: {ddp['efficiency']:.3f} "
              f"({ddp['efficiency_min']:.3f}-{ddp['efficiency_max']:.3f})", flush=True)
    return finish(args, rank, torch, n, rows, ddp)


def finish(args, rank, torch, n, rows, ddp):
    if rank == 0 and args.json:
        with open(args.json, "w") as fh:
            json.dump({"bench": "pytorch", "torch": torch.__version__, "backend": "gloo", "ranks": n,
                       "allreduce": {"reps": REPS, "rows": rows}, "ddp": ddp}, fh, indent=2)
    torch.distributed.barrier()
    torch.distributed.destroy_process_group()
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", help="also write the results as JSON to this file")
    ap.add_argument("--iterations", type=int, default=30, help="timed iterations per DDP variant")
    ap.add_argument("--only", choices=["all", "allreduce", "ddp"], default="all", help="run one of the two parts")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(args)
    try:
        import torch  # noqa: F401  (only to fail early and clearly)
    except ImportError:
        print("ddp_pytorch.py: torch is not importable by " + sys.executable + "; skipped", file=sys.stderr)
        return 0
    return launch(args)


if __name__ == "__main__":
    sys.exit(main())
