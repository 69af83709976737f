# Copies of a DDP model as training scripts make them: an exponential moving average (EMA) of the weights kept in
# copy.deepcopy(model.module) and updated under torch.no_grad() after each step, the EMA model evaluated on every
# rank, copy.deepcopy of the DDP wrapper itself (1.13 rebuilds a reducer for the copy, which then trains in sync
# on its own, its attributes carried over), and the original training on after it.
import copy
import os

import tinyddp as torch
import tinyddp.distributed as dist
import tinyddp.multiprocessing as mp
import tinyddp.nn as nn
from tinyddp.nn.parallel import DistributedDataParallel as DDP


def same_on_all_ranks(model):
    ok = True
    for p in model.parameters():
        parts = [torch.zeros_like(p) for _ in range(dist.get_world_size())]
        dist.all_gather(parts, p.detach().clone())
        ok = ok and all(torch.equal(parts[0], q) for q in parts[1:])
    return ok


@torch.no_grad()
def ema_update(ema, model, decay):
    for e, p in zip(ema.parameters(), model.parameters()):
        e.mul_(decay).add_(p.detach(), alpha=1 - decay)


def run(rank, world_size):
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ["MASTER_PORT"] = "29983"
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    torch.manual_seed(0)
    model = DDP(nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1)), bucket_cap_mb=5)
    ema = copy.deepcopy(model.module)
    for p in ema.parameters():
        p.requires_grad_(False)
    opt = torch.optim.SGD(model.parameters(), lr=0.2)
    g = torch.Generator().manual_seed(rank)
    lines = []
    for step in range(3):
        x = torch.randn(6, 3, generator=g)
        opt.zero_grad()
        loss = (model(x) - x.sum(1, keepdim=True)).pow(2).mean()
        loss.backward()
        opt.step()
        ema_update(ema, model.module, 0.5)
        lines.append(f"step {step} loss {loss.item():.5f} ema weight {[round(v, 5) for v in ema[2].weight[0].tolist()]}")
    ema.eval()
    with torch.no_grad():
        lines.append(f"ema eval {ema(torch.ones(1, 3)).item():.5f} ema same on all ranks {same_on_all_ranks(ema)}")

    twin = copy.deepcopy(model)
    lines.append(f"deepcopy(DDP): {type(twin).__name__} {type(twin.module).__name__} "
                 f"shares parameters {twin.module[0].weight is model.module[0].weight} "
                 f"equal {torch.equal(twin.module[0].weight, model.module[0].weight)} "
                 f"bucket_bytes_cap {twin.bucket_bytes_cap} grads copied {twin.module[0].bias.grad is not None}")
    twin_opt = torch.optim.SGD(twin.parameters(), lr=0.2)
    for _ in range(2):
        twin_opt.zero_grad()
        twin(torch.randn(6, 3, generator=g) * (rank + 1)).sum().backward()
        twin_opt.step()
    lines.append(f"twin trained: bias grad {[round(v, 5) for v in twin.module[2].bias.grad.tolist()]} "
                 f"same on all ranks {same_on_all_ranks(twin)}")
    model(torch.ones(2, 3)).sum().backward()
    lines.append(f"original still trains: first bias grad {[round(v, 5) for v in model.module[0].bias.grad.tolist()]}")
    everyone = [None] * world_size
    dist.all_gather_object(everyone, lines)
    if rank == 0:
        for r, rank_lines in enumerate(everyone):
            for line in rank_lines:
                print(f"[rank {r}] {line}")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(run, args=(2,), nprocs=2, join=True)
    print("done")
