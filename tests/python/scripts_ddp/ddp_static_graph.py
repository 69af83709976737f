# static_graph=True as users turn it on: a model with a frozen embedding-like layer and a parameter the forward
# never uses (static_graph finds it once, then trains without find_unused_parameters' graph walk), gradient
# checkpointing through torch.utils.checkpoint (reentrant), which DDP needs static_graph for, _set_static_graph() on
# an existing DDP, and the static-graph error when the graph changes between iterations.
import os
import warnings

import tinyddp as torch
import tinyddp.distributed as dist
import tinyddp.multiprocessing as mp
import tinyddp.nn as nn
from tinyddp.nn.parallel import DistributedDataParallel as DDP
from tinyddp.utils.checkpoint import checkpoint


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 6)
        self.fc2 = nn.Linear(6, 6)

    def forward(self, x):
        return x + self.fc2(torch.relu(self.fc1(x)))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(3, 6)
        self.block = Block()
        self.head = nn.Linear(6, 1)
        self.unused = nn.Linear(6, 6)   # never called

    def forward(self, x, ckpt=True, skip_block=False):
        h = self.inp(x)
        if not skip_block:
            h = checkpoint(self.block, h) if ckpt else self.block(h)
        return self.head(h)


def run(rank, world_size):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = "29916"
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    torch.manual_seed(0)
    model = DDP(Net(), static_graph=True)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    torch.manual_seed(rank)
    for step in range(3):
        opt.zero_grad()
        x = torch.randn(4, 3)
        loss = model(x).pow(2).mean()
        loss.backward()
        opt.step()
        if rank == 0:
            g = model.module.block.fc1.weight.grad
            print(f"static step {step} loss {loss.item():.5f} block grad {g.sum().item():.5f} "
                  f"unused grad {model.module.unused.weight.grad}", flush=True)
    p = model.module.block.fc2.weight.detach().clone()
    both = [torch.zeros_like(p) for _ in range(world_size)]
    dist.all_gather(both, p)
    if rank == 0:
        print("replicas equal:", torch.equal(both[0], both[1]))

    # The graph changes: the block is skipped in iteration 4.
    try:
        opt.zero_grad()
        model(torch.randn(4, 3), skip_block=True).sum().backward()
        opt.step()
        model(torch.randn(4, 3)).sum().backward()
        if rank == 0:
            print("changed graph: no error; block grad", model.module.block.fc1.weight.grad.sum().item() != 0)
    except RuntimeError as e:
        if rank == 0:
            print("changed graph: RuntimeError:", str(e).splitlines()[0])

    # Reentrant checkpointing without static_graph, then the same DDP switched to a static graph.
    torch.manual_seed(0)
    plain = DDP(Net())
    try:
        for step in range(2):
            plain(torch.randn(4, 3)).sum().backward()
            if rank == 0:
                print(f"checkpoint without static_graph, step {step}: ok")
    except RuntimeError as e:
        if rank == 0:
            print("checkpoint without static_graph: RuntimeError:", str(e).splitlines()[0])
    torch.manual_seed(0)
    late = DDP(Net())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        late._set_static_graph()
    for step in range(2):
        late(torch.randn(4, 3)).sum().backward()
    if rank == 0:
        print("_set_static_graph(): two steps ok;", [str(w.message)[:60] for w in caught])
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(run, args=(2,), nprocs=2)
