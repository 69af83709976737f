"""The classic multi-task DDP error, in PyTorch's words: one forward, then one backward per task.

    PYTHONPATH=build/python python3 examples/two_backward.py

Two ranks (threads, over the "thread" backend) train a shared trunk with three heads. Each iteration runs
backward(loss_a, retain_graph=True) and then backward(loss_b + loss_t). In the first iteration DDP has all
parameters in one bucket; the second backward reaches the trunk again, and the reducer raises "Expected to mark
a variable ready only once" naming trunk.2.bias (index 3), as PyTorch 1.13 does. The same model and plan is
`tinyddp repro two-backward`. Written against PyTorch's API: replace the import with `import torch` and it runs
on PyTorch (there with the gloo backend).
"""
import sys

import tinyddp as torch
import tinyddp.distributed as dist
import tinyddp.multiprocessing as mp
import tinyddp.nn as nn
import tinyddp.nn.functional as F
from tinyddp.nn.parallel import DistributedDataParallel as DDP


class MultiTask(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 8))
        self.head_a = nn.Linear(8, 1)         # regression
        self.head_b = nn.Linear(8, 3)         # 3 classes
        self.text_decoder = nn.Linear(8, 5)   # in the story, task b's loss is b + t

    def forward(self, x):
        h = self.trunk(x)
        return {"a": self.head_a(h), "b": self.head_b(h), "t": self.text_decoder(h)}


def run(rank, world_size, errors):
    dist.init_process_group("thread", rank=rank, world_size=world_size)
    torch.manual_seed(0)
    model = DDP(MultiTask())
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    torch.manual_seed(1 + rank)
    x, ya, yb, yt = torch.randn(6, 4), torch.randn(6, 1), torch.randint(0, 3, (6,)), torch.randn(6, 5)
    try:
        for _ in range(3):
            opt.zero_grad()
            out = model(x)
            F.mse_loss(out["a"], ya).backward(retain_graph=True)
            (F.cross_entropy(out["b"], yb) + F.mse_loss(out["t"], yt)).backward()
            opt.step()
    except RuntimeError as e:
        errors[rank] = str(e)
    dist.destroy_process_group()


def main():
    errors = {}
    mp.spawn(run, args=(2, errors), nprocs=2)
    for rank in sorted(errors):
        print(f"rank {rank}: RuntimeError: {errors[rank]}\n")
    return 0 if errors else 1


if __name__ == "__main__":
    sys.exit(main())
