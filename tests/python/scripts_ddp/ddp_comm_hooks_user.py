# DDP communication hooks as users register them: default_hooks.allreduce_hook and fp16_compress_hook (state=None),
# a hand-written hook over dist.all_reduce(..., async_op=True).get_future().then(...) that counts its calls in a
# state object and looks at the GradBucket (index, is_last, parameters, gradients) with small buckets, a hook that
# skips communication (local gradients: the replicas drift apart), a hook with type annotations, and the mistakes:
# a hook that is not callable, wrong annotations, a hook without a `bucket` parameter, registering twice, and a
# hook that returns a tensor instead of a Future.
import os

import tinyddp as torch
import tinyddp.distributed as dist
import tinyddp.multiprocessing as mp
import tinyddp.nn as nn
from tinyddp.distributed.algorithms.ddp_comm_hooks import default_hooks
from tinyddp.nn.parallel import DistributedDataParallel as DDP


def make_ddp(**kwargs):
    torch.manual_seed(0)
    return DDP(nn.Sequential(nn.Linear(5, 6), nn.Tanh(), nn.Linear(6, 2)), **kwargs)


def one_step(rank, model, steps=1):
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    g = torch.Generator().manual_seed(rank)
    for _ in range(steps):
        opt.zero_grad()
        x = torch.randn(8, 5, generator=g) * (rank + 1)
        model(x).pow(2).mean().backward()
        opt.step()
    return model


def grads_text(model):
    return " ".join(f"{p.grad.abs().sum().item():.5f}" for p in model.parameters())


def same_on_all_ranks(model):
    ok = True
    for p in model.parameters():
        parts = [torch.zeros_like(p) for _ in range(dist.get_world_size())]
        dist.all_gather(parts, p.detach().contiguous())
        ok = ok and all(torch.equal(parts[0], q) for q in parts[1:])
    return ok


class CountingState:
    def __init__(self):
        self.calls = 0
        self.seen = []


def averaging_hook(state, bucket):
    state.calls += 1
    state.seen.append((bucket.index(), bucket.is_last(), len(bucket.parameters()),
                       [tuple(g.shape) for g in bucket.gradients()], bucket.buffer().numel()))
    fut = dist.all_reduce(bucket.buffer(), async_op=True).get_future()

    def divide(fut):
        return fut.value()[0].div_(dist.get_world_size())

    return fut.then(divide)


def no_comm_hook(state, bucket):
    fut = torch.futures.Future()
    fut.set_result(bucket.buffer())
    return fut


def annotated_hook(state: object, bucket: dist.GradBucket) -> torch.futures.Future[torch.Tensor]:
    return default_hooks.allreduce_hook(state, bucket)


def bad_bucket_annotation(state, bucket: torch.Tensor):
    return default_hooks.allreduce_hook(state, bucket)


def bad_return_annotation(state, bucket) -> torch.Tensor:
    return default_hooks.allreduce_hook(state, bucket)


def bare_future_annotation(state, bucket: dist.GradBucket) -> torch.futures.Future:
    return default_hooks.allreduce_hook(state, bucket)


def wrong_name(state, grads):
    return default_hooks.allreduce_hook(state, grads)


def returns_tensor(state, bucket):
    return bucket.buffer()


def run(rank, world_size):
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ["MASTER_PORT"] = "29973"
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    lines = []
    plain = one_step(rank, make_ddp())
    lines.append(f"no hook: {grads_text(plain)}")
    for name in ("allreduce_hook", "fp16_compress_hook"):
        model = make_ddp()
        model.register_comm_hook(state=None, hook=getattr(default_hooks, name))
        one_step(rank, model)
        lines.append(f"{name}: {grads_text(model)} same on all ranks {same_on_all_ranks(model)}")
    state = CountingState()
    model = make_ddp(bucket_cap_mb=0.0001)
    model.register_comm_hook(state, averaging_hook)
    one_step(rank, model, steps=2)
    lines.append(f"custom hook: {grads_text(model)} calls {state.calls}")
    for seen in state.seen:
        lines.append(f"  bucket index {seen[0]} is_last {seen[1]} params {seen[2]} shapes {seen[3]} numel {seen[4]}")
    model = make_ddp()
    model.register_comm_hook(None, annotated_hook)
    one_step(rank, model)
    lines.append(f"annotated hook: {grads_text(model)}")
    model = one_step(rank, make_ddp(), steps=0)
    model.register_comm_hook(None, no_comm_hook)
    one_step(rank, model)
    lines.append(f"no communication: {grads_text(model)} same on all ranks {same_on_all_ranks(model)}")
    for hook in (None, bad_bucket_annotation, bad_return_annotation, bare_future_annotation, wrong_name):
        try:
            make_ddp().register_comm_hook(None, hook)
            lines.append(f"{getattr(hook, '__name__', hook)}: registered")
        except (TypeError, ValueError, KeyError) as e:
            lines.append(f"{getattr(hook, '__name__', hook)}: {type(e).__name__}: {e}")
    model = make_ddp()
    model.register_comm_hook(None, default_hooks.allreduce_hook)
    try:
        model.register_comm_hook(None, default_hooks.allreduce_hook)
    except RuntimeError as e:
        lines.append(f"second register_comm_hook: RuntimeError: {e}")
    model = make_ddp()
    model.register_comm_hook(None, returns_tensor)
    try:
        one_step(rank, model)
    except RuntimeError as e:
        lines.append(f"hook returning a tensor: RuntimeError: {str(e).splitlines()[0]}")
    everyone = [None] * world_size
    dist.all_gather_object(everyone, lines)
    if rank == 0:
        for r, rank_lines in enumerate(everyone):
            for line in rank_lines:
                print(f"[rank {r}] {line}")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(run, args=(2,), nprocs=2, join=True)
    print("done")
