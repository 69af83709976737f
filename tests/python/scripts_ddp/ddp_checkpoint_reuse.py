# Activation checkpointing and reused layers under DDP: torch.utils.checkpoint.checkpoint(fn, x,
# use_reentrant=False) gives the gradients of the plain model (with and without find_unused_parameters), a layer
# applied twice in one forward (shared weights: one AccumulateGrad, one reduction), the same shared layer under
# non-reentrant checkpoints (fine) and under reentrant ones (1.13's "Expected to mark a variable ready only once",
# and static_graph=True as the fix), and checkpoint_sequential on an nn.Sequential (its first segment's parameters
# get no gradient when the input does not require one: what DDP says at the next forward).
import os

import tinyddp as torch
import tinyddp.distributed as dist
import tinyddp.multiprocessing as mp
import tinyddp.nn as nn
from tinyddp.nn.parallel import DistributedDataParallel as DDP
from tinyddp.utils.checkpoint import checkpoint, checkpoint_sequential


class Net(nn.Module):
    def __init__(self, mode):
        super().__init__()
        self.mode = mode
        self.inp = nn.Linear(4, 6)
        self.shared = nn.Linear(6, 6)   # applied twice
        self.head = nn.Linear(6, 2)

    def block(self, h):
        return torch.tanh(self.shared(h))

    def forward(self, x):
        h = torch.relu(self.inp(x))
        if self.mode == "plain":
            h = self.block(self.block(h))
        elif self.mode == "non-reentrant":
            h = checkpoint(self.block, h, use_reentrant=False)
            h = checkpoint(self.block, h, use_reentrant=False)
        else:
            h = checkpoint(self.block, h)
            h = checkpoint(self.block, h)
        return self.head(h)


class SeqNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.seq = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 1))

    def forward(self, x):
        return checkpoint_sequential(self.seq, 2, x)


def gathered(t):
    parts = [torch.zeros_like(t) for _ in range(dist.get_world_size())]
    dist.all_gather(parts, t.detach().clone())
    return parts


def train(rank, mode, steps=2, **kwargs):
    torch.manual_seed(0)
    model = DDP(Net(mode), **kwargs)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    g = torch.Generator().manual_seed(rank)
    for _ in range(steps):
        opt.zero_grad()
        loss = (model(torch.randn(5, 4, generator=g)) - 1).pow(2).mean()
        loss.backward()
        opt.step()
    grads = [f"{p.grad.norm().item():.5f}" for p in model.parameters()]
    synced = all(torch.equal(*gathered(p)) for p in model.parameters())
    return f"loss {loss.item():.5f} grad norms {grads} replicas same {synced}"


def run(rank, world_size):
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ["MASTER_PORT"] = "29975"
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    cases = [("plain", {}), ("non-reentrant", {}), ("non-reentrant", {"find_unused_parameters": True}),
             ("reentrant", {}), ("reentrant", {"find_unused_parameters": True}), ("reentrant", {"static_graph": True})]
    for mode, kwargs in cases:
        try:
            result = train(rank, mode, **kwargs)
        except RuntimeError as e:
            result = f"RuntimeError: {str(e).splitlines()[0]}"
        if rank == 0:
            print(f"{mode} {kwargs}: {result}", flush=True)
        dist.barrier()
    for requires_grad in (True, False):
        torch.manual_seed(0)
        model = DDP(SeqNet())
        lines = []
        try:
            for step in range(2):
                x = torch.randn(3, 4, requires_grad=requires_grad)
                model(x).sum().backward()
                lines.append(f"step {step} grads {[None if p.grad is None else f'{p.grad.norm().item():.5f}' for p in model.parameters()]}")
        except RuntimeError as e:
            lines.append(f"RuntimeError: {str(e).splitlines()[0]}")
        if rank == 0:
            for line in lines:
                print(f"checkpoint_sequential, input requires_grad={requires_grad}: {line}", flush=True)
        dist.barrier()
    try:
        checkpoint_sequential(model.module.seq, 2, torch.randn(3, 4), use_reentrant=False)
    except ValueError as e:
        if rank == 0:
            print(f"checkpoint_sequential(use_reentrant=False): ValueError: {e}")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(run, args=(2,), nprocs=2, join=True)
    print("done")
