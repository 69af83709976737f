# Reproducibility checks as projects write them: two runs from the same seed compared with
# torch.testing.assert_close (state dicts as nested mappings, outputs, losses as Python floats), a checkpoint
# round trip through torch.save / torch.load on a BytesIO, the failure messages users see when something drifts
# (mismatch statistics, dtype and shape mismatches, missing keys, the item path in nested containers, a custom
# msg), tolerances given explicitly, and equal_nan.
import io

import tinyddp as torch
import tinyddp.nn as nn
import tinyddp.nn.functional as F
from tinyddp.testing import assert_close


def run(seed, steps=5, lr=0.1):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    X = torch.randn(32, 4)
    y = torch.randint(0, 2, (32,))
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = F.cross_entropy(model(X), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return model, opt, losses


def check(label, *args, **kwargs):
    try:
        assert_close(*args, **kwargs)
        print(label, "ok")
    except (AssertionError, ValueError, TypeError) as e:
        print(label, type(e).__name__ + ":", e)


m1, o1, l1 = run(0)
m2, o2, l2 = run(0)
m3, o3, l3 = run(0, lr=0.1001)
print("losses:", [round(v, 5) for v in l1])
check("same seed state", m1.state_dict(), m2.state_dict())
check("same seed losses", l1, l2)
check("optimizer state", o1.state_dict()["state"], o2.state_dict()["state"])
check("lr drift", m1.state_dict(), m3.state_dict())
check("lr drift, loose", m1.state_dict(), m3.state_dict(), rtol=1e-2, atol=1e-3)
check("loss list drift", [0.5, 0.25, 0.125], [0.5, 0.2501, 0.125])
check("loss scalar", l1[-1], l3[-1], rtol=1e-3, atol=1e-4)
check("only rtol", l1, l3, rtol=1e-3)

buffer = io.BytesIO()
torch.save({"model": m1.state_dict(), "optim": o1.state_dict(), "losses": l1}, buffer)
buffer.seek(0)
ckpt = torch.load(buffer)
restored = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
restored.load_state_dict(ckpt["model"])
x = torch.randn(5, 4)
check("restored outputs", restored(x), m1(x))
check("restored checkpoint", ckpt["losses"], l1)
check("dtype", restored(x).double(), m1(x))
check("dtype ignored", restored(x).double(), m1(x), check_dtype=False)
check("shape", restored(x)[:4], m1(x))
check("missing key", {"a": torch.ones(1), "b": torch.ones(1)}, {"a": torch.ones(1), "c": torch.ones(1)})
check("nested", {"layers": [torch.ones(2), (1.0, torch.zeros(2))]}, {"layers": [torch.ones(2), (1.0, torch.ones(2))]})
check("ints", torch.tensor([1, 2, 3]), torch.tensor([1, 2, 4]))
check("int vs float scalar", 1, 1.0)
check("nan", torch.tensor([1.0, float("nan")]), torch.tensor([1.0, float("nan")]))
check("nan equal", torch.tensor([1.0, float("nan")]), torch.tensor([1.0, float("nan")]), equal_nan=True)
check("0-dim", torch.tensor(1.0), torch.tensor(1.001))
check("custom msg", m1(x), m3(x), msg="model outputs drifted")
check("callable msg", torch.zeros(2, 3), torch.eye(2, 3), msg=lambda m: "Header\n" + m)
check("types", torch.ones(2), [1.0, 1.0])
