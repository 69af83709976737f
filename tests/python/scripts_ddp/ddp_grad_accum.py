# Gradient accumulation under DDP: no_sync() for all but the last micro-batch (with contextlib.nullcontext as the
# usual switch), the loss divided by the accumulation steps, the local gradients inside no_sync against the
# averaged ones after the synced backward, the same step as one large batch, and the mistake of stepping inside
# no_sync (the replicas drift apart, with no error).
import contextlib
import os

import tinyddp as torch
import tinyddp.distributed as dist
import tinyddp.multiprocessing as mp
import tinyddp.nn as nn
from tinyddp.nn.parallel import DistributedDataParallel as DDP

ACCUM = 3


def same_on_all_ranks(t):
    parts = [torch.zeros_like(t) for _ in range(dist.get_world_size())]
    dist.all_gather(parts, t.detach().contiguous())
    return all(torch.equal(parts[0], p) for p in parts[1:])


def train(rank, world_size):
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ["MASTER_PORT"] = "29903"
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    torch.manual_seed(42)
    net = nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 2))
    reference = nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 2))
    reference.load_state_dict(net.state_dict())
    model = DDP(net)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    ref_opt = torch.optim.SGD(reference.parameters(), lr=0.1, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    g = torch.Generator().manual_seed(7)
    for step in range(2):
        # every rank draws every rank's micro-batches (one stream), then keeps its own: the reference sees all
        batches = [(torch.randn(world_size, 5, 4, generator=g), torch.randint(0, 2, (world_size, 5), generator=g))
                   for _ in range(ACCUM)]
        opt.zero_grad()
        for i, (x, y) in enumerate(batches):
            context = model.no_sync() if i < ACCUM - 1 else contextlib.nullcontext()
            with context:
                loss = loss_fn(model(x[rank]), y[rank]) / ACCUM
                loss.backward()
            w_grad = net[0].weight.grad
            synced = same_on_all_ranks(w_grad)
            if rank == 0:
                print(f"step {step} micro {i}: {type(context).__name__} loss {loss.item():.6f} "
                      f"grad sum {w_grad.sum().item():.6f} same on all ranks {synced}")
        opt.step()
        ref_opt.zero_grad()
        for x, y in batches:
            (loss_fn(reference(x.view(-1, 4)), y.view(-1)) / ACCUM).backward()
        ref_opt.step()
        diff = max((a - b).abs().max().item() for a, b in zip(net.parameters(), reference.parameters()))
        if rank == 0:
            print(f"step {step}: within 1e-6 of one large batch: {diff < 1e-6}")

    # The mistake: optimizer.step() inside no_sync on every micro-batch.
    for i in range(2):
        with model.no_sync():
            opt.zero_grad()
            model(torch.randn(3, 4) * (rank + 1)).sum().backward()
            opt.step()
    in_sync = all(same_on_all_ranks(p) for p in model.parameters())
    if rank == 0:
        print("stepping inside no_sync keeps the replicas equal:", in_sync)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(train, args=(2,), nprocs=2)
    print("done")
