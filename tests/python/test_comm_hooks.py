# DDP communication hooks from Python (1.13's register_comm_hook, GradBucket, torch.futures, default_hooks) on
# 2 rank threads: the hooks' results against gradients computed without DDP, the checks and error texts of 1.13
# (each text below is what PyTorch 1.13.1 raised for the same script on gloo), and Futures on their own.
import struct
import threading

import pytest

import tinyddp as torch
import tinyddp.distributed as dist
import tinyddp.multiprocessing as mp
import tinyddp.nn as nn
from tinyddp.distributed.algorithms.ddp_comm_hooks import default_hooks
from tinyddp.futures import Future
from tinyddp.nn.parallel import DistributedDataParallel as DDP

WORLD = 2


def model(width=4):
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(3, width), nn.Tanh(), nn.Linear(width, 1))


def batch(rank):
    torch.manual_seed(100 + rank)
    return torch.randn(5, 3)


def local_grads(rank, width):
    m = model(width)
    m(batch(rank)).pow(2).sum().backward()
    return [p.grad.flatten().tolist() for p in m.parameters()]


def run_hooked(register, width=4, bucket_cap_mb=25, steps=1):
    """Per rank: the gradients without DDP and those DDP with the hook `register(ddp)` installed gives at the
    last of `steps` iterations (no optimizer: every iteration has the same gradients)."""
    results = {}

    def run(rank):
        dist.init_process_group("thread")
        local = local_grads(rank, width)
        ddp = DDP(model(width), bucket_cap_mb=bucket_cap_mb)
        register(ddp)
        for _ in range(steps):
            ddp.zero_grad()
            ddp(batch(rank)).pow(2).sum().backward()
        results[rank] = (local, [p.grad.flatten().tolist() for p in ddp.module.parameters()])

    mp.spawn(run, nprocs=WORLD)
    return results


def fp16(x):
    return struct.unpack("e", struct.pack("e", x))[0]   # IEEE half, round to nearest even


def test_allreduce_hook_gives_the_mean_gradient_as_ddp_without_a_hook():
    hooked = run_hooked(lambda ddp: ddp.register_comm_hook(state=None, hook=default_hooks.allreduce_hook))
    plain = run_hooked(lambda ddp: None)
    for rank in range(WORLD):
        assert hooked[rank][1] == plain[rank][1]
    for p, (g0, g1) in enumerate(zip(hooked[0][0], hooked[1][0])):
        assert hooked[0][1][p] == pytest.approx([(a + b) / 2 for a, b in zip(g0, g1)], rel=1e-6, abs=1e-7)


def test_fp16_compress_hook_casts_then_divides_then_sums_in_fp16():
    results = run_hooked(lambda ddp: ddp.register_comm_hook(None, default_hooks.fp16_compress_hook))
    for p, (g0, g1) in enumerate(zip(results[0][0], results[1][0])):
        expected = [fp16(fp16(fp16(a) / WORLD) + fp16(fp16(b) / WORLD)) for a, b in zip(g0, g1)]
        assert results[0][1][p] == expected
        assert results[1][1][p] == expected


