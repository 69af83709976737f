# DDP over process groups other than the default one, as scripts that train several models side by side write it:
# dist.new_group([0, 1]) (the same ranks as the world: the same averages), one group per rank (new_group([0]) and
# new_group([1]), every rank creating both: each DDP then averages over its own rank only, so the replicas train
# apart, as in an ensemble), DDP on a rank outside the group it is given (1.13 refuses the placeholder new_group
# returns there), allreduce_hook with the group as its state, the group's rank and size, and model.join() over a
# subgroup with uneven batches.
import os

import tinyddp as torch
import tinyddp.distributed as dist
import tinyddp.multiprocessing as mp
import tinyddp.nn as nn
from tinyddp.distributed.algorithms.ddp_comm_hooks import default_hooks
from tinyddp.nn.parallel import DistributedDataParallel as DDP


def grads(model):
    return [round(p.grad.sum().item(), 4) for p in model.parameters()]


def everyone(value):
    out = [None] * dist.get_world_size()
    dist.all_gather_object(out, value)
    return out


def show(rank, label, value):
    if rank == 0:
        print(f"{label}: {value}", flush=True)


def train(rank, group, steps=2, hook=False):
    torch.manual_seed(0)
    model = DDP(nn.Linear(3, 2), process_group=group)
    if hook:
        model.register_comm_hook(group, default_hooks.allreduce_hook)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    torch.manual_seed(rank)
    for _ in range(steps):
        opt.zero_grad()
        model(torch.randn(4, 3)).pow(2).sum().backward()
        opt.step()
    return grads(model), round(model.module.weight.sum().item(), 4)


def run(rank, world_size, port):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    show(rank, "default group", everyone(train(rank, None)))
    pair = dist.new_group([0, 1])
    show(rank, "new_group([0, 1])", everyone(train(rank, pair)))
    show(rank, "new_group([0, 1]) with allreduce_hook", everyone(train(rank, pair, hook=True)))
    solo = [dist.new_group([0]), dist.new_group([1])]   # every rank creates every group, in the same order
    mine = solo[rank]
    show(rank, "own group: rank and size", everyone((dist.get_rank(mine), dist.get_world_size(mine))))
    show(rank, "own group", everyone(train(rank, mine)))
    show(rank, "own group with allreduce_hook", everyone(train(rank, mine, hook=True)))
    try:
        DDP(nn.Linear(3, 2), process_group=solo[1 - rank])
    except TypeError as e:
        show(rank, "DDP on a group without this rank", f"TypeError: {str(e).splitlines()[0]}")

    torch.manual_seed(0)
    model = DDP(nn.Linear(3, 1), process_group=pair)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    torch.manual_seed(rank)
    with model.join():
        for _ in range(2 + rank):
            opt.zero_grad()
            model(torch.randn(2, 3)).sum().backward()
            opt.step()
    show(rank, "join over new_group([0, 1])", everyone(round(model.module.weight.sum().item(), 4)))
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(run, args=(2, 29862), nprocs=2)
    print("done")
