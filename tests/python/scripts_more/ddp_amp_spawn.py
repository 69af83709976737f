# DDP as users write it for a multi-GPU box and run on a CPU: mp.spawn, gloo, a device per rank chosen by
# torch.cuda.is_available(), autocast and GradScaler flags tied to CUDA (off here), DistributedSampler, gradient
# clipping on the DDP module, an all_reduce'd validation under inference_mode, rank-0 logging and checkpointing,
# barrier and destroy_process_group.
import io
import os

import tinyddp as torch
import tinyddp.distributed as dist
import tinyddp.multiprocessing as mp
import tinyddp.nn as nn
from tinyddp.nn.parallel import DistributedDataParallel as DDP
from tinyddp.utils.data import DataLoader, TensorDataset
from tinyddp.utils.data.distributed import DistributedSampler


def setup(rank, world_size):
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ["MASTER_PORT"] = "29583"
    dist.init_process_group("gloo", rank=rank, world_size=world_size)


def main(rank, world_size):
    setup(rank, world_size)
    use_cuda = torch.cuda.is_available()
    device = torch.device(f"cuda:{rank}" if use_cuda else "cpu")
    torch.manual_seed(0)
    X = torch.randn(64, 5)
    y = (X[:, :2].sum(1) > 0).long()
    train = TensorDataset(X[:48], y[:48])
    val = TensorDataset(X[48:], y[48:])
    sampler = DistributedSampler(train, num_replicas=world_size, rank=rank, shuffle=True, seed=0)
    loader = DataLoader(train, batch_size=8, sampler=sampler)
    val_loader = DataLoader(val, batch_size=8, sampler=DistributedSampler(val, shuffle=False))

    model = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 2)).to(device)
    ddp_model = DDP(model, device_ids=[rank] if use_cuda else None)
    optimizer = torch.optim.SGD(ddp_model.parameters(), lr=0.1, momentum=0.9)
    scaler = torch.cuda.amp.GradScaler(enabled=use_cuda)
    criterion = nn.CrossEntropyLoss()

    for epoch in range(3):
        sampler.set_epoch(epoch)
        ddp_model.train()
        for xb, yb in loader:
            xb, yb = xb.to(device), yb.to(device)
            optimizer.zero_grad()
            with torch.autocast(device_type="cuda", enabled=use_cuda):
                loss = criterion(ddp_model(xb), yb)
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            nn.utils.clip_grad_norm_(ddp_model.parameters(), 1.0)
            scaler.step(optimizer)
            scaler.update()
        ddp_model.eval()
        stats = torch.zeros(3)
        with torch.inference_mode():
            for xb, yb in val_loader:
                out = ddp_model(xb)
                stats += torch.tensor([criterion(out, yb).item() * len(yb), (out.argmax(1) == yb).sum().item(),
                                       len(yb)])
        dist.all_reduce(stats, op=dist.ReduceOp.SUM)
        if rank == 0:
            print(f"epoch {epoch} val loss {stats[0].item() / stats[2].item():.4f} "
                  f"acc {stats[1].item() / stats[2].item():.3f} n {int(stats[2].item())}")
    if rank == 0:
        buf = io.BytesIO()
        torch.save(ddp_model.module.state_dict(), buf)
        print("saved", sorted(ddp_model.module.state_dict()), buf.tell() > 0)
    dist.barrier()
    weights = [p.detach().clone() for p in ddp_model.parameters()]
    gathered = [torch.zeros_like(weights[0]) for _ in range(world_size)]
    dist.all_gather(gathered, weights[0])
    if rank == 0:
        print("replicas equal:", torch.equal(gathered[0], gathered[1]))
    dist.destroy_process_group()


if __name__ == "__main__":
    world_size = 2
    mp.spawn(main, args=(world_size,), nprocs=world_size, join=True)
    print("done")
