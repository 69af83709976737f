# Training with periodic evaluation under DDP: model.eval() and torch.no_grad() around the validation loop (the DDP
# forward then prepares no reduction), per-rank correct/total counts and summed losses combined with all_reduce,
# dist.reduce of a metric to rank 0, predictions gathered with all_gather, a rank-0-only progress print, and
# model.train() again before the next epoch.
import os

import tinyddp as torch
import tinyddp.distributed as dist
import tinyddp.multiprocessing as mp
import tinyddp.nn as nn
import tinyddp.nn.functional as F
from tinyddp.nn.parallel import DistributedDataParallel as DDP
from tinyddp.utils.data import DataLoader, TensorDataset
from tinyddp.utils.data.distributed import DistributedSampler


def make_data(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 6, generator=g)
    y = (x[:, 0] - 0.5 * x[:, 1] + 0.25 * x[:, 2] > 0).long() + (x[:, 3] > 1).long()
    return TensorDataset(x, y)


def evaluate(model, loader, rank):
    model.eval()
    correct = torch.zeros(1, dtype=torch.long)
    total = torch.zeros(1, dtype=torch.long)
    loss_sum = torch.zeros(1, dtype=torch.float64)
    with torch.no_grad():
        for x, y in loader:
            logits = model(x)
            loss_sum += F.cross_entropy(logits, y, reduction="sum").double()
            correct += (logits.argmax(dim=1) == y).sum()
            total += y.numel()
    local = (correct.item(), total.item())
    dist.all_reduce(correct, op=dist.ReduceOp.SUM)
    dist.all_reduce(total, op=dist.ReduceOp.SUM)
    dist.all_reduce(loss_sum)
    model.train()
    return correct.item() / total.item(), loss_sum.item() / total.item(), local, logits.requires_grad


def main(rank, world_size):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = "29905"
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    train_ds, val_ds = make_data(96, 0), make_data(41, 1)
    train_sampler = DistributedSampler(train_ds, shuffle=True, seed=0)
    train_loader = DataLoader(train_ds, batch_size=12, sampler=train_sampler)
    val_loader = DataLoader(val_ds, batch_size=16, sampler=DistributedSampler(val_ds, shuffle=False))
    torch.manual_seed(0)
    model = DDP(nn.Sequential(nn.Linear(6, 32), nn.ReLU(), nn.Dropout(0.1), nn.Linear(32, 3)))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.2, momentum=0.9, weight_decay=1e-4)
    torch.manual_seed(100 + rank)   # each rank's dropout masks
    for epoch in range(4):
        train_sampler.set_epoch(epoch)
        for x, y in train_loader:
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
        acc, val_loss, local, requires_grad = evaluate(model, val_loader, rank)
        everyone = [None] * world_size
        dist.all_gather_object(everyone, local)
        if rank == 0:
            print(f"epoch {epoch} | train loss {loss.item():.4f} | val loss {val_loss:.4f} | val acc {acc:.4f} | "
                  f"per rank {everyone} | training {model.training} | eval logits require grad {requires_grad}")
    best = torch.tensor([acc * (1 + rank)])
    dist.reduce(best, dst=0, op=dist.ReduceOp.MAX)
    if rank == 0:
        print(f"reduce(MAX) on rank 0: {best.item():.4f}")
    x_probe = val_ds.tensors[0][:4]
    with torch.no_grad():
        pred = model(x_probe).argmax(1)
    preds = [torch.zeros_like(pred) for _ in range(world_size)]
    dist.all_gather(preds, pred)
    if rank == 0:
        print("predictions", [p.tolist() for p in preds], pred.dtype, "labels", val_ds.tensors[1][:4].tolist())
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(main, args=(2,), nprocs=2, join=True)
