# DDP over an LSTM model with an auxiliary head used only on some steps: without find_unused_parameters the
# second iteration raises (the head's gradients never arrived); with it, training runs and replicas stay equal.
import os

import tinyddp as torch
import tinyddp.distributed as dist
import tinyddp.multiprocessing as mp
import tinyddp.nn as nn
import tinyddp.nn.functional as F
from tinyddp.nn.parallel import DistributedDataParallel as DDP


class Forecaster(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(3, 8, num_layers=2, batch_first=True)
        self.head = nn.Linear(8, 1)
        self.aux = nn.Linear(8, 3)   # next-step reconstruction, only on even steps

    def forward(self, x, with_aux):
        out, (h_n, _) = self.lstm(x)
        pred = self.head(h_n[-1])
        return (pred, self.aux(out[:, :-1])) if with_aux else (pred, None)


def run(rank, world_size, find_unused):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = "29581" if find_unused else "29582"
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    torch.manual_seed(0)
    model = DDP(Forecaster(), find_unused_parameters=find_unused)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    torch.manual_seed(100 + rank)
    x = torch.randn(4, 6, 3)
    y = x.sum(dim=(1, 2)).unsqueeze(1) * 0.1
    try:
        for step in range(4):
            pred, recon = model(x, with_aux=step % 2 == 1)
            loss = F.mse_loss(pred, y)
            if recon is not None:
                loss = loss + F.mse_loss(recon, x[:, 1:])
            opt.zero_grad()
            loss.backward()
            opt.step()
            total = loss.detach().clone()
            dist.all_reduce(total)
            if rank == 0:
                print(f"find_unused={find_unused} step {step} loss {total.item() / world_size:.5f}", flush=True)
    except RuntimeError as e:
        if rank == 0:
            print(f"find_unused={find_unused} RuntimeError:", str(e).splitlines()[0], flush=True)
    w = model.module.lstm.weight_hh_l1.detach().clone()
    gathered = [torch.zeros_like(w) for _ in range(world_size)]
    dist.all_gather(gathered, w)
    if rank == 0:
        print("replicas equal:", all(torch.equal(gathered[0], g) for g in gathered), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    for find_unused in (False, True):
        mp.spawn(run, args=(2, find_unused), nprocs=2, join=True)
    print("done")