def test_a_user_hook_sees_the_bucket_and_its_future_value_becomes_the_gradient():
    seen = {}

    def register(ddp):
        state = {"calls": 0}

        def hook(state, bucket):
            state["calls"] += 1
            grads = bucket.gradients()
            params = bucket.parameters()
            seen.setdefault(dist.get_rank(), []).append({
                "index": bucket.index(), "is_last": bucket.is_last(), "numel": bucket.buffer().numel(),
                "shapes": [tuple(g.shape) for g in grads], "param_shapes": [tuple(p.shape) for p in params],
                "matches_buffer": all(g.flatten().tolist() == bucket.buffer().narrow(0, o, g.numel()).tolist()
                             for g, o in zip(grads, offsets(grads))),
                "calls": state["calls"]})
            fut = dist.all_reduce(bucket.buffer(), async_op=True).get_future()
            return fut.then(lambda f: f.value()[0] * 0.25)   # a quarter of the sum: not the mean on purpose

        ddp.register_comm_hook(state, hook)

    # The first iteration is one bucket; then they are rebuilt in gradient order, the first holding up to 1 MiB
    # (1.13's first-bucket cap; a bucket closes once it reaches its cap), the others 0.1 MB: width 150000
    # closes bucket 0 after the last three parameters (1.2 MB) and puts the first weight (1.8 MB) in bucket 1.
    width = 150000
    results = run_hooked(register, width=width, bucket_cap_mb=0.1, steps=2)
    for rank in range(WORLD):
        first, calls = seen[rank][:1], seen[rank][1:]
        assert [c["calls"] for c in seen[rank]] == [1, 2, 3]
        assert [(c["index"], c["is_last"], c["numel"]) for c in first] == [(0, True, 5 * width + 1)]
        assert [(c["index"], c["is_last"]) for c in calls] == [(0, False), (1, True)]
        assert [c["shapes"] for c in calls] == [[(1,), (1, width), (width,)], [(width, 3)]]
        assert all(c["matches_buffer"] and c["shapes"] == c["param_shapes"] for c in calls)
        assert [c["numel"] for c in calls] == [2 * width + 1, 3 * width]
        for p, (g0, g1) in enumerate(zip(results[0][0], results[1][0])):
            assert results[rank][1][p] == pytest.approx([(a + b) * 0.25 for a, b in zip(g0, g1)], rel=1e-6, abs=1e-7)


def offsets(grads):
    out, at = [], 0
    for g in grads:
        out.append(at)
        at += g.numel()
    return out


def hook_error(register):
    """The error each rank got from registering a hook (register(ddp)) and running one step, as text."""
    errors = {}

    def run(rank):
        dist.init_process_group("thread")
        ddp = DDP(model())
        try:
            register(ddp)
            ddp(batch(rank)).sum().backward()
        except Exception as e:   # noqa: BLE001
            errors[rank] = f"{type(e).__name__}: {e}"

    mp.spawn(run, nprocs=WORLD)
    assert errors.get(0) is not None and errors.get(1) is not None, errors
    return errors[0]


def test_register_twice_is_refused_as_in_1_13():
    def twice(ddp):
        ddp.register_comm_hook(None, default_hooks.allreduce_hook)
        ddp.register_comm_hook(None, default_hooks.allreduce_hook)
    assert hook_error(twice) == ("RuntimeError: register_comm_hook or register_builtin_comm_hook can only be "
                                 "called once.")


def test_the_hook_is_checked_as_1_13_checks_it():
    assert hook_error(lambda ddp: ddp.register_comm_hook(None, 5)) == "TypeError: Communication hook must be callable."

    def bad_bucket(state, bucket: int):
        pass
    assert hook_error(lambda ddp: ddp.register_comm_hook(None, bad_bucket)) == (
        "ValueError: Communication hook: bucket annotation should be dist.GradBucket.")

    def bad_return(state, bucket: dist.GradBucket) -> int:
        pass
    assert hook_error(lambda ddp: ddp.register_comm_hook(None, bad_return)) == (
        "ValueError: Communication hook: return annotation should be torch.futures.Future[torch.Tensor].")
    # 1.13 looks the parameter up by its name, `bucket`.
    assert hook_error(lambda ddp: ddp.register_comm_hook(None, lambda s, b: None)) == "KeyError: 'bucket'"


def test_what_the_hook_returns_is_checked_at_the_backward_with_1_13s_texts():
    assert hook_error(lambda ddp: ddp.register_comm_hook(None, lambda state, bucket: bucket.buffer())) == (
        "RuntimeError: Unable to cast Python instance to C++ type (#define PYBIND11_DETAILED_ERROR_MESSAGES or "
        "compile in debug mode for details). DDP communication hook's callback must return a torch.futures.Future "
        "object, but got torch.Tensor")

    def work_future(state, bucket):   # the Future's value is [tensor], not the tensor
        return dist.all_reduce(bucket.buffer(), async_op=True).get_future()
    assert hook_error(lambda ddp: ddp.register_comm_hook(None, work_future)).endswith(
        "please report a bug to PyTorch. expected the hook result is a PyObject")

    def wrong_size(state, bucket):
        fut = Future()
        fut.set_result(torch.zeros(3))
        return fut
    text = hook_error(lambda ddp: ddp.register_comm_hook(None, wrong_size))
    assert "must be the reduced bucket, a float32 tensor of 21 elements, but it has 3 elements" in text


