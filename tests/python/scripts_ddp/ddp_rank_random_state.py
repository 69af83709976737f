# Each spawned rank seeds and draws from its own Python and NumPy global generators, as each 1.13 child process
# does (the seed_everything(seed + rank) of many DDP scripts): random.seed / np.random.seed per rank, draws,
# shuffles and choices interleaved with collectives; the parent's own generators are untouched by the ranks.
import os
import random

import numpy as np

import tinyddp as torch
import tinyddp.distributed as dist
import tinyddp.multiprocessing as mp


def worker(rank, world):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = "29751"
    dist.init_process_group("gloo", rank=rank, world_size=world)
    random.seed(100 + rank)
    np.random.seed(200 + rank)
    torch.manual_seed(300 + rank)
    draws = []
    for step in range(3):
        dist.barrier()
        order = list(range(6))
        random.shuffle(order)
        draws.append((round(random.random(), 6), random.randint(0, 99), order, round(float(np.random.rand()), 6),
                      np.random.permutation(5).tolist(), int(np.random.choice(10)),
                      round(float(torch.rand(1)), 6)))
    state = np.random.get_state()[1][:2].tolist()
    everyone = [None] * world
    dist.all_gather_object(everyone, (draws, state))
    if rank == 0:
        for r, (d, st) in enumerate(everyone):
            print("rank", r, d, st)
    dist.destroy_process_group()


if __name__ == "__main__":
    random.seed(7)
    np.random.seed(8)
    mp.spawn(worker, args=(2,), nprocs=2)
    print("parent", round(random.random(), 6), round(float(np.random.rand()), 6))
