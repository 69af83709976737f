# Two-rank gloo collectives past all_reduce: reduce (and what the other rank is left holding), scatter,
# all_to_all_single, send/recv and isend/irecv, batch_isend_irecv, gather_object, a subgroup, and gloo's error for
# a collective it lacks. Rank 0 prints every rank's lines, gathered, so the output has one order.
import os

import tinyddp as torch
import tinyddp.distributed as dist
import tinyddp.multiprocessing as mp


def run(rank, world_size):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = "29571"
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    lines = []
    t = torch.arange(5, dtype=torch.float32) * 10 + rank
    dist.reduce(t, dst=0)
    lines.append(f"reduce: {t}")
    out = torch.zeros(2, dtype=torch.int64)
    dist.scatter(out, [torch.tensor([1, 2]), torch.tensor([3, 4])] if rank == 0 else None, src=0)
    lines.append(f"scatter: {out}")
    o = torch.empty(4)
    dist.all_to_all_single(o, torch.arange(4.0) + 10 * rank)
    lines.append(f"all_to_all_single: {o}")
    if rank == 0:
        dist.send(torch.tensor([[1.5, 2.5]]), dst=1)
        buf = torch.zeros(3)
        work = dist.irecv(buf, src=1)
        work.wait()
        lines.append(f"irecv: {buf} completed={work.is_completed()}")
    else:
        buf = torch.zeros(1, 2)
        sender = dist.recv(buf)
        lines.append(f"recv from {sender}: {buf}")
        dist.isend(torch.arange(3.0), dst=0).wait()
    peer = 1 - rank
    got = torch.zeros(1)
    works = dist.batch_isend_irecv([dist.P2POp(dist.isend, torch.tensor([rank + 0.5]), peer),
                                    dist.P2POp(dist.irecv, got, peer)])
    for w in works:
        w.wait()
    lines.append(f"batch_isend_irecv: {len(works)} works, got {got}")
    try:
        dist.reduce_scatter(torch.zeros(1), [torch.ones(1), torch.ones(1)])
    except RuntimeError as e:
        lines.append(f"reduce_scatter: {e}")
    sub = dist.new_group([1])
    lines.append(f"subgroup: rank {dist.get_rank(sub)} of {dist.get_world_size(sub)}")
    everyone = [None] * world_size if rank == 0 else None
    dist.gather_object(lines, everyone, dst=0)
    if rank == 0:
        for r, rank_lines in enumerate(everyone):
            for line in rank_lines:
                print(f"[{r}] {line}")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(run, args=(2,), nprocs=2, join=True)
    print("done", dist.Backend.GLOO, dist.is_available())
