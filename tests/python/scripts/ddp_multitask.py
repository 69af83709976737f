# A multi-task model under DDP: two backward() calls per step raise, the combined loss works.
import os

import tinyddp as torch
import tinyddp.distributed as dist
import tinyddp.multiprocessing as mp
import tinyddp.nn as nn
from tinyddp.nn.parallel import DistributedDataParallel as DDP


class MultiTask(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Linear(4, 8)
        self.head_a = nn.Linear(8, 1)
        self.head_b = nn.Linear(8, 1)

    def forward(self, x):
        h = torch.relu(self.trunk(x))
        return self.head_a(h), self.head_b(h)


def run(rank, world_size, mode):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = "29562" if mode == "two" else "29563"
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    torch.manual_seed(0)
    model = DDP(MultiTask())
    torch.manual_seed(rank + 10)
    x = torch.randn(6, 4)
    ta, tb = torch.randn(6, 1), torch.randn(6, 1)
    a, b = model(x)
    la = nn.functional.mse_loss(a, ta)
    lb = nn.functional.mse_loss(b, tb)
    try:
        if mode == "two":
            la.backward(retain_graph=True)
            lb.backward()
        else:
            (la + lb).backward()
        g = model.module.trunk.weight.grad
        if rank == 0:
            print(mode, "ok", f"{g.abs().sum().item():.6f}", flush=True)
    except RuntimeError as e:
        if rank == 0:
            print(mode, "RuntimeError:", str(e).splitlines()[0], flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    for mode in ("two", "combined"):
        mp.spawn(run, args=(2, mode), nprocs=2)
    print("done")
