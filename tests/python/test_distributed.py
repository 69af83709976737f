# tinyddp.distributed, multiprocessing.spawn and DistributedDataParallel from Python, ranks as threads: the
# seed's two-backward error with exactly the text `tinyddp repro two-backward` prints, a Python-subclassed
# multi-task model under DDP equal to one process on the concatenated batch, warnings as UserWarning, and an
# exception in one rank re-raised in the caller without a hang. Issue 11's patterns against `tinyddp repro NAME
# --json` (checkpointing, buffers, uneven inputs with and without join): same outcome and texts.
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

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples")
EXAMPLE = os.path.join(EXAMPLES, "two_backward.py")


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


def test_gather_and_object_collectives_and_every_reduce_op():
    seen = {}

    def run(rank, world_size):
        dist.init_process_group("gloo")
        t = torch.tensor([rank + 1.0, -2.0 * rank])
        results = {}
        for op in ("SUM", "PRODUCT", "MIN", "MAX"):
            x = t.clone()
            dist.all_reduce(x, op=getattr(dist.ReduceOp, op))
            results[op] = x.tolist()
        with pytest.raises(RuntimeError, match="^Cannot use ReduceOp.AVG with Gloo$"):
            dist.all_reduce(t.clone(), op=dist.ReduceOp.AVG)
        gathered = [torch.zeros(2) for _ in range(world_size)]
        dist.all_gather(gathered, t)
        results["all_gather"] = [g.tolist() for g in gathered]
        with pytest.raises(RuntimeError, match=r"invalid output tensor list at index 0 \(expected length 3, got 2\)"):
            dist.all_gather(gathered[:2], t)
        with pytest.raises(RuntimeError, match=r"invalid tensor size at index 0 \(expected \(2\), got \(3\)\)"):
            dist.all_gather([torch.zeros(3)] * world_size, t)
        objects = [None] * world_size
        dist.all_gather_object(objects, {"rank": rank, "name": "r" * rank})
        results["all_gather_object"] = objects
        mine = [rank, f"from {rank}"]
        dist.broadcast_object_list(mine, src=2)
        results["broadcast_object_list"] = mine
        dst_list = [torch.zeros(2) for _ in range(world_size)] if rank == 1 else None
        dist.gather(t, dst_list, dst=1)
        results["gather"] = None if dst_list is None else [g.tolist() for g in dst_list]
        y = t.clone()
        dist.reduce(y, dst=0)
        results["reduce"] = y.tolist() if rank == 0 else None
        seen[rank] = results
        dist.destroy_process_group()

    mp.spawn(run, args=(3,), nprocs=3)
    rows = [[1.0, -0.0], [2.0, -2.0], [3.0, -4.0]]
    for r in range(3):
        got = seen[r]
        assert got["SUM"] == [6.0, -6.0] and got["PRODUCT"] == [6.0, 0.0]
        assert got["MIN"] == [1.0, -4.0] and got["MAX"] == [3.0, 0.0]
        assert got["all_gather"] == rows
        assert got["all_gather_object"] == [{"rank": k, "name": "r" * k} for k in range(3)]
        assert got["broadcast_object_list"] == [2, "from 2"]
        assert got["gather"] == (rows if r == 1 else None)
    assert seen[0]["reduce"] == [6.0, -6.0]


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


def repro(tinyddp_bin, scenario, env=None):
    """`tinyddp repro SCENARIO --json` (TORCH_DISTRIBUTED_DEBUG as in `env`, unset by default)."""
    if env is None:
        env = {k: v for k, v in os.environ.items() if k != "TORCH_DISTRIBUTED_DEBUG"}
    run = subprocess.run([tinyddp_bin, "repro", scenario, "--json"], capture_output=True, text=True, env=env)
    assert run.returncode in (0, 1), run.stderr   # 1: the reproduced program raised (README, exit codes)
    return json.loads(run.stdout)


def repro_message(tinyddp_bin, env=None):
    return repro(tinyddp_bin, "two-backward", env=env)["error"]["message"]


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


