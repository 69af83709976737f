# Checkpoint and resume under DDP as training scripts do it: rank 0 saves {'epoch', 'model':
# ddp.module.state_dict(), 'opt': optimizer.state_dict(), 'sched': scheduler.state_dict()} with torch.save into a
# temporary folder, dist.barrier(), every rank loads it with map_location="cpu" (and the tutorial's dict form),
# builds a fresh model/optimizer/scheduler, loads the three state dicts and resumes; the resumed run's losses and
# learning rates equal the uninterrupted run's. Also the optimizer state's keys (Adam's exp_avg, step) and a
# scheduler whose last_epoch/_step_count survive the round trip, and loading a DDP state_dict into .module.
import os
import shutil
import tempfile

import tinyddp as torch
import tinyddp.distributed as dist
import tinyddp.multiprocessing as mp
import tinyddp.nn as nn
from tinyddp.nn.parallel import DistributedDataParallel as DDP

EPOCHS, SPLIT = 4, 2


def build():
    torch.manual_seed(0)
    model = DDP(nn.Sequential(nn.Linear(3, 5), nn.ReLU(), nn.Linear(5, 1)))
    opt = torch.optim.Adam(model.parameters(), lr=0.05, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    return model, opt, sched


def epoch(rank, ep, model, opt, sched):
    g = torch.Generator().manual_seed(100 * ep + rank)
    total = 0.0
    for _ in range(2):
        x = torch.randn(4, 3, generator=g)
        opt.zero_grad()
        loss = (model(x) - x.sum(1, keepdim=True)).pow(2).mean()
        loss.backward()
        opt.step()
        total += loss.item()
    sched.step()
    return f"epoch {ep} loss {total:.5f} lr {sched.get_last_lr()[0]:.5f}"


def run(rank, world_size, folder):
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ["MASTER_PORT"] = "29978"
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    path = os.path.join(folder, "checkpoint.pt")
    model, opt, sched = build()
    straight = [epoch(rank, ep, model, opt, sched) for ep in range(EPOCHS)]

    model, opt, sched = build()
    resumed = [epoch(rank, ep, model, opt, sched) for ep in range(SPLIT)]
    if rank == 0:
        torch.save({"epoch": SPLIT, "model": model.module.state_dict(), "opt": opt.state_dict(),
                    "sched": sched.state_dict()}, path)
    dist.barrier()
    for map_location in ("cpu", {"cuda:0": f"cuda:{rank}"}):
        ckpt = torch.load(path, map_location=map_location)
    model, opt, sched = build()
    model.module.load_state_dict(ckpt["model"])
    opt.load_state_dict(ckpt["opt"])
    sched.load_state_dict(ckpt["sched"])
    resumed += [epoch(rank, ep, model, opt, sched) for ep in range(ckpt["epoch"], EPOCHS)]
    if rank == 0:
        print("checkpoint keys:", list(ckpt), "epoch", ckpt["epoch"])
        state = ckpt["opt"]["state"]
        print("opt state:", sorted(state), sorted(state[0]), state[0]["step"], ckpt["opt"]["param_groups"][0]["lr"])
        print("sched:", {k: v for k, v in sorted(ckpt["sched"].items())})
        for a, b in zip(straight, resumed):
            print(f"straight {a} | resumed {b}")
        print("resumed == straight:", straight == resumed)
    full = model.state_dict()
    result = model.module.load_state_dict({k[len("module."):]: v for k, v in full.items()})
    if rank == 0:
        print("load stripped DDP state_dict into .module:", result)
    everyone = [None] * world_size
    dist.all_gather_object(everyone, [round(v, 6) for v in model.module[2].weight.reshape(-1).tolist()])
    if rank == 0:
        print("final weights same on all ranks:", everyone[0] == everyone[1])
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    folder = tempfile.mkdtemp()
    mp.spawn(run, args=(2, folder), nprocs=2, join=True)
    print("files:", sorted(os.listdir(folder)))
    shutil.rmtree(folder)
