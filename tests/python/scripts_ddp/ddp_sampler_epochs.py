# DistributedSampler as users train with it: set_epoch every epoch (and what forgetting it does), drop_last on the
# sampler and on the DataLoader, a dataset whose length the world size does not divide (padding by repetition),
# shuffle=False for validation, and per-rank data seeded with torch.manual_seed(rank). Every rank's indices are
# gathered with all_gather_object and printed by rank 0.
import os

import tinyddp as torch
import tinyddp.distributed as dist
import tinyddp.multiprocessing as mp
import tinyddp.nn as nn
import tinyddp.nn.functional as F
from tinyddp.nn.parallel import DistributedDataParallel as DDP
from tinyddp.utils.data import DataLoader, Dataset, TensorDataset
from tinyddp.utils.data.distributed import DistributedSampler


class Squares(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        x = torch.tensor([i / 10.0, (i % 3) / 3.0])
        return x, torch.tensor([x[0].item() ** 2 + x[1].item()])


def gathered(obj):
    out = [None] * dist.get_world_size()
    dist.all_gather_object(out, obj)
    return out


def worker(rank, world_size):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = "29902"
    dist.init_process_group(backend="gloo", rank=rank, world_size=world_size)
    ds = Squares(11)
    for drop_last in (False, True):
        s = DistributedSampler(ds, shuffle=True, seed=3, drop_last=drop_last)
        per_epoch = []
        for epoch in range(2):
            s.set_epoch(epoch)
            per_epoch.append(list(s))
        forgot = list(DistributedSampler(ds, shuffle=True, seed=3, drop_last=drop_last))
        everyone = gathered((len(s), s.num_samples, s.total_size, per_epoch, forgot))
        if rank == 0:
            for r, (n, num, total, epochs, without) in enumerate(everyone):
                print(f"drop_last={drop_last} rank {r}: len {n} num_samples {num} total_size {total}")
                for e, idx in enumerate(epochs):
                    print(f"  epoch {e}: {idx}")
                print(f"  without set_epoch: {without}")
    val = DistributedSampler(ds, shuffle=False)
    everyone = gathered(list(val))
    if rank == 0:
        print("validation (shuffle=False):", everyone)

    torch.manual_seed(0)
    model = DDP(nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 1)))
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    sampler = DistributedSampler(ds, seed=1)
    loader = DataLoader(ds, batch_size=2, sampler=sampler, drop_last=True)
    torch.manual_seed(rank)   # per-rank randomness (noise added to the targets)
    for epoch in range(4):
        sampler.set_epoch(epoch)
        total, count = torch.zeros(1), torch.zeros(1)
        for x, y in loader:
            opt.zero_grad()
            loss = F.mse_loss(model(x), y + 0.01 * torch.randn_like(y))
            loss.backward()
            opt.step()
            total += loss.detach() * x.shape[0]
            count += x.shape[0]
        dist.all_reduce(total)
        dist.all_reduce(count)
        if rank == 0:
            print(f"epoch {epoch}: {len(loader)} batches per rank, mean loss {(total / count).item():.5f}, "
                  f"samples {int(count.item())}")
    first = next(iter(DataLoader(TensorDataset(torch.arange(6.0).view(3, 2)), batch_size=2)))
    if rank == 0:
        print("TensorDataset batch:", type(first).__name__, len(first), first[0].tolist())
        print("weight[0]:", [f"{v:.5f}" for v in model.module[0].weight[0].tolist()])
    dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(worker, args=(2,), nprocs=2, join=True)
    print("finished")
