# Two-rank DDP with torch.multiprocessing.spawn, gloo, DistributedSampler + set_epoch, an all_reduce'd metric.
import os

import tinyddp as torch
import tinyddp.distributed as dist
import tinyddp.multiprocessing as mp
import tinyddp.nn as nn
from tinyddp.nn.parallel import DistributedDataParallel as DDP
from tinyddp.utils.data import DataLoader, DistributedSampler, TensorDataset


def run(rank, world_size):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = "29561"
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    torch.manual_seed(0)
    X = torch.randn(32, 3)
    y = X.sum(dim=1, keepdim=True)
    ds = TensorDataset(X, y)
    sampler = DistributedSampler(ds, shuffle=True)
    loader = DataLoader(ds, batch_size=4, sampler=sampler)
    model = DDP(nn.Linear(3, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        running = torch.zeros(1)
        for xb, yb in loader:
            opt.zero_grad()
            loss = nn.functional.mse_loss(model(xb), yb)
            loss.backward()
            opt.step()
            running += loss.detach()
        dist.all_reduce(running, op=dist.ReduceOp.SUM)
        if rank == 0:
            print(f"epoch {epoch} mean loss {running.item() / (2 * len(loader)):.6f}", flush=True)
    w = model.module.weight.detach().clone()
    gathered = [torch.zeros_like(w) for _ in range(world_size)]
    dist.all_gather(gathered, w)
    if rank == 0:
        print("replicas equal:", all(torch.equal(gathered[0], g) for g in gathered), flush=True)
        print([f"{v:.5f}" for v in w.view(-1).tolist()], dist.get_world_size(), dist.get_backend(), flush=True)
        print(len(sampler), len(loader), flush=True)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(run, args=(2,), nprocs=2, join=True)
    print("done")
