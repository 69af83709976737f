# DDP bookkeeping scripts do: the wrapper's repr and state_dict keys ("module." prefix), saving rank 0's
# weights into a plain module, broadcast/all_gather_object of metadata, a ReduceOp.MAX metric, barrier.
# (ReduceOp.AVG's gloo error is left out: with it, 1.13 hung at the end in one run of three here.)
import os

import tinyddp as torch
import tinyddp.distributed as dist
import tinyddp.multiprocessing as mp
import tinyddp.nn as nn
from tinyddp.nn.parallel import DistributedDataParallel as DDP


def run(rank, world_size):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = "29565"
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    torch.manual_seed(42)
    net = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 1))
    model = DDP(net)
    if rank == 0:
        print(model, flush=True)
        print(list(model.state_dict().keys()), flush=True)
        print(type(model.module).__name__, model.training, flush=True)
    torch.manual_seed(rank)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4)
    for step in range(3):
        x = torch.randn(5, 4)
        loss = model(x).square().mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        worst = loss.detach().clone()
        dist.all_reduce(worst, op=dist.ReduceOp.MAX)
        if rank == 0:
            print(f"step {step} local {loss.item():.6f} max {worst.item():.6f}", flush=True)
    plain = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 1))
    plain.load_state_dict(model.module.state_dict())
    same = all(torch.equal(a, b) for a, b in zip(plain.parameters(), model.module.parameters()))
    meta = [None]
    if rank == 0:
        meta = [{"epoch": 3, "best": round(worst.item(), 4)}]
    dist.broadcast_object_list(meta, src=0)
    gathered = [None] * world_size
    dist.all_gather_object(gathered, {"rank": rank, "same": same})
    token = torch.tensor([float(rank + 1)])
    dist.broadcast(token, src=1)
    dist.barrier()
    if rank == 0:
        print(meta, gathered, token.item(), flush=True)
        print(opt.state_dict()["param_groups"], flush=True)
        print(sorted(opt.state_dict()["state"].keys()), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(run, args=(2,), nprocs=2, join=True)
    print("is_initialized after:", dist.is_initialized())
