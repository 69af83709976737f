# Multi-task training with learned loss weights (homoscedastic uncertainty: loss = sum exp(-s_i) * L_i + s_i) under
# DDP, as users write it: the log-variances live in the wrapped model but are used only in the loss, outside
# forward. Without find_unused_parameters it trains (their gradients come after the forward's and are still
# averaged); with find_unused_parameters=True 1.13 marks them unused at the forward and their gradients then raise
# "Expected to mark a variable ready only once"; the fix users find is to compute the weighted loss inside
# forward. Also tensor hooks registered on parameters (a gradient clamp before the reduction) and a parameter the
# optimizer holds but the loss uses only through model.module outside the DDP forward.
import os

import tinyddp as torch
import tinyddp.distributed as dist
import tinyddp.multiprocessing as mp
import tinyddp.nn as nn
from tinyddp.nn.parallel import DistributedDataParallel as DDP


class MultiTask(nn.Module):
    def __init__(self, loss_inside):
        super().__init__()
        self.loss_inside = loss_inside
        self.body = nn.Linear(4, 8)
        self.reg = nn.Linear(8, 1)
        self.cls = nn.Linear(8, 3)
        self.log_vars = nn.Parameter(torch.zeros(2))

    def weighted(self, losses):
        return sum(torch.exp(-self.log_vars[i]) * l + self.log_vars[i] for i, l in enumerate(losses))

    def forward(self, x, y_reg=None, y_cls=None):
        h = torch.relu(self.body(x))
        r, c = self.reg(h).squeeze(1), self.cls(h)
        if self.loss_inside:
            return self.weighted([nn.functional.mse_loss(r, y_reg), nn.functional.cross_entropy(c, y_cls)])
        return r, c


def describe(model):
    lv = model.module.log_vars
    g = "None" if lv.grad is None else [round(v, 5) for v in lv.grad.tolist()]
    return f"log_vars {[round(v, 5) for v in lv.tolist()]} grad {g}"


def run(rank, world_size, port, find_unused, loss_inside, clamp):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    torch.manual_seed(0)
    model = DDP(MultiTask(loss_inside), find_unused_parameters=find_unused)
    if clamp:
        for p in model.parameters():
            p.register_hook(lambda g: g.clamp(-0.05, 0.05))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    tag = f"find_unused={find_unused} loss_inside={loss_inside} clamp={clamp}"
    torch.manual_seed(10 + rank)
    try:
        for step in range(3):
            x, y_reg, y_cls = torch.randn(6, 4), torch.randn(6), torch.randint(0, 3, (6,))
            opt.zero_grad()
            if loss_inside:
                loss = model(x, y_reg, y_cls)
            else:
                r, c = model(x)
                loss = model.module.weighted([nn.functional.mse_loss(r, y_reg), nn.functional.cross_entropy(c, y_cls)])
            loss.backward()
            gmax = max(p.grad.abs().max().item() for p in model.parameters())
            opt.step()
            everyone = [None] * world_size
            dist.all_gather_object(everyone, describe(model))
            if rank == 0:
                print(f"{tag} step {step} loss {loss.item():.5f} max|grad| {gmax:.5f} {everyone[0]}", flush=True)
                print(f"{tag} replicas agree: {everyone[0] == everyone[1]}", flush=True)
    except RuntimeError as e:
        if rank == 0:
            print(f"{tag}: RuntimeError: {e}", flush=True)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(run, args=(2, 29843, False, False, False), nprocs=2)
    mp.spawn(run, args=(2, 29844, True, False, False), nprocs=2)
    mp.spawn(run, args=(2, 29845, True, True, False), nprocs=2)
    mp.spawn(run, args=(2, 29846, False, True, True), nprocs=2)
    print("done")
