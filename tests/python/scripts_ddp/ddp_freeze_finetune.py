# Fine-tuning under DDP with frozen layers: the backbone frozen with requires_grad_(False) before DDP is built
# (only the head is trained and reduced; the optimizer takes the trainable parameters only), the backbone frozen
# after DDP is built (1.13's reducer still waits for its gradients: the next forward's error, and
# find_unused_parameters=True as the fix), a layer frozen at construction and unfrozen later (its gradients are
# never reduced: the replicas drift apart silently), and DDP over a module with nothing to train.
import os

import tinyddp as torch
import tinyddp.distributed as dist
import tinyddp.multiprocessing as mp
import tinyddp.nn as nn
from tinyddp.nn.parallel import DistributedDataParallel as DDP


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 8), nn.ReLU())
        self.head = nn.Linear(8, 3)

    def forward(self, x):
        return self.head(self.backbone(x))


def same_on_all_ranks(model):
    ok = True
    for p in model.parameters():
        parts = [torch.zeros_like(p) for _ in range(dist.get_world_size())]
        dist.all_gather(parts, p.detach().clone())
        ok = ok and all(torch.equal(parts[0], q) for q in parts[1:])
    return ok


def train(rank, model, steps, lines, tag, freeze_at=None, unfreeze_at=None):
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.SGD(params if freeze_at is None and unfreeze_at is None else model.parameters(), lr=0.2)
    g = torch.Generator().manual_seed(rank)
    try:
        for step in range(steps):
            if step == freeze_at:
                model.module.backbone.requires_grad_(False)
            if step == unfreeze_at:
                model.module.backbone.requires_grad_(True)
            opt.zero_grad()
            x, y = torch.randn(6, 4, generator=g), torch.randint(0, 3, (6,), generator=g)
            loss = nn.functional.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            grads = ["-" if p.grad is None else f"{p.grad.abs().sum().item():.4f}" for p in model.parameters()]
            lines.append(f"{tag} step {step} loss {loss.item():.5f} grads {grads}")
    except RuntimeError as e:
        lines.append(f"{tag} RuntimeError: {e}")
    lines.append(f"{tag} replicas same on all ranks: {same_on_all_ranks(model)}")


def build(freeze_backbone=False, **kwargs):
    torch.manual_seed(0)
    net = Classifier()
    if freeze_backbone:
        net.backbone.requires_grad_(False)
    return DDP(net, **kwargs)


def run(rank, world_size):
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ["MASTER_PORT"] = "29977"
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    lines = []
    model = build(freeze_backbone=True)
    lines.append(f"trainable: {[n for n, p in model.named_parameters() if p.requires_grad]}")
    train(rank, model, 2, lines, "frozen before DDP")
    train(rank, build(), 3, lines, "frozen after DDP", freeze_at=1)
    train(rank, build(find_unused_parameters=True), 3, lines, "frozen after DDP, find_unused", freeze_at=1)
    train(rank, build(freeze_backbone=True), 3, lines, "unfrozen after DDP", unfreeze_at=1)
    try:
        DDP(nn.Linear(2, 2).requires_grad_(False))
    except RuntimeError as e:
        lines.append(f"nothing to train: RuntimeError: {e}")
    everyone = [None] * world_size
    dist.all_gather_object(everyone, lines)
    if rank == 0:
        for r, rank_lines in enumerate(everyone):
            for line in rank_lines:
                print(f"[rank {r}] {line}")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(run, args=(2,), nprocs=2, join=True)
    print("done")
