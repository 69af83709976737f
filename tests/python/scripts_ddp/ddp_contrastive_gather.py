# SimCLR/CLIP-style contrastive loss over embeddings gathered from every rank, under DDP: gathering without
# gradient (each rank's loss then only trains on its own rows), the common trick of putting the local tensor
# back into the gathered list, and torch.distributed.nn.all_gather (differentiable: each rank gets the summed
# gradient of its rows); the replicas stay in sync in each case.
import os
import tinyddp as torch
import tinyddp.nn as nn
import tinyddp.nn.functional as F
import tinyddp.distributed as dist
import tinyddp.multiprocessing as mp
from tinyddp.nn.parallel import DistributedDataParallel as DDP


def gather_with_grad_trick(z, rank, ws):
    out = [torch.zeros_like(z) for _ in range(ws)]
    dist.all_gather(out, z)
    out[rank] = z
    return torch.cat(out)


def worker(rank, ws, port):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=ws)
    for how in ["local", "trick", "dist.nn"]:
        train(rank, ws, how)
    dist.barrier()
    dist.destroy_process_group()


def train(rank, ws, how):
    torch.manual_seed(0)
    model = DDP(nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 4)))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    torch.manual_seed(100 + rank)
    lines = []
    try:
        for step in range(2):
            x1, x2 = torch.randn(3, 5), torch.randn(3, 5)
            z1 = F.normalize(model(x1), dim=1)
            z2 = F.normalize(model(x2), dim=1)
            if how == "trick":
                a, b = gather_with_grad_trick(z1, rank, ws), gather_with_grad_trick(z2, rank, ws)
            elif how == "dist.nn":
                import tinyddp.distributed.nn as dnn
                a, b = torch.cat(dnn.all_gather(z1)), torch.cat(dnn.all_gather(z2))
            else:
                a, b = z1, z2
            logits = a @ b.t() / 0.5
            labels = torch.arange(a.shape[0])
            loss = F.cross_entropy(logits, labels)
            opt.zero_grad()
            loss.backward()
            opt.step()
            lines.append(f"step {step} loss {loss.item():.5f} g {model.module[0].weight.grad.abs().sum().item():.5f}")
    except Exception as e:
        lines.append(f"{type(e).__name__}: {e}")
    s = torch.tensor([sum(p.detach().sum().item() for p in model.parameters())])
    g = [torch.zeros(1) for _ in range(ws)]
    dist.all_gather(g, s)
    everyone = [None] * ws
    dist.all_gather_object(everyone, lines)
    if rank == 0:
        print("==", how)
        for r, ls in enumerate(everyone):
            for l in ls:
                print(f"rank {r} {l}")
        print("in sync", torch.allclose(g[0], g[1]))


if __name__ == "__main__":
    mp.spawn(worker, args=(2, 29871), nprocs=2)
