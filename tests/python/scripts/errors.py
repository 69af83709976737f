# The errors scripts run into, with PyTorch's exception types and texts.
import tinyddp as torch
import tinyddp.nn as nn


def show(label, fn):
    try:
        print(label, fn())
    except Exception as e:  # noqa: BLE001
        print(label, "raised", type(e).__name__, e)


x = torch.randn(2, 3)
show("view noncontig", lambda: x.t().view(6))
show("reshape noncontig", lambda: x.t().reshape(6).shape)
show("bad view", lambda: x.view(4, 2))
show("cat dims", lambda: torch.cat([x, torch.randn(2, 2)], dim=0))
show("stack sizes", lambda: torch.stack([x, torch.randn(3, 2)]))
show("item many", lambda: x.item())
show("bool many", lambda: bool(x > 0))
show("dim range", lambda: x.sum(dim=2))
show("squeeze dim", lambda: x.unsqueeze(5))
show("cross entropy float target", lambda: nn.CrossEntropyLoss()(x, torch.tensor([0.0, 1.0])))
show("split sizes", lambda: x.split([1, 1], dim=1))
show("permute dims", lambda: x.permute(0))
show("permute dup", lambda: x.permute(0, 0))
show("mask shape", lambda: x[torch.tensor([True, False, True])])
show("index tensor oob", lambda: x[torch.tensor([0, 5])])
show("float index", lambda: x[torch.tensor([0.0])])
show("where cond", lambda: torch.where(torch.ones(2, 3), x, x))
show("topk k", lambda: x.topk(5))
show("one_hot float", lambda: nn.functional.one_hot(torch.tensor([1.0])))
show("one_hot small", lambda: nn.functional.one_hot(torch.tensor([3]), 2))
show("arange step", lambda: torch.arange(0, 5, -1))
show("clamp none", lambda: x.clamp())
show("len 0d", lambda: len(torch.tensor(1.0)))
show("load keys", lambda: nn.Linear(2, 2).load_state_dict({"weight": torch.zeros(2, 2)}))
show("load shape", lambda: nn.Linear(2, 2).load_state_dict({"weight": torch.zeros(3, 2), "bias": torch.zeros(2)}))
show("module attr", lambda: nn.Linear(2, 2).wieght)
show("chunk zero", lambda: x.chunk(0))
show("requires int", lambda: torch.arange(3).requires_grad_())