def test_an_exception_in_the_hook_reaches_the_backward_as_runtime_error_with_its_traceback():
    def boom(state, bucket):
        raise ValueError("boom")
    text = hook_error(lambda ddp: ddp.register_comm_hook(None, boom))
    assert text.startswith("RuntimeError: ValueError: boom\n\nAt:\n")
    assert "): boom\n" in text   # the hook's frame in the traceback


def test_ddp_reduces_over_the_group_it_is_given():
    """process_group=new_group(...) as 1.13: a group of both ranks averages as the world does, a group of one rank
    keeps the local gradient (also through allreduce_hook with the group as state), and a rank outside the group
    gets 1.13's TypeError for new_group's placeholder."""
    grads, refusals = {}, {}

    def run(rank):
        dist.init_process_group("thread")
        world = dist.new_group()
        assert world is dist.group.WORLD
        pair = dist.new_group(ranks=[0, 1])
        solo = [dist.new_group(ranks=[0]), dist.new_group(ranks=[1])]
        mine = solo[rank]
        assert solo[1 - rank] is dist.GroupMember.NON_GROUP_MEMBER
        assert (mine.size(), mine.rank(), pair.size(), pair.rank()) == (1, 0, 2, rank)
        out = {}
        for name, group, hook in [("world", None, False), ("pair", pair, False), ("solo", mine, False),
                                  ("solo hook", mine, True)]:
            torch.manual_seed(0)
            ddp = DDP(model(), process_group=group)
            if hook:
                ddp.register_comm_hook(group, default_hooks.allreduce_hook)
            assert ddp.process_group is (group or dist.group.WORLD)
            ddp(batch(rank)).sum().backward()
            out[name] = [p.grad.clone() for p in ddp.parameters()]
        grads[rank] = out
        with pytest.raises(TypeError, match="_verify_params_across_processes"):
            DDP(model(), process_group=solo[1 - rank])
        refusals[rank] = True

    mp.spawn(run, nprocs=WORLD)
    assert refusals == {0: True, 1: True}
    for rank in range(WORLD):
        for a, b in zip(grads[rank]["pair"], grads[rank]["world"]):
            assert torch.equal(a, b)
        for a, b in zip(grads[rank]["solo hook"], grads[rank]["solo"]):
            assert torch.equal(a, b)
    # one rank's group: nothing averaged, so the ranks differ; both ranks' groups of two: the same average
    assert not torch.equal(grads[0]["solo"][0], grads[1]["solo"][0])
    assert torch.equal(grads[0]["pair"][0], grads[1]["pair"][0])
    mean = (grads[0]["solo"][0] + grads[1]["solo"][0]) / 2
    assert torch.allclose(grads[0]["world"][0], mean, atol=1e-6)


def test_future_set_result_then_wait_value_done_and_complete_once():
    f = Future()
    assert not f.done()
    with pytest.raises(RuntimeError, match="value\\(\\) accessor should only be used when future is completed"):
        f.value()
    chained = f.then(lambda fut: fut.value() + 1)
    f.set_result(3)
    assert (f.done(), f.wait(), f.value(), chained.wait()) == (True, 3, 3, 4)
    with pytest.raises(RuntimeError, match="Attempting to mark a completed Future as complete again"):
        f.set_result(4)
    failing = f.then(lambda fut: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        failing.wait()


def test_future_completed_from_another_thread_wakes_its_waiter():
    f = Future()
    threading.Timer(0.05, f.set_result, args=("late",)).start()
    assert f.then(lambda fut: fut.value().upper()).wait() == "LATE"


def test_a_collectives_future_holds_the_list_of_its_tensors():
    values = {}

    def run(rank):
        dist.init_process_group("thread")
        t = torch.tensor([rank + 1.0])
        fut = dist.all_reduce(t, async_op=True).get_future()
        (out,) = fut.wait()
        values[rank] = (out.item(), t.item(), fut.done())

    mp.spawn(run, nprocs=WORLD)
    assert values == {0: (3.0, 3.0, True), 1: (3.0, 3.0, True)}
