# Gradient accumulation with no_sync() on a model whose forward routes to one of two heads (mixture-of-experts and
# multi-task loops do this): with find_unused_parameters=True a head used only inside no_sync() still gets its
# accumulated gradient averaged at the synced step, and a head used on one rank only inside no_sync(); with
# static_graph=True the no_sync micro-batch in the first iterations hits 1.13's internal assert; then a head that
# switches under static_graph (the graph-changed error), _set_static_graph() after training started, and a
# parameter whose requires_grad is turned off for one step and back on under find_unused_parameters.
import os

import tinyddp as torch
import tinyddp.distributed as dist
import tinyddp.multiprocessing as mp
import tinyddp.nn as nn
from tinyddp.nn.parallel import DistributedDataParallel as DDP


class Routed(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(2, 3)
        self.a = nn.Linear(3, 1)
        self.b = nn.Linear(3, 1)

    def forward(self, x, head):
        h = torch.relu(self.body(x))
        return self.a(h) if head == "a" else self.b(h)


def grads(model):
    return [None if p.grad is None else round(p.grad.sum().item(), 4) for p in model.parameters()]


def everyone(value):
    out = [None] * dist.get_world_size()
    dist.all_gather_object(out, value)
    return out


def attempt(rank, label, fn):
    try:
        result = fn()
        if rank == 0:
            print(f"{label}: {result}", flush=True)
    except RuntimeError as e:
        if rank == 0:
            print(f"{label}: RuntimeError: {e}", flush=True)
    dist.barrier()


def run(rank, world_size, port):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world_size)

    def accumulate(find_unused, static_graph):
        torch.manual_seed(0)
        model = DDP(Routed(), find_unused_parameters=find_unused, static_graph=static_graph)
        torch.manual_seed(rank)
        steps = []
        for it in range(3):
            model.zero_grad()
            with model.no_sync():
                model(torch.randn(3, 2), "a").sum().backward()
            model(torch.randn(3, 2), "b" if it else "a").sum().backward()
            steps.append(everyone(grads(model)))
        return steps

    for find_unused, static_graph in [(True, False), (False, True), (True, True)]:
        attempt(rank, f"no_sync on head a, synced on b, find_unused={find_unused} static_graph={static_graph}",
                lambda: accumulate(find_unused, static_graph))

    def rank_dependent_head():
        torch.manual_seed(0)
        model = DDP(Routed(), find_unused_parameters=True)
        torch.manual_seed(rank)
        with model.no_sync():
            model(torch.randn(3, 2), "a" if rank == 0 else "b").sum().backward()
        model(torch.randn(3, 2), "a").sum().backward()
        return everyone(grads(model))

    attempt(rank, "no_sync head differs by rank", rank_dependent_head)

    def static_head_switch():
        torch.manual_seed(0)
        model = DDP(Routed(), static_graph=True)
        torch.manual_seed(rank)
        for step, head in enumerate(["a", "a", "b"]):
            model.zero_grad()
            model(torch.randn(3, 2), head).sum().backward()
            if rank == 0:
                print(f"static_graph step {step} head {head} grads {grads(model)}", flush=True)

    attempt(rank, "static_graph head switch", static_head_switch)

    def late_static():
        model = DDP(Routed())
        model(torch.randn(3, 2), "a").sum().backward()
        model._set_static_graph()

    attempt(rank, "_set_static_graph after a step", late_static)

    def toggled():
        torch.manual_seed(0)
        model = DDP(Routed(), find_unused_parameters=True)
        torch.manual_seed(rank)
        out = []
        for step in range(3):
            model.module.a.weight.requires_grad_(step != 1)
            model.zero_grad()
            model(torch.randn(3, 2), "a").sum().backward()
            out.append(everyone(grads(model)))
        return out

    attempt(rank, "a.weight frozen for step 1 only", toggled)
    dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(run, args=(2, 29859), nprocs=2)
    print("done")