def test_ddp_passes_outputs_through_and_prints_the_warnings_1_13_prints(capsys):
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
    # prepare_for_backward's TORCH_WARN: on stderr, once per rank, and not a Python warning (as in 1.13)
    assert not [w for w in caught if "find_unused_parameters=True was specified" in str(w.message)]
    printed = capsys.readouterr().err
    assert printed.count("[W reducer.cpp] Warning: find_unused_parameters=True was specified in DDP constructor, "
                         "but did not find any unused parameters") == 2


def test_a_gloo_ranks_warnings_are_its_process_s_not_the_spawning_thread_s(capsys):
    # 1.13's ranks are child processes: their warnings are printed there (once per place), and the parent's
    # catch_warnings records none of them; a rank's own catch_warnings records its own.
    inside = {}

    def run(rank, backend):
        dist.init_process_group(backend)
        for _ in range(2):
            warnings.warn(f"rank {rank} says so")
        dist.barrier()
        for turn in range(2):   # catch_warnings swaps process-wide state: one rank at a time
            if turn == rank:
                with warnings.catch_warnings(record=True) as mine:
                    warnings.simplefilter("always")
                    warnings.warn("recorded inside")
                inside[(backend, rank)] = [str(w.message) for w in mine]
            dist.barrier()
        dist.destroy_process_group()

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mp.spawn(run, args=("gloo",), nprocs=2)
        assert [str(w.message) for w in caught] == []
        printed = capsys.readouterr().err
        assert printed.count("UserWarning: rank 0 says so") == 1 and printed.count("UserWarning: rank 1 says so") == 1
        mp.spawn(run, args=("thread",), nprocs=2)   # tinyddp's threads: this process's warnings
        assert sorted(str(w.message) for w in caught if "says so" in str(w.message)) == [
            "rank 0 says so", "rank 0 says so", "rank 1 says so", "rank 1 says so"]
    assert all(v == ["recorded inside"] for v in inside.values()) and len(inside) == 4


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


# ---- issue 11's patterns: checkpointing, buffers, uneven inputs (`tinyddp repro`'s model and plans) ----

class Scenario(nn.Module):
    """`tinyddp repro`'s model (models/scenario/scenario_model.h): trunk Linear(4, 8) -> ReLU -> Linear(8, 8), heads
    a (1), b (3 classes) and the text decoder (5); with `buffer`, h = trunk(x) * feature_scale (ones)."""

    def __init__(self, buffer=False):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 8))
        self.head_a = nn.Linear(8, 1)
        self.head_b = nn.Linear(8, 3)
        self.text_decoder = nn.Linear(8, 5)
        if buffer:
            self.register_buffer("feature_scale", torch.ones(8))

    def forward(self, x):
        h = self.trunk(x)
        if hasattr(self, "feature_scale"):
            h = h * self.feature_scale
        return self.head_a(h), self.head_b(h), self.text_decoder(h)


def scenario_loss(out):
    torch.manual_seed(7)
    a, b, t = out
    return F.mse_loss(a, torch.randn(6, 1)) + F.cross_entropy(b, torch.randint(0, 3, (6,))) + \
        F.mse_loss(t, torch.randn(6, 5))


def replicas(results):
    """The ranks' final parameters agree (and there are two ranks' worth)."""
    assert sorted(results) == [0, 1]
    return results[0] == results[1]


def test_reentrant_checkpoint_with_find_unused_parameters_raises_the_repro_text(tinyddp_bin):
    ref = repro(tinyddp_bin, "checkpoint")
    example = runpy.run_path(os.path.join(EXAMPLES, "checkpoint_ddp.py"))
    got = example["train"](None, False)   # 2 spawn ranks, reentrant checkpoint, find_unused_parameters=True
    assert ref["outcome"] == got["outcome"] == "error"
    for rank in (0, 1):
        assert got["errors"][rank]["message"] == ref["error"]["message"]
        assert got["errors"][rank]["raised_at"] == ref["error"]["raised_at"]


