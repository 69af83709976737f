# Two backward() calls per iteration in multi-task training, with the error caught and the loop going on, as
# scripts that log and continue do: the first iteration raises "Expected to mark a variable ready only once", and
# every later forward hits 1.13's own internal assert in the reducer (every parameter was marked, no reduction
# finished), which tinyddp reproduces word for word.
import os
import tinyddp as torch
import tinyddp.nn as nn
import tinyddp.distributed as dist
from tinyddp.nn.parallel import DistributedDataParallel as DDP


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Linear(4, 8)
        self.head_a = nn.Linear(8, 2)
        self.head_b = nn.Linear(8, 1)

    def forward(self, x):
        h = self.trunk(x)
        return self.head_a(h), self.head_b(h)


os.environ["MASTER_ADDR"] = "127.0.0.1"
os.environ["MASTER_PORT"] = "29660"
dist.init_process_group("gloo", rank=0, world_size=1)
torch.manual_seed(0)
model = DDP(Net())
for it in range(3):
    try:
        a, b = model(torch.randn(6, 4))
        a.sum().backward(retain_graph=True)
        b.sum().backward()
        print(it, "ok")
    except RuntimeError as e:
        print(it, repr(str(e)))
dist.destroy_process_group()
