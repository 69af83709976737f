# What each spawned rank owns as 1.13's child processes do: a model built before mp.spawn and passed in its args
# is each rank's own module (its own .grad and DDP wrapper) over the parent's storage, so the parent sees the
# trained weights; a rank that replaces sys.stdout (or uses contextlib.redirect_stdout) silences only itself;
# DDP before init_process_group is 1.13's RuntimeError; and with logging at INFO, 1.13's store-based barrier
# lines at init_process_group and new_group, and the reducer's "buckets have been rebuilt" line at the second
# forward.
import contextlib
import io
import logging
import os
import sys

import tinyddp as torch
import tinyddp.distributed as dist
import tinyddp.multiprocessing as mp
import tinyddp.nn as nn
from tinyddp.nn.parallel import DistributedDataParallel as DDP


def train_parents_model(rank, world, model, port):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    ddp = DDP(model)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
    ddp(torch.ones(4, 3) * (rank + 1)).sum().backward()
    g = torch.tensor([model.weight.grad.sum().item()])
    parts = [torch.zeros(1) for _ in range(world)]
    dist.all_gather(parts, g)
    if rank == 0:
        opt.step()   # one rank steps: the parameters are the parent's storage
        print(f"grads {parts[0].item():.4f} {parts[1].item():.4f}", flush=True)
    dist.barrier()
    dist.destroy_process_group()


def silence_other_ranks(rank, world, port):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    if rank != 0:
        sys.stdout = io.StringIO()
    dist.barrier()
    print(f"rank {rank}: line 1", flush=True)
    dist.barrier()
    if rank == 1:
        with contextlib.redirect_stdout(io.StringIO()):
            dist.barrier()
            print("captured on rank 1")
            dist.barrier()
    else:
        dist.barrier()
        print(f"rank {rank}: line 2 (while rank 1 redirects)", flush=True)
        dist.barrier()
    t = torch.tensor([float(rank)])
    dist.all_reduce(t)
    print(f"rank {rank}: sum {t.item()}", flush=True)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    torch.manual_seed(0)
    model = nn.Linear(3, 1)
    print(f"parent before {model.weight.sum().item():.5f}")
    mp.spawn(train_parents_model, args=(2, model, 29731), nprocs=2)
    print(f"parent after {model.weight.sum().item():.5f}", model.weight.grad)
    mp.spawn(silence_other_ranks, args=(2, 29732), nprocs=2)
    print("parent still prints")

    try:
        DDP(nn.Linear(2, 2))
    except RuntimeError as e:
        print("DDP before init:", e)

    logging.basicConfig(stream=sys.stdout, level=logging.INFO, format="%(levelname)s:%(name)s:%(message)s")
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = "29733"
    dist.init_process_group("gloo", rank=0, world_size=1)
    dist.new_group([0])
    ddp = DDP(nn.Linear(3, 1))
    for step in range(3):
        print("step", step)
        ddp(torch.ones(2, 3)).sum().backward()
    dist.destroy_process_group()
    os.environ["MASTER_PORT"] = "29734"
    dist.init_process_group("gloo", rank=0, world_size=1)   # the group count starts again
    dist.destroy_process_group()
    logging.getLogger().setLevel(logging.WARNING)
