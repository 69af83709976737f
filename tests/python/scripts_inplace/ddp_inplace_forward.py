# Two-rank DDP (spawn, gloo) over a model whose forward writes in place: ReLU(inplace=True) after a Linear,
# `out[out > 1] = 1` on activations, a residual `out += x`, `out.mul_(0.5)` and a masked_fill_; the loss and the
# replicas' parameters per step, then the classic error of an in-place write over a tensor the backward needs
# (ReLU(inplace=True) after a sigmoid), raised on each rank at backward.
import os

import tinyddp as torch
import tinyddp.distributed as dist
import tinyddp.multiprocessing as mp
import tinyddp.nn as nn
from tinyddp.nn.parallel import DistributedDataParallel as DDP


class Block(nn.Module):
    def __init__(self, sigmoid_first=False):
        super().__init__()
        self.fc1 = nn.Linear(4, 4)
        self.fc2 = nn.Linear(4, 4)
        self.act = nn.ReLU(inplace=True)
        self.sigmoid_first = sigmoid_first

    def forward(self, x):
        h = self.fc1(x)
        if self.sigmoid_first:
            h = torch.sigmoid(h)
        h = self.act(h)
        out = self.fc2(h)
        out[out > 1] = 1.0
        out += x
        out.mul_(0.5)
        out.masked_fill_(out < -1, -1.0)
        return out


def run(rank, world_size):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = "29587"
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    torch.manual_seed(0)
    model = DDP(Block())
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    torch.manual_seed(1 + rank)
    data, target = torch.randn(6, 4) * 2, torch.randn(6, 4)
    for step in range(3):
        opt.zero_grad()
        out = model(data)
        loss = ((out - target) ** 2).mean()
        loss.backward()
        opt.step()
        total = loss.detach().clone()
        dist.all_reduce(total)
        if rank == 0:
            print(f"step {step} loss {total.item() / world_size:.5f} out.grad_fn {out.grad_fn.name()} "
                  f"version {out._version}", flush=True)
    w = model.module.fc1.weight.detach().clone()
    gathered = [torch.zeros_like(w) for _ in range(world_size)]
    dist.all_gather(gathered, w)
    if rank == 0:
        print("replicas equal:", all(torch.equal(gathered[0], g) for g in gathered), flush=True)
        print([f"{v:.4f}" for v in w.view(-1).tolist()[:6]], flush=True)
    torch.manual_seed(0)
    broken = DDP(Block(sigmoid_first=True))
    try:
        broken(data).sum().backward()
    except RuntimeError as e:
        if rank == 0:
            print("error:", e, flush=True)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(run, args=(2,), nprocs=2, join=True)
    print("done")
