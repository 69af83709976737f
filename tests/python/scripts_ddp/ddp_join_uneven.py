# Uneven inputs under DDP with model.join(): rank r has 2 + 2r batches (rank 1 trains alone at the end), a model
# with BatchNorm (buffers broadcast every forward), divide_by_initial_world_size=True (rank 1's lone gradients
# halved) and False (kept whole), the final model broadcast from the last rank to join, what each rank counted,
# throw_on_early_termination=True (the RuntimeError each rank sees, and where), and Join used directly
# (Join([model]) and its error for an empty list).
import os

import tinyddp as torch
import tinyddp.distributed as dist
import tinyddp.multiprocessing as mp
import tinyddp.nn as nn
from tinyddp.distributed.algorithms.join import Join
from tinyddp.nn.parallel import DistributedDataParallel as DDP


def make_model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.ReLU(), nn.Linear(4, 1))


def batches(rank):
    g = torch.Generator().manual_seed(10 + rank)
    return [(torch.randn(4, 3, generator=g), torch.randn(4, 1, generator=g)) for _ in range(2 + 2 * rank)]


def report(rank, title, lines):
    everyone = [None] * dist.get_world_size()
    dist.all_gather_object(everyone, lines)
    if rank == 0:
        print(title)
        for r, rank_lines in enumerate(everyone):
            for line in rank_lines:
                print(f"  [rank {r}] {line}")


def fmt(t):
    return [f"{v:.5f}" for v in t.reshape(-1).tolist()]


def train(rank, divide):
    model = DDP(make_model())
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    lines = []
    with model.join(divide_by_initial_world_size=divide):
        for step, (x, y) in enumerate(batches(rank)):
            opt.zero_grad()
            loss = nn.functional.mse_loss(model(x), y)
            loss.backward()
            opt.step()
            lines.append(f"step {step} loss {loss.item():.5f} last bias grad {fmt(model.module[3].bias.grad)}")
    lines.append(f"after join: last weight {fmt(model.module[3].weight)}")
    lines.append(f"running_mean {fmt(model.module[1].running_mean)} "
                 f"num_batches_tracked {model.module[1].num_batches_tracked.item()}")
    report(rank, f"divide_by_initial_world_size={divide}", lines)


def throw_early(rank):
    model = DDP(make_model())
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    seen = 0
    try:
        with model.join(throw_on_early_termination=True):
            for x, y in batches(rank):
                opt.zero_grad()
                model(x).sum().backward()
                opt.step()
                seen += 1
        outcome = "no error"
    except RuntimeError as e:
        outcome = f"RuntimeError: {e}"
    report(rank, "throw_on_early_termination=True", [f"{seen} batches trained, then {outcome}"])


def join_directly(rank):
    model = DDP(make_model())
    lines = []
    with Join([model]):
        for x, _ in batches(rank):
            model(x).pow(2).mean().backward()
    lines.append(f"Join([model]) first weight grad {fmt(model.module[0].weight.grad[0])}")
    try:
        Join([])
    except ValueError as e:
        lines.append(f"Join([]): ValueError: {e}")
    with model.join(enable=False):
        model(batches(0)[0][0]).pow(2).mean().backward()
    lines.append(f"join(enable=False) with even inputs: first weight grad {fmt(model.module[0].weight.grad[0])}")
    report(rank, "Join directly", lines)


def run(rank, world_size):
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ["MASTER_PORT"] = "29972"
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    train(rank, True)
    train(rank, False)
    throw_early(rank)
    join_directly(rank)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(run, args=(2,), nprocs=2, join=True)
    print("done")
