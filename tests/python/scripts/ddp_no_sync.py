# Gradient accumulation under DDP with no_sync(), and frozen parameters with find_unused_parameters.
import os

import tinyddp as torch
import tinyddp.distributed as dist
import tinyddp.multiprocessing as mp
import tinyddp.nn as nn
from tinyddp.nn.parallel import DistributedDataParallel as DDP


def run(rank, world_size):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = "29564"
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    model = DDP(net)
    torch.manual_seed(100 + rank)
    micro = [torch.randn(2, 3) for _ in range(3)]
    with model.no_sync():
        for xb in micro[:-1]:
            model(xb).pow(2).mean().backward()
    local = net[0].weight.grad.clone()
    model(micro[-1]).pow(2).mean().backward()
    synced = net[0].weight.grad.clone()
    out = [torch.zeros_like(synced) for _ in range(world_size)]
    dist.all_gather(out, synced)
    if rank == 0:
        print("synced equal:", torch.allclose(out[0], out[1]), flush=True)
        print(f"{local.norm().item():.5f} {synced.norm().item():.5f}", flush=True)

    torch.manual_seed(0)
    net2 = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    net2[0].requires_grad_(False)
    model2 = DDP(net2, find_unused_parameters=True)
    opt = torch.optim.SGD(filter(lambda p: p.requires_grad, model2.parameters()), lr=0.5)
    for step in range(2):
        opt.zero_grad()
        loss = model2(micro[step]).sum()
        loss.backward()
        opt.step()
    if rank == 0:
        print([n for n, p in net2.named_parameters() if p.requires_grad], flush=True)
        print(net2[0].weight.grad is None, [f"{v:.5f}" for v in net2[2].bias.tolist()], flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(run, args=(2,), nprocs=2)
