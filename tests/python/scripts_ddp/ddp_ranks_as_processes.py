# What a spawned rank does to "its process" stays its own, as in 1.13's child processes: the torchrun-style
# environment each rank writes (RANK, LOCAL_RANK, WORLD_SIZE) and reads back for seeding, DETR's
# setup_for_distributed replacing builtins.print on the non-master ranks, sys.exit(0) in a rank (a normal end)
# and sys.exit(3) (ProcessExitedException with its exit code), and @record from torch.distributed.elastic. Then the
# mistakes refused as 1.13 refuses them: DDP over a lazy module, an unknown backend, a second destroy.
import os
import sys

import tinyddp as torch
import tinyddp.distributed as dist
import tinyddp.multiprocessing as mp
import tinyddp.nn as nn
from tinyddp.distributed.elastic.multiprocessing.errors import record
from tinyddp.nn.parallel import DistributedDataParallel as DDP


def setup_for_distributed(is_master):
    import builtins as __builtin__
    builtin_print = __builtin__.print

    def print(*args, **kwargs):
        force = kwargs.pop("force", False)
        if is_master or force:
            builtin_print(*args, **kwargs)

    __builtin__.print = print


def worker(rank, world_size):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = "29693"
    os.environ["RANK"] = str(rank)
    os.environ["LOCAL_RANK"] = str(rank)
    os.environ["WORLD_SIZE"] = str(world_size)
    dist.init_process_group(backend="gloo", init_method="env://")
    setup_for_distributed(dist.get_rank() == 0)
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.manual_seed(0)
    model = DDP(nn.Linear(3, 1))
    torch.manual_seed(local_rank)
    model(torch.randn(4, 3)).sum().backward()
    seen = [None] * world_size
    dist.all_gather_object(seen, (dist.get_rank(), local_rank, int(os.environ["RANK"])))
    if rank == 1:
        print("silenced on rank 1")
        print("forced on rank 1", force=True, flush=True)
    dist.barrier()   # rank 1's forced line first
    print("ranks seen (dist rank, LOCAL_RANK, RANK):", seen)
    print("grad", [round(v, 5) for v in model.module.weight.grad.flatten().tolist()], flush=True)
    dist.barrier()
    dist.destroy_process_group()


def exits(rank, code):
    if rank == 1:
        sys.exit(code)


@record
def main():
    mp.spawn(worker, args=(2,), nprocs=2)
    print("main: RANK set", "RANK" in os.environ, "print restored", print.__module__ == "builtins")
    for code in (0, 3):
        try:
            print(code, "returned", mp.spawn(exits, args=(code,), nprocs=2))
        except mp.ProcessExitedException as e:
            print(code, type(e).__name__, str(e), e.exit_code, e.error_index)
    os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "127.0.0.1", "29694"
    for backend in ("foo", "Gloo "):
        try:
            dist.init_process_group(backend, rank=0, world_size=1)
        except ValueError as e:
            print("ValueError", e)
    dist.init_process_group("gloo", rank=0, world_size=1)
    try:
        DDP(nn.Sequential(nn.LazyLinear(3), nn.ReLU(), nn.Linear(3, 1)))
    except RuntimeError as e:
        print("RuntimeError", e)
    try:
        dist.get_rank(group=object())
    except RuntimeError as e:
        print("RuntimeError", str(e).split(" at 0x")[0], str(e).split(">")[-1])
    dist.destroy_process_group()
    try:
        dist.destroy_process_group()
    except AssertionError as e:
        print("AssertionError", repr(str(e)))
    return "done"


if __name__ == "__main__":
    print(main())