def test_two_forwards_then_one_backward_hit_the_buffer_broadcasts_version_bump(tinyddp_bin):
    broadcast, no_broadcast = repro(tinyddp_bin, "buffer-two-forwards"), \
        repro(tinyddp_bin, "buffer-two-forwards-no-broadcast")
    outcomes = {}

    def run(rank, broadcast_buffers):
        dist.init_process_group("thread")
        model = DDP(Scenario(buffer=True), broadcast_buffers=broadcast_buffers)
        x = torch.randn(6, 4)
        loss = scenario_loss(model(x)) + scenario_loss(model(x))   # the first forward's saved buffer is stale
        try:
            loss.backward()
            outcomes[(broadcast_buffers, rank)] = ("ok", model.module.feature_scale._version)
        except RuntimeError as e:
            outcomes[(broadcast_buffers, rank)] = ("error", str(e))
        dist.destroy_process_group()

    for broadcast_buffers in (True, False):
        mp.spawn(run, args=(broadcast_buffers,), nprocs=2)
    for rank in (0, 1):
        assert outcomes[(True, rank)] == ("error", broadcast["error"]["message"])
        assert no_broadcast["outcome"] == outcomes[(False, rank)][0] == "ok"
        assert outcomes[(False, rank)][1] == 1   # the construction's broadcast only


def test_buffers_are_rank_zeros_at_construction_and_at_forwards_after_a_synced_one():
    seen = {}

    def run(rank, broadcast_buffers):
        dist.init_process_group("thread")
        module = Scenario(buffer=True)
        values = []

        def set_own(v):   # each rank changes its own copy, as a running statistic would
            with torch.no_grad():
                module.feature_scale.fill_(v + rank)

        set_own(1.0)
        model = DDP(module, broadcast_buffers=broadcast_buffers)
        values.append(module.feature_scale.tolist()[0])
        # 1.13's rule: a forward broadcasts rank 0's buffers when the forward before it (or the construction)
        # was synced, whether or not itself is.
        for v, synced in ((10.0, False), (20.0, False), (None, True), (30.0, True)):
            if v is not None:
                set_own(v)
            if synced:
                scenario_loss(model(torch.randn(6, 4))).backward()
            else:
                with model.no_sync():
                    model(torch.randn(6, 4))
            values.append(module.feature_scale.tolist()[0])
        seen[(broadcast_buffers, rank)] = values
        dist.destroy_process_group()

    for broadcast_buffers in (True, False):
        mp.spawn(run, args=(broadcast_buffers,), nprocs=2)
    for r in (0, 1):
        assert seen[(True, r)] == [1.0, 10.0, 20.0 + r, 20.0 + r, 30.0]
        assert seen[(False, r)] == [1.0, 10.0 + r, 20.0 + r, 20.0 + r, 30.0 + r]   # the construction's only


def train_uneven(rank, join_context, results):
    """rank 0 has 3 batches, rank 1 has 2 (the repro's `iterations 3,2`); SGD on the combined loss."""
    dist.init_process_group("thread")
    torch.manual_seed(0)
    model = DDP(Scenario())
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    torch.manual_seed(1 + rank)
    batches = [torch.randn(6, 4) for _ in range(3 - rank)]
    with join_context(model):
        for x in batches:
            opt.zero_grad()
            scenario_loss(model(x)).backward()
            opt.step()
    results[rank] = {n: p.tolist() for n, p in model.module.named_parameters()}
    dist.destroy_process_group()


@pytest.mark.parametrize("form", ["ddp.join", "Join"])
def test_uneven_inputs_under_join_end_in_sync_as_the_repro(tinyddp_bin, form):
    from tinyddp.distributed.algorithms.join import Join
    ref = repro(tinyddp_bin, "uneven-inputs-join")
    contexts = {"ddp.join": lambda m: m.join(), "Join": lambda m: Join([m], divide_by_initial_world_size=True)}
    results = {}
    mp.spawn(train_uneven, args=(contexts[form], results), nprocs=2, timeout=30)
    assert ref["outcome"] == "ok" and ref["replicas_in_sync"]
    assert replicas(results) == ref["replicas_in_sync"]
    torch.manual_seed(0)
    assert results[0] != {n: p.tolist() for n, p in Scenario().named_parameters()}   # training did move them


