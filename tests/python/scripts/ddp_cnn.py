# A small CNN with a custom autograd Function under 2-rank DDP (gloo): per-rank data, gradient clipping,
# a per-epoch all_reduce'd accuracy, and replicas compared at the end.
import os

import tinyddp as torch
import tinyddp.distributed as dist
import tinyddp.multiprocessing as mp
import tinyddp.nn as nn
import tinyddp.nn.functional as F
from tinyddp.nn.parallel import DistributedDataParallel as DDP


class ClampGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        return grad.clamp(-0.01, 0.01)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 3, 3, padding=1)
        self.head = nn.Linear(3 * 3 * 3, 2)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv(x)), 2)
        x = ClampGrad.apply(x)
        return self.head(x.flatten(1))


def run(rank, world_size):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = "29566"
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    torch.manual_seed(0)
    model = DDP(Net())
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    torch.manual_seed(100 + rank)
    images, labels = torch.randn(4, 1, 6, 6), torch.randint(0, 2, (4,))
    for epoch in range(3):
        opt.zero_grad()
        out = model(images)
        loss = F.cross_entropy(out, labels)
        loss.backward()
        norm = nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        correct = torch.tensor([(out.argmax(1) == labels).sum().item(), labels.numel()], dtype=torch.float32)
        dist.all_reduce(correct)
        if rank == 0:
            acc = (correct[0] / correct[1]).item()
            print(f"epoch {epoch} loss {loss.item():.4f} norm {norm.item():.4f} acc {acc:.4f}", flush=True)
    flat = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
    copies = [torch.zeros_like(flat) for _ in range(world_size)]
    dist.all_gather(copies, flat)
    if rank == 0:
        print("replicas equal:", torch.equal(copies[0], copies[1]), f"{flat.abs().sum().item():.4f}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(run, args=(2,), nprocs=2)
