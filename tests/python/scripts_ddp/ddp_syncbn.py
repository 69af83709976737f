# SyncBatchNorm.convert_sync_batchnorm on a CPU model under DDP, as users try it: the converted model's repr, the
# buffers carried over, 1.13's refusal at DDP construction ("SyncBatchNorm layers only work with GPU modules") and
# in the forward ("SyncBatchNorm expected input tensor to be on GPU", train and eval mode); the fallback users take (plain BatchNorm under DDP, whose running stats
# are rank 0's after every forward with broadcast_buffers=True).
import os

import tinyddp as torch
import tinyddp.distributed as dist
import tinyddp.multiprocessing as mp
import tinyddp.nn as nn
from tinyddp.nn.parallel import DistributedDataParallel as DDP


def build():
    return nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2), nn.ReLU(), nn.Flatten(), nn.Linear(8, 3),
                         nn.BatchNorm1d(3))


def run(rank, world_size):
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ["MASTER_PORT"] = "29906"
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    torch.manual_seed(0)
    net = build()
    net[1].running_mean.fill_(0.5)
    sync_net = nn.SyncBatchNorm.convert_sync_batchnorm(net)
    if rank == 0:
        print(sync_net)
        print(type(sync_net[1]).__name__, sync_net[1].running_mean.tolist(), sync_net[1].num_batches_tracked.item(),
              sync_net[0] is net[0], sync_net[1].weight is net[1].weight)
    try:
        DDP(sync_net)
    except ValueError as e:
        if rank == 0:
            print(f"DDP(sync_net): ValueError: {e}")
    x = torch.randn(4, 1, 4, 4)
    for mode in ("train", "eval"):
        getattr(sync_net, mode)()
        try:
            sync_net(x)
        except ValueError as e:
            if rank == 0:
                print(f"{mode} forward without DDP: ValueError: {e}")
    torch.manual_seed(0)
    plain = DDP(build())
    torch.manual_seed(rank)
    opt = torch.optim.SGD(plain.parameters(), lr=0.1)
    for step in range(2):
        x = torch.randn(4, 1, 4, 4) + rank
        opt.zero_grad()
        out = plain(x)
        out.pow(2).mean().backward()
        opt.step()
        stats = [plain.module[1].running_mean.clone(), plain.module[5].running_var.clone()]
        gathered = [[torch.zeros(2), torch.zeros(3)] for _ in range(world_size)]
        for i, s in enumerate(stats):
            dist.all_gather([g[i] for g in gathered], s)
        if rank == 0:
            for r, (m, v) in enumerate(gathered):
                print(f"step {step} rank {r}: bn2d running_mean {[f'{a:.5f}' for a in m.tolist()]} "
                      f"bn1d running_var {[f'{a:.5f}' for a in v.tolist()]}")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(run, args=(2,), nprocs=2)
    print("done")
