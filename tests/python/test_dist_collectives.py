# torch.distributed's collectives and point to point on tinyddp's rank threads against real 1.13 gloo
# (tests/golden/dist_collectives.json from gen_dist_collectives.py): the same cases (dist_collectives_cases.py)
# on 2 and 3 ranks give every rank the same values, gloo's partials on reduce's other ranks, and gloo's error
# types and texts. Then what gloo lacks, on the thread backend, in closed form; and a rank that stops releasing
# its peers well inside the timeout.
import importlib.util
import json
import os
import re
import time

import pytest

import tinyddp as torch
import tinyddp.distributed as dist
import tinyddp.multiprocessing as mp

GOLDEN_DIR = os.path.join(os.path.dirname(__file__), "..", "golden")
with open(os.path.join(GOLDEN_DIR, "dist_collectives.json")) as f:
    GOLDEN = json.load(f)


def _load_cases():
    spec = importlib.util.spec_from_file_location("dist_collectives_cases",
                                                  os.path.join(GOLDEN_DIR, "dist_collectives_cases.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.run_cases


run_cases = _load_cases()


@pytest.mark.parametrize("world", sorted(GOLDEN["worlds"]))
def test_cases_match_gloo(world):
    n = int(world)
    got = {}

    def run(rank):
        dist.init_process_group("gloo")
        try:
            got[rank] = json.loads(json.dumps(run_cases(torch, dist, rank, n)))
        finally:
            dist.destroy_process_group()

    mp.spawn(run, nprocs=n, timeout=30)
    for rank, want in enumerate(GOLDEN["worlds"][world]):
        assert sorted(got[rank]) == sorted(want), f"rank {rank}: other cases"
        wrong = {k: (got[rank][k], v) for k, v in want.items() if got[rank][k] != v}
        assert not wrong, f"rank {rank} of {n} (tinyddp, gloo): {wrong}"


def test_what_gloo_lacks_on_the_thread_backend():
    n = 3
    got = {}

    def run(rank):
        dist.init_process_group("thread")
        out = {}
        o = torch.zeros(2)
        dist.reduce_scatter(o, [torch.tensor([10.0 * k + rank, 1.0]) for k in range(n)])
        out["reduce_scatter"] = o.tolist()   # sum over r of (10k + r, 1) for k = rank
        outs = [torch.zeros(k + 1) for k in range(n)]
        w = dist.all_to_all(outs, [torch.full((rank + 1,), 10.0 * rank + j) for j in range(n)], async_op=True)
        w.wait()
        out["all_to_all"] = [t.tolist() for t in outs]
        o = torch.zeros(n, 2)
        fut = dist.all_gather_into_tensor(o, torch.tensor([rank, -rank], dtype=torch.float32), async_op=True).get_future()
        out["all_gather_into_tensor"] = [t.tolist() for t in fut.wait()]   # the output, filled once the Future is
        o = torch.zeros(2)
        dist.reduce_scatter_tensor(o, torch.arange(2.0 * n) * (rank + 1), op=dist.ReduceOp.MAX)
        out["reduce_scatter_tensor"] = o.tolist()
        got[rank] = out
        dist.destroy_process_group()

    mp.spawn(run, nprocs=n, timeout=30)
    for r in range(n):
        assert got[r]["reduce_scatter"] == [30.0 * r + 3, 3.0]
        assert got[r]["all_to_all"] == [[10.0 * j + r] * (j + 1) for j in range(n)]
        assert got[r]["all_gather_into_tensor"] == [[[k, -k] for k in range(n)]]
        assert got[r]["reduce_scatter_tensor"] == [(2.0 * r) * n, (2.0 * r + 1) * n]


def test_a_rank_that_stops_releases_a_receiver_and_a_reduce_at_once():
    def run(rank, which):
        dist.init_process_group("gloo")
        if rank == 1:
            return   # its program ends: no send, no reduce
        if which == "recv":
            dist.recv(torch.zeros(1), src=1)
        else:
            dist.reduce(torch.zeros(3), dst=0)

    for which, text in (("recv", "recv from rank 1 (tag 0) can never complete: rank 1 left"),
                        ("reduce", "which left the process group")):
        start = time.monotonic()
        with pytest.raises(mp.ProcessRaisedException, match=re.escape(text)):
            mp.spawn(run, args=(which,), nprocs=2, timeout=20)
        assert time.monotonic() - start < 5


def test_a_recv_nobody_answers_times_out():
    def run(rank):
        dist.init_process_group("gloo")
        if rank == 0:
            dist.recv(torch.zeros(1), src=1, tag=3)
        else:
            time.sleep(1.5)   # alive and silent well past rank 0's 300 ms (leaving would fail it at once)

    with pytest.raises(mp.ProcessRaisedException, match=r"timed out after 300 ms: no message arrived"):
        mp.spawn(run, nprocs=2, timeout=0.3)
