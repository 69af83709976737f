# A model with a branch that a forward may skip (a gate that routes to one of two heads), under DDP: without
# find_unused_parameters the next forward raises 1.13's "Expected to have finished reduction in the prior iteration"
# (with the parameter indices; TORCH_DISTRIBUTED_DEBUG=DETAIL adds their names when it is set before the ranks
# import torch, and not when a rank sets it before init_process_group), with find_unused_parameters=True
# it trains, the unused head's .grad stays None on every rank, and the replicas stay equal. Also an output that is
# not used in the loss, and a parameter unused on one rank only (its .grad is the average over the ranks that used
# it, divided by the world size).
import os

import tinyddp as torch
import tinyddp.distributed as dist
import tinyddp.multiprocessing as mp
import tinyddp.nn as nn
from tinyddp.nn.parallel import DistributedDataParallel as DDP


class Router(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 8)
        self.small = nn.Linear(8, 1)
        self.large = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 1))

    def forward(self, x, use_large):
        h = torch.tanh(self.body(x))
        return self.large(h) if use_large else self.small(h)


def grads(model):
    return {n: (None if p.grad is None else f"{p.grad.sum().item():.5f}") for n, p in model.module.named_parameters()}


def run(rank, world_size, find_unused, port, debug):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    if debug == "in the rank":
        os.environ["TORCH_DISTRIBUTED_DEBUG"] = "DETAIL"   # too late: torch read it when the rank imported it
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    torch.manual_seed(0)
    model = DDP(Router(), find_unused_parameters=find_unused)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    torch.manual_seed(rank)
    tag = f"find_unused_parameters={find_unused}" + (f" DETAIL set {debug}" if debug else "")
    if rank == 0:
        print(tag, "debug level", dist.get_debug_level(), flush=True)
    try:
        for step, use_large in enumerate([False, False, True]):
            opt.zero_grad()
            x = torch.randn(5, 4)
            loss = (model(x, use_large) - 1).pow(2).mean()
            loss.backward()
            opt.step()
            if rank == 0:
                print(f"{tag} step {step} large={use_large} loss {loss.item():.5f} grads {grads(model)}", flush=True)
        if find_unused:
            # rank 1 uses the large head, rank 0 the small one: each parameter is used on one rank only
            opt.zero_grad()
            model(torch.randn(5, 4), rank == 1).sum().backward()
            everyone = [None] * world_size
            dist.all_gather_object(everyone, grads(model))
            if rank == 0:
                for r, g in enumerate(everyone):
                    print(f"{tag} rank {r} uses {'large' if r == 1 else 'small'}: {g}")
            params = [p.detach().clone() for p in model.parameters()]
            gathered = [[torch.zeros_like(p) for p in params] for _ in range(world_size)]
            for i, p in enumerate(params):
                dist.all_gather([g[i] for g in gathered], p)
            if rank == 0:
                print(f"{tag} replicas equal:", all(torch.equal(a, b) for a, b in zip(*gathered)))
    except RuntimeError as e:
        if rank == 0:
            print(f"{tag}: RuntimeError: {e}", flush=True)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(run, args=(2, False, 29907, None), nprocs=2)
    mp.spawn(run, args=(2, False, 29908, "in the rank"), nprocs=2)
    os.environ["TORCH_DISTRIBUTED_DEBUG"] = "DETAIL"
    mp.spawn(run, args=(2, False, 29910, "before spawn"), nprocs=2)
    del os.environ["TORCH_DISTRIBUTED_DEBUG"]
    print("main process debug level", dist.get_debug_level())
    mp.spawn(run, args=(2, True, 29909, None), nprocs=2)
    print("done")
