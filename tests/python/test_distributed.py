# tinyddp.distributed, multiprocessing.spawn and DistributedDataParallel from Python, ranks as threads: the
# seed's two-backward error with exactly the text `tinyddp repro two-backward` prints, a Python-subclassed
# multi-task model under DDP equal to one process on the concatenated batch, warnings as UserWarning, and an
# exception in one rank re-raised in the caller without a hang.
import json
import os
import runpy
import subprocess
import time
import warnings

import numpy as np
import pytest

import tinyddp as torch
import tinyddp.distributed as dist
import tinyddp.multiprocessing as mp
import tinyddp.nn as nn
import tinyddp.nn.functional as F
from tinyddp.nn.parallel import DistributedDataParallel as DDP

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "two_backward.py")


def test_collectives_and_default_group_per_rank_thread():
    seen = {}

    def run(rank, world_size):
        assert not dist.is_initialized()
        dist.init_process_group("thread", rank=rank, world_size=world_size)
        t = torch.tensor([rank + 1.0, 10.0 * rank])
        dist.all_reduce(t)
        m = torch.tensor([float(rank)])
        dist.all_reduce(m, op=dist.ReduceOp.MAX)
        b = torch.tensor([float(rank)])
        dist.broadcast(b, src=1)
        dist.barrier()
        seen[rank] = (dist.get_rank(), dist.get_world_size(), t.tolist(), m.item(), b.item())
        dist.destroy_process_group()

    mp.spawn(run, args=(3,), nprocs=3)
    for r in range(3):
        assert seen[r] == (r, 3, [6.0, 30.0], 2.0, 1.0)


def test_default_group_errors_and_one_rank_outside_spawn():
    with pytest.raises(RuntimeError, match="Default process group has not been initialized, please make sure to call "
                                           "init_process_group."):
        dist.get_rank()
    with pytest.raises(RuntimeError, match="tinyddp.multiprocessing.spawn"):
        dist.init_process_group("thread", world_size=2)
    dist.init_process_group("thread")
    try:
        assert dist.get_world_size() == 1 and dist.get_backend() == "thread"
        with pytest.raises(RuntimeError, match="trying to initialize the default process group twice!"):
            dist.init_process_group("thread")
    finally:
        dist.destroy_process_group()


def test_exception_in_one_rank_is_reraised_without_hang():
    def run(rank):
        dist.init_process_group("thread")
        if rank == 1:
            raise ValueError("rank one gives up")
        dist.barrier()   # rank 0 waits here until the world is aborted

    start = time.monotonic()
    with pytest.raises(mp.ProcessRaisedException) as e:
        mp.spawn(run, nprocs=2, timeout=30)
    assert time.monotonic() - start < 10
    assert e.value.error_index == 1
    assert "-- Process 1 terminated with the following error:" in str(e.value)
    assert "ValueError: rank one gives up" in str(e.value)


def repro_message(tinyddp_bin, *flags, env=None):
    out = subprocess.run([tinyddp_bin, "repro", "two-backward", "--json", *flags], check=True, capture_output=True,
                         text=True, env=env).stdout
    return json.loads(out)["error"]["message"]


@pytest.mark.parametrize("debug", [None, "DETAIL"])
def test_two_backward_error_text_is_the_repro_commands(tinyddp_bin, debug, monkeypatch):
    env = dict(os.environ)
    if debug:
        env["TORCH_DISTRIBUTED_DEBUG"] = debug
        monkeypatch.setenv("TORCH_DISTRIBUTED_DEBUG", debug)
    expected = repro_message(tinyddp_bin, env=env)
    example = runpy.run_path(EXAMPLE)
    errors = {}
    mp.spawn(example["run"], args=(2, errors), nprocs=2)
    assert errors == {0: expected, 1: expected}
    assert "Parameter at index 3" in expected
    if debug:
        assert "trunk.2.bias" in expected


