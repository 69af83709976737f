# Changing a model after DDP has wrapped it, as fine-tuning scripts sometimes do by mistake: replacing the head
# (model.module[1] = nn.Linear(...)): the old head's parameters never get gradients, so the next forward raises
# 1.13's "Expected to have finished reduction" with their indices, and with find_unused_parameters=True the new
# head trains on local gradients only (its replicas drift apart); assigning a new nn.Parameter to an attribute
# (its gradient stays local too) versus writing .data of the same shape and dtype (still reduced); wrapping the
# model twice (DDP(DDP(model)) and two DDPs over one module: each forward's wrapper reduces); and an integer
# buffer counting samples in forward (rank 0's count is broadcast before each forward, then each rank adds its own).
import os

import tinyddp as torch
import tinyddp.distributed as dist
import tinyddp.multiprocessing as mp
import tinyddp.nn as nn
from tinyddp.nn.parallel import DistributedDataParallel as DDP


class Counting(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(2, 1)
        self.register_buffer("seen", torch.zeros((), dtype=torch.long))

    def forward(self, x):
        self.seen += x.shape[0]
        return self.lin(x)


def grads(model):
    return [None if p.grad is None else round(p.grad.sum().item(), 4) for p in model.parameters()]


def everyone(value):
    out = [None] * dist.get_world_size()
    dist.all_gather_object(out, value)
    return out


def attempt(rank, label, fn):
    try:
        result = fn()
        if rank == 0:
            print(f"{label}: {result}", flush=True)
    except RuntimeError as e:
        if rank == 0:
            print(f"{label}: RuntimeError: {e}", flush=True)
    dist.barrier()


def steps(rank, model, n=2, zero=None):
    out = []
    for _ in range(n):
        (zero or model).zero_grad()
        model(torch.randn(3, 2)).sum().backward()
        out.append(everyone(grads(zero or model)))
    return out


def run(rank, world_size, port):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world_size)

    for find_unused in [False, True]:
        def new_head():
            torch.manual_seed(0)
            model = DDP(nn.Sequential(nn.Linear(2, 3), nn.Linear(3, 1)), find_unused_parameters=find_unused)
            model.module[1] = nn.Linear(3, 2)   # a new task head, after wrapping
            torch.manual_seed(rank)
            return steps(rank, model)
        attempt(rank, f"new head after wrapping, find_unused={find_unused}", new_head)

    def new_parameter():
        torch.manual_seed(0)
        model = DDP(nn.Linear(2, 2))
        model.module.weight = nn.Parameter(torch.ones(2, 2))
        torch.manual_seed(rank)
        return steps(rank, model, 1)
    attempt(rank, "weight = nn.Parameter(...) after wrapping", new_parameter)

    def same_shape_data():
        torch.manual_seed(0)
        model = DDP(nn.Linear(2, 2))
        model.module.weight.data = torch.ones(2, 2)
        torch.manual_seed(rank)
        return steps(rank, model, 1)
    attempt(rank, "weight.data = ones after wrapping", same_shape_data)

    def nested():
        torch.manual_seed(0)
        model = DDP(DDP(nn.Linear(2, 2)))
        torch.manual_seed(rank)
        return [n for n, _ in model.named_parameters()], steps(rank, model)
    attempt(rank, "DDP(DDP(model))", nested)

    def two_wrappers():
        torch.manual_seed(0)
        net = nn.Linear(2, 2)
        first, second = DDP(net), DDP(net)
        torch.manual_seed(rank)
        return [steps(rank, d, 1, zero=net)[0] for d in (first, second, first)]
    attempt(rank, "two DDPs over one module", two_wrappers)

    def counting():
        model = DDP(Counting())
        seen = []
        for _ in range(3):
            model(torch.randn(2 + rank, 2)).sum().backward()
            seen.append(everyone(model.module.seen.item()))
        return seen
    attempt(rank, "integer buffer counting samples", counting)
    dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(run, args=(2, 29861), nprocs=2)
    print("done")
