# Two things users do to a model after DDP has wrapped it, and what 1.13 does about them: converting it with
# .double() (every parameter gets new data of another dtype, so autograd makes it a new gradient accumulator and
# DDP's hooks on the old one never fire again: the gradients stay local, the replicas drift apart, and no error
# says so; converting before wrapping averages as usual, with find_unused_parameters too), and
# gradient_as_bucket_view=True (each .grad is a view of its bucket: ._base, the same memory across steps unless
# zero_grad(set_to_none=True) drops it, the in-place detach_() error and what optimizer.zero_grad() does instead).
import os

import tinyddp as torch
import tinyddp.distributed as dist
import tinyddp.multiprocessing as mp
import tinyddp.nn as nn
from tinyddp.nn.parallel import DistributedDataParallel as DDP


def gathered(value):
    everyone = [None] * dist.get_world_size()
    dist.all_gather_object(everyone, value)
    return everyone


def grad_sums(model):
    return [None if p.grad is None else round(p.grad.sum().item(), 5) for p in model.parameters()]


def convert(rank, when, find_unused):
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    if when == "before":
        net = net.double()
    model = DDP(net, find_unused_parameters=find_unused)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    tag = f"double() {when} wrapping, find_unused={find_unused}"
    torch.manual_seed(5 + rank)
    for step in range(3):
        if when == "after" and step == 1:
            model.double()
        dtype = torch.float64 if (when == "before" or step >= 1) else torch.float32
        opt.zero_grad()
        loss = model(torch.randn(4, 3, dtype=dtype)).pow(2).mean()
        loss.backward()
        grads = gathered(grad_sums(model))
        opt.step()
        weights = gathered(round(model.module[0].weight.sum().item(), 5))
        if rank == 0:
            print(f"{tag} step {step} {loss.dtype} grads {grads} weights {weights}", flush=True)


def bucket_views(rank):
    torch.manual_seed(0)
    model = DDP(nn.Linear(3, 2), gradient_as_bucket_view=True)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    torch.manual_seed(rank)
    w = model.module.weight
    ptrs, lines = [], []
    for step in range(4):
        opt.zero_grad(set_to_none=(step == 2))
        model(torch.randn(4, 3)).sum().backward()
        ptrs.append(w.grad.data_ptr())
        lines.append(f"step {step} grad is a view: {w.grad._base is not None} base numel "
                     f"{None if w.grad._base is None else w.grad._base.numel()} sum {w.grad.sum().item():.5f}")
        opt.step()
    lines.append(f"same memory step to step: {[a == b for a, b in zip(ptrs, ptrs[1:])]}")
    try:
        w.grad.detach_()
        lines.append("detach_ worked")
    except RuntimeError as e:
        lines.append(f"detach_: RuntimeError: {e}")
    plain = DDP(nn.Linear(3, 2))
    plain(torch.randn(2, 3)).sum().backward()
    lines.append(f"without bucket views: grad is a view: {plain.module.weight.grad._base is not None}")
    plain.module.weight.grad.detach_()
    lines.append(f"detach_ of a plain grad: requires_grad {plain.module.weight.grad.requires_grad}")
    if rank == 0:
        print("\n".join(lines), flush=True)


def run(rank, world_size, port):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    for when in ["before", "after"]:
        for find_unused in [False, True]:
            convert(rank, when, find_unused)
    bucket_views(rank)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(run, args=(2, 29855), nprocs=2)
    print("done")
