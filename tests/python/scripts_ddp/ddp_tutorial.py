# The official "Getting Started with Distributed Data Parallel" tutorial (1.13), as a CPU user runs it: setup and
# cleanup, ToyModel, demo_basic, and demo_checkpoint (rank 0 saves ddp_model.state_dict(), dist.barrier(), every
# rank loads it with the tutorial's map_location), launched with mp.spawn. Rank 0 prints every rank's lines.
import os
import shutil
import sys
import tempfile

import tinyddp as torch
import tinyddp.distributed as dist
import tinyddp.multiprocessing as mp
import tinyddp.nn as nn
import tinyddp.optim as optim
from tinyddp.nn.parallel import DistributedDataParallel as DDP


def setup(rank, world_size):
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ["MASTER_PORT"] = "29901"
    # initialize the process group
    dist.init_process_group("gloo", rank=rank, world_size=world_size)


def cleanup():
    dist.destroy_process_group()


class ToyModel(nn.Module):
    def __init__(self):
        super(ToyModel, self).__init__()
        self.net1 = nn.Linear(10, 10)
        self.relu = nn.ReLU()
        self.net2 = nn.Linear(10, 5)

    def forward(self, x):
        return self.net2(self.relu(self.net1(x)))


def report(rank, lines):
    everyone = [None] * dist.get_world_size()
    dist.all_gather_object(everyone, lines)
    if rank == 0:
        for r, rank_lines in enumerate(everyone):
            for line in rank_lines:
                print(f"[rank {r}] {line}")
        sys.stdout.flush()


def demo_basic(rank, world_size):
    setup(rank, world_size)
    lines = [f"Running basic DDP example on rank {rank}."]
    torch.manual_seed(rank)   # each rank builds its own model: DDP broadcasts rank 0's
    model = ToyModel()
    lines.append(f"net1.weight[0, :3] before DDP {[round(v, 4) for v in model.net1.weight[0, :3].tolist()]}")
    ddp_model = DDP(model)
    lines.append(f"net1.weight[0, :3] after DDP {[round(v, 4) for v in model.net1.weight[0, :3].tolist()]}")

    loss_fn = nn.MSELoss()
    optimizer = optim.SGD(ddp_model.parameters(), lr=0.001)

    optimizer.zero_grad()
    outputs = ddp_model(torch.randn(20, 10))
    labels = torch.randn(20, 5)
    loss = loss_fn(outputs, labels)
    loss.backward()
    lines.append(f"outputs {tuple(outputs.shape)} {outputs.grad_fn.name()} loss {loss.item():.6f}")
    lines.append(f"net2.bias.grad {[f'{v:.6f}' for v in model.net2.bias.grad.tolist()]}")
    optimizer.step()
    lines.append(f"net2.bias {[f'{v:.6f}' for v in model.net2.bias.tolist()]}")
    report(rank, lines)
    cleanup()


def demo_checkpoint(rank, world_size, folder):
    setup(rank, world_size)
    lines = [f"Running DDP checkpoint example on rank {rank}."]
    torch.manual_seed(rank)
    model = ToyModel()
    ddp_model = DDP(model)

    CHECKPOINT_PATH = os.path.join(folder, "model.checkpoint")
    if rank == 0:
        # All processes should see same parameters as they all start from same
        # random parameters and gradients are synchronized in backward passes.
        # Therefore, saving it in one process is sufficient.
        torch.save(ddp_model.state_dict(), CHECKPOINT_PATH)

    # Use a barrier() to make sure that process 1 loads the model after process
    # 0 saves it.
    dist.barrier()
    # configure map_location properly
    map_location = {"cuda:%d" % 0: "cuda:%d" % rank}
    state = torch.load(CHECKPOINT_PATH, map_location=map_location)
    lines.append(f"checkpoint keys {list(state)}")
    lines.append(f"{type(state).__name__} {state['module.net1.weight'].dtype} {state['module.net1.weight'].device}")
    result = ddp_model.load_state_dict(state)
    lines.append(f"load_state_dict: {result}")

    loss_fn = nn.MSELoss()
    optimizer = optim.SGD(ddp_model.parameters(), lr=0.001)

    optimizer.zero_grad()
    outputs = ddp_model(torch.randn(20, 10))
    labels = torch.randn(20, 5)

    loss_fn(outputs, labels).backward()
    optimizer.step()
    lines.append(f"net1.bias[:4] {[f'{v:.6f}' for v in model.net1.bias[:4].tolist()]}")

    # Not necessary to use a dist.barrier() to guard the file deletion below
    # as the AllReduce ops in the backward pass of DDP already served as
    # a synchronization.
    report(rank, lines)
    if rank == 0:
        os.remove(CHECKPOINT_PATH)

    cleanup()


def run_demo(demo_fn, world_size, *args):
    mp.spawn(demo_fn,
             args=(world_size,) + args,
             nprocs=world_size,
             join=True)


if __name__ == "__main__":
    n_gpus = torch.cuda.device_count()
    print(f"cuda available {torch.cuda.is_available()}, {n_gpus} GPUs; running on the CPU with gloo")
    world_size = 2
    run_demo(demo_basic, world_size)
    folder = tempfile.mkdtemp()
    run_demo(demo_checkpoint, world_size, folder)
    print("checkpoint removed:", not os.path.exists(os.path.join(folder, "model.checkpoint")))
    shutil.rmtree(folder)
