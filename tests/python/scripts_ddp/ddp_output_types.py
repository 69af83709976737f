# What a DDP forward may return, under find_unused_parameters=True (1.13 walks the autograd graph from the tensors
# it finds in the output): a plain tensor, a tuple, a dict with an auxiliary output the loss skips, a namedtuple,
# a dataclass (HuggingFace-style model outputs), a list nested in a dict, and a custom class DDP cannot look into
# (it finds no tensor, so every parameter counts as unused: the backward's error). Also a forward that returns
# None next to a tensor, and an output tensor that does not require grad; each case's gradient sums on rank 0.
import os
from collections import namedtuple
from dataclasses import dataclass

import tinyddp as torch
import tinyddp.distributed as dist
import tinyddp.multiprocessing as mp
import tinyddp.nn as nn
from tinyddp.nn.parallel import DistributedDataParallel as DDP

Pair = namedtuple("Pair", ["main", "aux"])


@dataclass
class ModelOutput:
    logits: torch.Tensor
    hidden: torch.Tensor


class Holder:
    def __init__(self, out):
        self.out = out


class Net(nn.Module):
    def __init__(self, kind):
        super().__init__()
        self.kind = kind
        self.body = nn.Linear(4, 6)
        self.main = nn.Linear(6, 2)
        self.aux = nn.Linear(6, 3)

    def forward(self, x):
        h = torch.relu(self.body(x))
        m, a = self.main(h), self.aux(h)
        if self.kind == "tensor":
            return m
        if self.kind == "tuple":
            return m, a
        if self.kind == "dict":
            return {"main": m, "aux": a}
        if self.kind == "namedtuple":
            return Pair(m, a)
        if self.kind == "dataclass":
            return ModelOutput(logits=m, hidden=h)
        if self.kind == "nested":
            return {"outs": [m, a], "step": 3}
        if self.kind == "none":
            return m, None
        if self.kind == "detached":
            return m, a.detach()
        return Holder(m)


def main_of(kind, out):
    if kind == "tensor":
        return out
    if kind in ("tuple", "none", "detached"):
        return out[0]
    if kind == "dict":
        return out["main"]
    if kind == "namedtuple":
        return out.main
    if kind == "dataclass":
        return out.logits
    if kind == "nested":
        return out["outs"][0]
    return out.out


def run(rank, world_size, port):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    for kind in ["tensor", "tuple", "dict", "namedtuple", "dataclass", "nested", "none", "detached", "custom"]:
        torch.manual_seed(0)
        model = DDP(Net(kind), find_unused_parameters=True)
        torch.manual_seed(1 + rank)
        try:
            for step in range(2):
                model.zero_grad()
                out = model(torch.randn(3, 4))
                loss = main_of(kind, out).pow(2).mean()
                loss.backward()
            sums = {n: (None if p.grad is None else round(p.grad.sum().item(), 5))
                    for n, p in model.module.named_parameters()}
            if rank == 0:
                print(f"{kind}: type {type(out).__name__} loss {loss.item():.5f} grads {sums}", flush=True)
        except RuntimeError as e:
            if rank == 0:
                print(f"{kind}: RuntimeError: {e}", flush=True)
        dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(run, args=(2, 29841), nprocs=2)
    print("done")
