"""PyTorch 1.13's messages when DDP replicas are not the same model (gloo, 2 processes on 127.0.0.1).

Run by hand from the repository root: /usr/bin/python3 tests/golden/gen_ddp_mismatch.py
Writes tests/golden/ddp_mismatch.json: {case: {rank: str(exception) or null}}.
"""
import json
import os
import socket
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Params(nn.Module):
    """A module holding the given parameter shapes, named p0, p1, ..."""

    def __init__(self, shapes):
        super().__init__()
        for i, shape in enumerate(shapes):
            self.register_parameter(f"p{i}", nn.Parameter(torch.ones(shape)))


CASES = {
    # rank 0 has one parameter, rank 1 has two
    "count": [[[3]], [[3], [2]]],
    # same count, second parameter transposed on rank 1
    "shape": [[[3], [2, 4]], [[3], [4, 2]]],
}


def worker(rank, port, case, queue):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=2)
    try:
        nn.parallel.DistributedDataParallel(Params(CASES[case][rank]))
        queue.put((rank, None))
    except Exception as e:  # noqa: BLE001 - we record whatever PyTorch raises
        queue.put((rank, f"{type(e).__name__}: {e}"))


def main():
    ctx = mp.get_context("spawn")
    out = {"torch_version": torch.__version__}
    for case in CASES:
        queue = ctx.Queue()
        port = free_port()
        procs = [ctx.Process(target=worker, args=(r, port, case, queue)) for r in range(2)]
        for p in procs:
            p.start()
        results = {}
        for _ in range(2):
            try:
                rank, msg = queue.get(timeout=30)
                results[str(rank)] = msg
            except Exception:  # a rank stuck in a collective: record as hung
                break
        for p in procs:
            p.join(timeout=5)
            if p.is_alive():
                p.kill()
        for r in ("0", "1"):
            results.setdefault(r, "hung (killed after 30 s)")
        out[case] = results
    with open(os.path.join(HERE, "ddp_mismatch.json"), "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