class TwoTask(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(4, 8, dtype=torch.float64), nn.Tanh(),
                                   nn.Linear(8, 8, dtype=torch.float64))
        self.reg = nn.Linear(8, 1, dtype=torch.float64)
        self.cls = nn.Linear(8, 3, dtype=torch.float64)

    def forward(self, x):
        h = self.trunk(x)
        return {"reg": self.reg(h), "cls": self.cls(h)}


def batch():
    torch.manual_seed(42)
    return torch.randn(8, 4, dtype=torch.float64), torch.randn(8, 1, dtype=torch.float64), torch.randint(0, 3, (8,))


def train(model, x, y_reg, y_cls, steps=3):
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for _ in range(steps):
        opt.zero_grad()
        out = model(x)
        loss = F.mse_loss(out["reg"], y_reg) + F.cross_entropy(out["cls"], y_cls)
        loss.backward()
        opt.step()


def test_ddp_on_two_ranks_equals_one_process_on_the_concatenated_batch():
    x, y_reg, y_cls = batch()
    torch.manual_seed(0)
    reference = TwoTask()
    train(reference, x, y_reg, y_cls)
    expected = {n: np.array(p.tolist()) for n, p in reference.named_parameters()}
    results = {}

    def run(rank):
        dist.init_process_group("thread")
        torch.manual_seed(0 if rank == 0 else 123)   # rank 1 starts elsewhere: DDP broadcasts rank 0's values
        model = DDP(TwoTask())
        rows = list(range(4 * rank, 4 * rank + 4))
        pick = torch.tensor([[1.0 if j == i else 0.0 for j in range(8)] for i in rows], dtype=torch.float64)
        y_cls_rank = torch.tensor([y_cls.tolist()[i] for i in rows])
        train(model, pick @ x, pick @ y_reg, y_cls_rank)
        results[rank] = {n: np.array(p.tolist()) for n, p in model.module.named_parameters()}
        dist.destroy_process_group()

    mp.spawn(run, nprocs=2)
    for rank in (0, 1):
        assert list(results[rank]) == list(expected)
        for name in expected:
            np.testing.assert_allclose(results[rank][name], expected[name], rtol=1e-11, atol=1e-13)


def test_ddp_passes_outputs_through_and_routes_warnings_to_python():
    kinds = {}

    def run(rank):
        dist.init_process_group("thread")
        torch.manual_seed(0)
        model = DDP(TwoTask(), find_unused_parameters=True)
        assert isinstance(model.module, TwoTask)
        out = model(torch.randn(2, 4, dtype=torch.float64))
        kinds[rank] = sorted(out)
        (out["reg"].sum() + out["cls"].sum()).backward()
        dist.destroy_process_group()

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mp.spawn(run, nprocs=2)
    assert kinds == {0: ["cls", "reg"], 1: ["cls", "reg"]}
    texts = [str(w.message) for w in caught if w.category is UserWarning]
    assert sum("find_unused_parameters=True was specified in DDP constructor, but did not find any unused "
               "parameters" in t for t in texts) == 2


def test_no_sync_accumulates_locally_then_the_synced_backward_averages():
    grads = {}

    def run(rank):
        dist.init_process_group("thread")
        torch.manual_seed(0)
        model = DDP(TwoTask())
        torch.manual_seed(10 + rank)
        xs = [torch.randn(2, 4, dtype=torch.float64) for _ in range(2)]
        with model.no_sync():
            model(xs[0])["reg"].sum().backward()
        local = model.module.reg.bias.grad.tolist()
        model(xs[1])["reg"].sum().backward()
        grads[rank] = (local, model.module.reg.bias.grad.tolist())
        dist.destroy_process_group()

    mp.spawn(run, nprocs=2)
    assert grads[0][0] == [2.0] and grads[1][0] == [2.0]            # d sum / d bias = batch size, locally
    assert grads[0][1] == [4.0] and grads[1][1] == [4.0]            # (2 + 2 + 2 + 2) / 2 ranks
