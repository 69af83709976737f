# Details of DDP training loops users write: the wrapper's public attributes (device_ids, output_device, dim,
# bucket_bytes_cap, find_unused_parameters, require_backward_grad_sync, require_forward_param_sync),
# clip_grad_norm_ after the averaged backward (its f-string value at full precision, and the clipped gradients),
# two forwards summed into one backward, a forward outside no_sync() with its backward inside (still averaged),
# require_backward_grad_sync = False set by hand as some loops do instead of no_sync(), a forward with keyword
# arguments returning a dict, and warnings raised inside the ranks (the scheduler stepped before the optimizer,
# a target size mismatch): printed by each rank's process, none recorded by the main process. Results come back
# through a multiprocessing SimpleQueue.
import os

import tinyddp as torch
import tinyddp.distributed as dist
import tinyddp.multiprocessing as mp
import tinyddp.nn as nn
import tinyddp.nn.functional as F
from tinyddp.nn.parallel import DistributedDataParallel as DDP


class Heads(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(3, 4)
        self.out = nn.Linear(4, 1)

    def forward(self, x, scale=1.0):
        h = torch.relu(self.body(x))
        return {"y": self.out(h) * scale, "aux": [h.mean(1)]}


def run(rank, world_size, queue):
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ["MASTER_PORT"] = "29980"
    dist.init_process_group("gloo", init_method="env://", rank=rank, world_size=world_size)
    out = []
    torch.manual_seed(0)
    model = DDP(nn.Linear(3, 2), bucket_cap_mb=1)
    out.append(f"attributes {model.device_ids} {model.output_device} {model.dim} {model.bucket_bytes_cap} "
               f"{model.find_unused_parameters} {model.broadcast_buffers} {model.gradient_as_bucket_view} "
               f"{model.require_backward_grad_sync} {model.require_forward_param_sync}")
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.9)
    sched.step()   # before opt.step(): 1.13's warning, in this rank's process
    x = torch.randn(4, 3) + rank
    loss = model(x).sum() + model(x * 2).sum()
    loss.backward()
    out.append(f"two forwards, one backward: weight grad sum {model.module.weight.grad.sum().item():.4f}")
    norm = nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    out.append(f"clip_grad_norm_ {norm} {norm.dtype} bias grad {model.module.bias.grad}")
    opt.step()
    opt.zero_grad()
    with torch.no_grad():
        y = model(x)
    out.append(f"no_grad forward: requires_grad {y.requires_grad} require_forward_param_sync "
               f"{model.require_forward_param_sync}")
    loss = model(x).sum()
    with model.no_sync():
        out.append(f"inside no_sync: require_backward_grad_sync {model.require_backward_grad_sync}")
        loss.backward()
    out.append(f"forward outside no_sync, backward inside: bias grad {model.module.bias.grad}")
    opt.zero_grad(set_to_none=True)
    out.append(f"zero_grad(set_to_none=True): {model.module.bias.grad}")
    model.require_backward_grad_sync = False
    model(x).sum().backward()
    out.append(f"require_backward_grad_sync=False by hand: bias grad {model.module.bias.grad}")
    model.require_backward_grad_sync = True
    model(x).sum().backward()
    out.append(f"then True again: bias grad {model.module.bias.grad}")
    heads = DDP(Heads())
    r = heads(x, scale=2.0)
    out.append(f"dict output {sorted(r)} {type(r['aux']).__name__} {r['y'].grad_fn.name()}")
    loss = F.mse_loss(r["y"], torch.zeros(4)) + r["aux"][0].sum()   # (4, 1) against (4,): 1.13 warns
    loss.backward()
    out.append(f"loss {loss.item():.5f} body bias grad {heads.module.body.bias.grad}")
    queue.put((rank, out))
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    queue = mp.get_context("spawn").SimpleQueue()
    mp.spawn(run, args=(2, queue), nprocs=2)
    for rank, lines in sorted(queue.get() for _ in range(2)):
        for line in lines:
            print(f"[rank {rank}] {line}")
