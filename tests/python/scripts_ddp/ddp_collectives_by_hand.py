# The collectives users call by hand next to DDP: all_reduce with ReduceOp.SUM/MAX/MIN/PRODUCT (and AVG, which gloo
# refuses), on float and int64 tensors, broadcast from rank 1, all_gather into a list, async_op=True with wait(),
# the object collectives (all_gather_object, broadcast_object_list, gather_object, scatter_object_list) with dicts
# and tensors inside, barrier, and the errors users hit: a gather list of the wrong length, the wrong dtype or the
# wrong shape, a source rank outside the group, a bool tensor, a list instead of a tensor; a transposed tensor and a
# leaf that requires grad are reduced in place.
import os

import tinyddp as torch
import tinyddp.distributed as dist
import tinyddp.multiprocessing as mp


def run(rank, world_size):
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ["MASTER_PORT"] = "29976"
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    lines = []
    base = torch.tensor([1.5, -2.0, 3.0]) * (rank + 1)
    for op in ("SUM", "MAX", "MIN", "PRODUCT"):
        t = base.clone()
        dist.all_reduce(t, op=getattr(dist.ReduceOp, op))
        lines.append(f"all_reduce {op}: {t}")
    counts = torch.tensor([rank + 1, 10 * rank])
    dist.all_reduce(counts)
    lines.append(f"all_reduce int64: {counts} {counts.dtype}")
    try:
        dist.all_reduce(base.clone(), op=dist.ReduceOp.AVG)
    except (RuntimeError, ValueError) as e:
        lines.append(f"all_reduce AVG: {type(e).__name__}: {e}")
    b = torch.arange(4.0) + 100 * rank
    dist.broadcast(b, src=1)
    lines.append(f"broadcast from 1: {b}")
    parts = [torch.zeros(2, dtype=torch.long) for _ in range(world_size)]
    dist.all_gather(parts, torch.tensor([rank, rank * rank + 7]))
    lines.append(f"all_gather: {parts}")
    t = torch.full((2,), float(rank + 1))
    work = dist.all_reduce(t, async_op=True)
    work.wait()
    lines.append(f"async all_reduce: {t} is_completed {work.is_completed()}")

    grid = (torch.arange(6.0) * (rank + 1)).reshape(2, 3).t()   # a view, not contiguous
    dist.all_reduce(grid)
    lines.append(f"all_reduce of a transposed tensor: {grid.tolist()} contiguous {grid.is_contiguous()}")
    w = torch.ones(2, requires_grad=True)
    dist.broadcast(w, src=0)
    dist.all_reduce(w)
    lines.append(f"all_reduce of a leaf requiring grad: {w}")
    s = torch.tensor(float(rank + 2), dtype=torch.float64)
    dist.all_reduce(s, op=dist.ReduceOp.PRODUCT)
    lines.append(f"0-dim float64 PRODUCT: {s}")
    lines.append(f"available: mpi {dist.is_mpi_available()} nccl {dist.is_nccl_available()} "
                 f"gloo {dist.is_gloo_available()}")

    objects = [None] * world_size
    dist.all_gather_object(objects, {"rank": rank, "loss": 0.25 * (rank + 1), "t": torch.tensor([rank])})
    lines.append(f"all_gather_object: {objects}")
    config = [{"lr": 0.1, "epochs": 3}, "name"] if rank == 0 else [None, None]
    dist.broadcast_object_list(config, src=0)
    lines.append(f"broadcast_object_list: {config}")
    gathered = [None] * world_size if rank == 0 else None
    dist.gather_object(("rank", rank), gathered, dst=0)
    lines.append(f"gather_object: {gathered}")
    out = [None]
    dist.scatter_object_list(out, [{"part": i} for i in range(world_size)] if rank == 0 else None, src=0)
    lines.append(f"scatter_object_list: {out}")
    dist.barrier()

    errors = [
        ("all_gather short list", lambda: dist.all_gather([torch.zeros(3)], torch.zeros(3))),
        ("all_gather wrong dtype", lambda: dist.all_gather([torch.zeros(3, dtype=torch.long)] * 2, torch.zeros(3))),
        ("all_gather wrong shape", lambda: dist.all_gather([torch.zeros(2), torch.zeros(2)], torch.zeros(3))),
        ("broadcast src 5", lambda: dist.broadcast(torch.zeros(3), src=5)),
        ("all_reduce of a bool tensor", lambda: dist.all_reduce(torch.tensor([True, False]))),
        ("all_reduce of a list", lambda: dist.all_reduce([1.0, 2.0])),
        ("all_gather into a tuple", lambda: dist.all_gather((torch.zeros(1), torch.zeros(1)), torch.zeros(1))),
        ("all_gather_object into a short list", lambda: dist.all_gather_object([None], rank)),
    ]
    for name, call in errors:
        try:
            call()
            lines.append(f"{name}: no error")
        except (RuntimeError, ValueError, IndexError) as e:
            lines.append(f"{name}: {type(e).__name__}: {e}")
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
