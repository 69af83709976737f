# Buffers under DDP: BatchNorm's running stats with broadcast_buffers=True (rank 0's buffers are broadcast at the
# start of every synced forward, so after a step each rank holds rank 0's previous stats plus its own update) and
# False (each rank keeps its own), a custom module with register_buffer (a persistent call counter and a
# non-persistent scale), forwards outside DDP (model.module(x)) that move one rank's counter ahead, eval mode under
# torch.no_grad() (which forwards still broadcast), and the state_dict's buffer keys.
import os

import tinyddp as torch
import tinyddp.distributed as dist
import tinyddp.multiprocessing as mp
import tinyddp.nn as nn
from tinyddp.nn.parallel import DistributedDataParallel as DDP


class Counted(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.register_buffer("calls", torch.zeros(1, dtype=torch.long))
        self.register_buffer("scale", torch.full((n,), 0.5), persistent=False)

    def forward(self, x):
        with torch.no_grad():
            self.calls += 1
        return x * self.scale


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 4)
        self.bn = nn.BatchNorm1d(4)
        self.counted = Counted(4)
        self.out = nn.Linear(4, 1)

    def forward(self, x):
        return self.out(self.counted(torch.relu(self.bn(self.fc(x)))))


def gathered(t):
    parts = [torch.zeros_like(t) for _ in range(dist.get_world_size())]
    dist.all_gather(parts, t.detach().clone())
    return parts


def show(rank, tag, model):
    means = gathered(model.module.bn.running_mean)
    calls = gathered(model.module.counted.calls)
    tracked = gathered(model.module.bn.num_batches_tracked)
    if rank == 0:
        for r in range(dist.get_world_size()):
            print(f"{tag} rank {r}: running_mean {[f'{v:.5f}' for v in means[r].tolist()]} "
                  f"tracked {tracked[r].item()} calls {calls[r].item()}")


def run(rank, world_size):
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ["MASTER_PORT"] = "29974"
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    for broadcast_buffers in (True, False):
        tag = f"broadcast_buffers={broadcast_buffers}"
        torch.manual_seed(0)
        model = DDP(Net(), broadcast_buffers=broadcast_buffers)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        g = torch.Generator().manual_seed(rank)
        for step in range(2):
            x = torch.randn(6, 3, generator=g) + 2 * rank
            opt.zero_grad()
            model(x).pow(2).mean().backward()
            opt.step()
            show(rank, f"{tag} step {step}", model)
        if rank == 1:
            model.module(torch.randn(6, 3, generator=g))   # outside DDP: rank 1's buffers only
        show(rank, f"{tag} after rank 1's local forward", model)
        model.eval()
        with torch.no_grad():
            for i in range(2):
                out = model(torch.ones(2, 3))
                show(rank, f"{tag} eval forward {i}", model)
                outs = gathered(out)
                if rank == 0:
                    print(f"{tag} eval outputs same on all ranks: {torch.equal(outs[0], outs[1])}")
        model.train()
        x = torch.randn(6, 3, generator=g)
        model(x).sum().backward()
        show(rank, f"{tag} train again", model)
        params_equal = all(torch.equal(*gathered(p)) for p in model.parameters())
        if rank == 0:
            print(f"{tag} parameters same on all ranks: {params_equal}")
    if rank == 0:
        print("state_dict keys:", list(model.state_dict()))
        print("module buffers:", [n for n, _ in model.module.named_buffers()])
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(run, args=(2,), nprocs=2, join=True)
    print("done")
