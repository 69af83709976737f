"""Shared helpers for tinyddp golden data (used by the gen_*.py scripts): writers, and run_ranks for the
generators that need a real multi-process gloo group.

Parameter text format (tinyddp parameters v1):

    # tinyddp parameters v1
    <name> <dtype> <ndim> <d0> ... <d_{ndim-1}>
    <v0> <v1> ... <v_{numel-1}>

One header/values line pair per entry of module.named_parameters(), in order.
Values are row-major, each written as repr(float(v)) (shortest round-trip).
"""
import json
import os
import socket
import sys
import tempfile
import time

import torch

_DTYPES = {torch.float32: "f32", torch.float64: "f64"}


def _fmt(values):
    return " ".join(repr(float(v)) for v in values)


def write_params(module, path):
    """Write module.named_parameters() to `path` in tinyddp parameter format."""
    lines = ["# tinyddp parameters v1"]
    for name, p in module.named_parameters():
        t = p.detach().cpu().contiguous()
        dims = " ".join(str(d) for d in t.shape)
        header = f"{name} {_DTYPES[t.dtype]} {t.dim()}"
        lines.append(header + (" " + dims if dims else ""))
        lines.append(_fmt(t.reshape(-1).tolist()))
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def tensor_json(t):
    """Plain tensor -> {"shape": [...], "values": [row-major floats]}."""
    t = t.detach().cpu().contiguous()
    return {"shape": list(t.shape),
            "values": [float(v) for v in t.reshape(-1).tolist()]}


def write_json(obj, path):
    """Write `obj` as JSON (indent=1). Python floats are emitted with repr(),
    i.e. shortest round-trip, so no precision is lost."""
    with open(path, "w") as f:
        json.dump(obj, f, indent=1)
        f.write("\n")


def here(filename):
    """Path of `filename` next to the calling gen script (this directory)."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), filename)


def free_port():
    """A TCP port on localhost that is free now (for MASTER_PORT)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_ranks(rank_main, world, timeout_s):
    """rank_main(rank, port) in `world` forked processes, one per rank, with a fresh MASTER_PORT; returns what
    each returned (JSON-able), in rank order. Fork before any thread starts: gloo's threads do not survive a
    fork, so a caller runs its single-process cases first only if they start none. A rank that fails or runs
    past timeout_s fails the generator (a golden is never written from a partial run)."""
    port = free_port()
    tmp = tempfile.mkdtemp(prefix="tinyddp_golden_ranks_")
    pids = []
    for rank in range(world):
        sys.stdout.flush()
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                with open(os.path.join(tmp, f"rank{rank}.json"), "w") as f:
                    json.dump(rank_main(rank, port), f)
                code = 0
            finally:
                os._exit(code)
        pids.append(pid)
    end = time.monotonic() + timeout_s
    for pid in pids:
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                assert os.waitstatus_to_exitcode(status) == 0, "a rank failed"
                break
            assert time.monotonic() < end, "a rank hung"
            time.sleep(0.05)
    ranks = []
    for rank in range(world):
        with open(os.path.join(tmp, f"rank{rank}.json")) as f:
            ranks.append(json.load(f))
        os.remove(os.path.join(tmp, f"rank{rank}.json"))
    os.rmdir(tmp)
    return ranks
