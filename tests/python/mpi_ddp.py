# DDP from Python under mpirun (one rank per process, backend "mpi"): run by CTest as
#   mpirun -np 2 python3 tests/python/mpi_ddp.py
# Each rank's batch is ones * (rank + 1); d sum(x W^T + b) / dW = column sums of x, so the averaged gradient
# is (2 * 1 + 2 * 2) / 2 = 3 everywhere, and rank 1's different initial weights are replaced by rank 0's.
# Then the same step through a Python comm hook, whose Future completes on MPI's Work: the sum (6), not the mean.
import tinyddp as torch
import tinyddp.distributed as dist
import tinyddp.nn as nn
from tinyddp.futures import Future
from tinyddp.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("mpi")
rank, world = dist.get_rank(), dist.get_world_size()
assert world == 2, world
torch.manual_seed(rank)
model = DDP(nn.Linear(3, 1, dtype=torch.float64))
weights = torch.tensor(model.module.weight.tolist(), dtype=torch.float64)
dist.broadcast(weights, src=0)
assert weights.tolist() == model.module.weight.tolist()
model(torch.ones(2, 3, dtype=torch.float64) * (rank + 1)).sum().backward()
assert model.module.weight.grad.tolist() == [[3.0, 3.0, 3.0]], model.module.weight.grad
assert model.module.bias.grad.tolist() == [2.0]


def summed(state, bucket: dist.GradBucket) -> Future[torch.Tensor]:   # 1.13 refuses a bare Future
    return dist.all_reduce(bucket.buffer(), async_op=True).get_future().then(lambda fut: fut.value()[0])


hooked = DDP(nn.Linear(3, 1, dtype=torch.float64))
hooked.register_comm_hook(None, summed)
hooked(torch.ones(2, 3, dtype=torch.float64) * (rank + 1)).sum().backward()
assert hooked.module.weight.grad.tolist() == [[6.0, 6.0, 6.0]], hooked.module.weight.grad
print(f"python mpi ddp ok on rank {rank}")
