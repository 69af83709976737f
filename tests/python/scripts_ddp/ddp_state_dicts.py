# Saving a DDP model the way users do and loading it elsewhere: model.state_dict() has "module." in front of every
# key, model.module.state_dict() does not; loading the wrapper's dict into a plain model fails with 1.13's
# Missing/Unexpected key error, and the usual fixes (strip the prefix, or
# consume_prefix_in_state_dict_if_present) work. The plain model then predicts what the DDP model predicts.
import io
import os
from collections import OrderedDict

import tinyddp as torch
import tinyddp.distributed as dist
import tinyddp.multiprocessing as mp
import tinyddp.nn as nn
from tinyddp.nn.modules.utils import consume_prefix_in_state_dict_if_present
from tinyddp.nn.parallel import DistributedDataParallel as DDP


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 4, bias=False)   # BatchNorm follows: no bias
        self.bn = nn.BatchNorm1d(4)
        self.out = nn.Linear(4, 1)

    def forward(self, x):
        return self.out(torch.relu(self.bn(self.fc(x))))


def main(rank, world_size, shared):
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ["MASTER_PORT"] = "29904"
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    torch.manual_seed(0)
    model = DDP(Net())
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    torch.manual_seed(rank)
    for _ in range(3):
        x = torch.randn(8, 3)
        opt.zero_grad()
        nn.functional.mse_loss(model(x), x.sum(1, keepdim=True)).backward()
        opt.step()
    if rank == 0:
        print("model.state_dict():", list(model.state_dict().keys()))
        print("model.module.state_dict():", list(model.module.state_dict().keys()))
        buf = io.BytesIO()
        torch.save({"model": model.state_dict(), "module": model.module.state_dict(),
                    "optimizer": opt.state_dict(), "epoch": 3}, buf)
        shared["checkpoint"] = buf.getvalue()
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    with mp.Manager() as manager:
        shared = manager.dict()
        mp.spawn(main, args=(2, shared), nprocs=2)
        blob = shared["checkpoint"]
    ckpt = torch.load(io.BytesIO(blob))
    print(sorted(ckpt), ckpt["epoch"], type(ckpt["model"]).__name__)
    plain = Net()
    try:
        plain.load_state_dict(ckpt["model"])
    except RuntimeError as e:
        print("RuntimeError:", e)
    result = plain.load_state_dict(ckpt["model"], strict=False)
    print("strict=False:", len(result.missing_keys), "missing,", len(result.unexpected_keys), "unexpected")
    stripped = OrderedDict((k[len("module."):] if k.startswith("module.") else k, v) for k, v in ckpt["model"].items())
    print(plain.load_state_dict(stripped))
    other = Net()
    consume_prefix_in_state_dict_if_present(ckpt["model"], "module.")
    print(list(ckpt["model"].keys())[:3], other.load_state_dict(ckpt["model"]))
    fresh = Net()
    print(fresh.load_state_dict(ckpt["module"]))
    fresh.eval()
    x = torch.linspace(-1, 1, 6).view(2, 3)
    with torch.no_grad():
        print("prediction", [f"{v:.5f}" for v in fresh(x).view(-1).tolist()])
    print("running_mean", [f"{v:.5f}" for v in fresh.bn.running_mean.tolist()], fresh.bn.num_batches_tracked)
    opt = torch.optim.Adam(fresh.parameters(), lr=0.01)
    opt.load_state_dict(ckpt["optimizer"])
    print("optimizer step", opt.state_dict()["state"][0]["step"], opt.param_groups[0]["lr"])
