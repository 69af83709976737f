# A multi-task network trained with one backward per task under DDP, as users first write it, and the fixes they
# find on forums: the two backwards raise 1.13's "Expected to mark a variable ready only once" (at the second
# backward, naming the parameter index; with retain_graph=True, as most code has it), summing the losses works, a
# weighted sum works, static_graph=True does not help, and find_unused_parameters=True makes no difference either.
import os

import tinyddp as torch
import tinyddp.distributed as dist
import tinyddp.multiprocessing as mp
import tinyddp.nn as nn
import tinyddp.nn.functional as F
from tinyddp.nn.parallel import DistributedDataParallel as DDP


class MultiTaskNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.shared = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU())
        self.cls_head = nn.Linear(16, 3)
        self.reg_head = nn.Linear(16, 1)

    def forward(self, x):
        h = self.shared(x)
        return self.cls_head(h), self.reg_head(h).squeeze(-1)


FIXES = {
    "two backward": dict(),
    "sum of losses": dict(),
    "weighted sum": dict(),
    "static_graph": dict(static_graph=True),
    "find_unused_parameters": dict(find_unused_parameters=True),
}


def worker(rank, world_size, fix, port):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    torch.manual_seed(0)
    model = DDP(MultiTaskNet(), **FIXES[fix])
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    torch.manual_seed(rank)
    lines = []
    try:
        for step in range(3):
            x = torch.randn(8, 5)
            y_cls, y_reg = torch.randint(0, 3, (8,)), torch.randn(8)
            opt.zero_grad()
            logits, value = model(x)
            loss_cls = F.cross_entropy(logits, y_cls)
            loss_reg = F.mse_loss(value, y_reg)
            if fix == "sum of losses":
                (loss_cls + loss_reg).backward()
            elif fix == "weighted sum":
                (0.7 * loss_cls + 0.3 * loss_reg).backward()
            else:
                loss_cls.backward(retain_graph=True)
                loss_reg.backward()
            opt.step()
            lines.append(f"step {step}: cls {loss_cls.item():.5f} reg {loss_reg.item():.5f} "
                         f"shared grad {model.module.shared[0].weight.grad.abs().sum().item():.5f}")
    except RuntimeError as e:
        lines.append(f"RuntimeError: {e}")
    everyone = [None] * world_size
    dist.all_gather_object(everyone, lines)
    if rank == 0:
        print(f"== {fix}")
        for r, rank_lines in enumerate(everyone):
            for line in rank_lines:
                print(f"rank {r} {line}")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    for i, fix in enumerate(FIXES):
        mp.spawn(worker, args=(2, fix, 29911 + i), nprocs=2)