def test_join_with_throw_on_early_termination_raises_on_every_rank_as_the_repro(tinyddp_bin):
    ref = repro(tinyddp_bin, "uneven-inputs-join-throw")
    got = {}

    def run(rank):
        dist.init_process_group("thread")
        model = DDP(Scenario())
        where = "forward"
        try:
            with model.join(throw_on_early_termination=True):
                for i in range(1, 4 - rank):
                    where = f"forward #1 of iteration {i}"
                    loss = scenario_loss(model(torch.randn(6, 4)))
                    where = f"backward #1 of iteration {i}"
                    loss.backward()
                where = "join exit"
        except RuntimeError as e:
            got[rank] = {"message": str(e), "raised_at": where}
        dist.destroy_process_group()

    mp.spawn(run, nprocs=2, timeout=30)
    assert ref["outcome"] == "error"
    for r in ref["rank_outcomes"]:
        assert got[r["rank"]] == {"message": r["message"], "raised_at": r["raised_at"]}


def test_uneven_inputs_without_join_fail_with_the_left_peer_error(tinyddp_bin):
    import contextlib
    ref = repro(tinyddp_bin, "uneven-inputs")
    waiting = [r for r in ref["rank_outcomes"] if r["outcome"] == "error"]
    assert [r["rank"] for r in waiting] == [0] and waiting[0]["peer_left"]
    # repro names why rank 1 left; a Python rank leaves when its function returns (dist::ThreadWorld::run).
    expected = waiting[0]["message"].replace("it finished its 2 iterations", "its program returned")
    assert expected != waiting[0]["message"]
    start = time.monotonic()
    with pytest.raises(mp.ProcessRaisedException) as e:
        mp.spawn(train_uneven, args=(lambda m: contextlib.nullcontext(), {}), nprocs=2, timeout=30)
    assert time.monotonic() - start < 10   # no hang, no timeout
    assert e.value.error_index == 0
    assert "RuntimeError: " + expected in str(e.value)


def test_join_propagates_an_exception_from_its_block_without_shadowing(capfd):
    def run(rank):
        dist.init_process_group("thread")
        model = DDP(Scenario())
        with model.join():
            model(torch.randn(6, 4))
            raise KeyError(f"rank {rank} stops")

    with pytest.raises(mp.ProcessRaisedException) as e:
        mp.spawn(run, nprocs=2, timeout=30)
    assert "KeyError: 'rank" in str(e.value)
    assert "without finish()" not in capfd.readouterr().err   # __exit__ with an exception is not a forgotten finish


def test_collectives_take_tensors_that_require_grad_and_ddp_takes_mixed_dtypes():
    # `dist.all_reduce(loss)` for logging runs in place without autograd, as in 1.13; a module with a float64
    # parameter and an int64 step counter is broadcast one dtype at a time.
    seen = {}

    class Mixed(nn.Module):
        def __init__(self, rank):
            super().__init__()
            self.lin = nn.Linear(2, 1)
            self.scale = nn.Parameter(torch.tensor([1.0 + rank], dtype=torch.float64))
            self.register_buffer("steps", torch.tensor([10 * rank + 7]))

        def forward(self, x):
            return self.lin(x)

    def run(rank):
        dist.init_process_group("thread")
        w = torch.tensor([float(rank + 1)], requires_grad=True)
        dist.all_reduce(w)
        m = Mixed(rank)
        DDP(m)
        seen[rank] = (w.tolist(), w.requires_grad, m.scale.tolist(), m.steps.tolist(), m.lin.weight.tolist())

    mp.spawn(run, nprocs=2)
    assert seen[0][:4] == ([3.0], True, [1.0], [7]) and seen[1][:4] == ([3.0], True, [1.0], [7])
    assert seen[0][4] == seen[1][4]
