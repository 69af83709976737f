"""Golden data: PyTorch 1.13's torch.save checkpoint format, which tinyddp.save writes and tinyddp.load reads.

Writes torch_checkpoint.pt, a small checkpoint of what a DDP script saves (a model's state dict with a BatchNorm,
Adam's state dict after two steps, an epoch, nested containers, views of one storage, a non-contiguous
tensor, a Parameter, each dtype tinyddp has, a 0-dim and an empty tensor), and serialization.json:
  - `entries`: the zip's entry names in order, with each record's data offset modulo 64 (1.13 aligns them);
  - `content`: describe(checkpoint), the walk below: containers with their keys and types (OrderedDict
    `_metadata` too), per tensor its dtype, shape, stride, storage offset, requires_grad, type, exact values and
    `storage`, the index of its storage in walk order (tensors with one index share a storage);
  - `native`: the `data.pkl` bytes (hex) and entry names 1.13 writes for build_native(torch), an object that
    tinyddp builds alike (same seed: nn.Linear's init is PyTorch's), so that tests/python/test_serialization.py
    compares tinyddp.save's pickle with 1.13's byte for byte.

Run by hand from the repository root, then commit both files:
    /usr/bin/python3 tests/golden/gen_serialization.py
Check files that tinyddp wrote (loaded with torch, compared with describe() of what they should hold):
    PYTHONPATH=build/python python3 -c "import tinyddp as t, sys; sys.path.insert(0, 'tests/golden'); \\
        import gen_serialization as g; t.save(t.load('tests/golden/torch_checkpoint.pt'), '/tmp/tdp_roundtrip.pt'); \\
        t.save(g.build_native(t), '/tmp/tdp_native.pt')"
    /usr/bin/python3 tests/golden/gen_serialization.py --check /tmp/tdp_roundtrip.pt /tmp/tdp_native.pt
"""
import io
import os
import struct
import sys
import zipfile
from collections import OrderedDict

sys.dont_write_bytecode = True  # keep __pycache__ out of tests/golden
# torch is imported in main() and check() only: tests/python/test_serialization.py imports build_native, describe
# and zip_entries from here and must not import torch.


def here(filename):
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), filename)


def build_native(torch):
    """An object built alike by PyTorch and by tinyddp (`torch` is either module): no training step, so every
    value is an init or written out."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.ReLU(), torch.nn.BatchNorm1d(2))
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    base = torch.arange(12).reshape(3, 4).double()
    return {"model": model.state_dict(), "optimizer": opt.state_dict(), "epoch": 3, "loss": 0.25,
            "base": base, "row": base[1], "t": base.t(), "cols": base[:, 1:3], "i": torch.tensor([1, -2]),
            "b": torch.tensor([True, False]), "f": torch.ones(2), "scalar": torch.tensor(2.5),
            "p": torch.nn.Parameter(torch.ones(2)), "dtype": torch.float64, "size": torch.Size([2, 3]),
            "device": torch.device("cpu"), "misc": [1.5, None, "x", (1, 2), True]}


def build_checkpoint(torch):
    """The checkpoint a DDP script writes, with written-out data and two optimizer steps."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.ReLU(), torch.nn.BatchNorm1d(2))
    adam = torch.optim.Adam(model.parameters(), lr=0.01)
    x = torch.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75], [-2.0, 1.0, 0.5], [0.0, 0.5, 1.0]])
    for _ in range(2):
        adam.zero_grad()
        (model(x) ** 2).sum().backward()
        adam.step()
    base = torch.arange(12.0).reshape(3, 4)
    return {
        "model": model.state_dict(), "optimizer": adam.state_dict(), "epoch": 3,
        "loss": 0.125, "nested": {"list": [1, 2.5, "a", None, True], "tuple": (torch.arange(3), {"x": torch.tensor(
            1.5, dtype=torch.float64)})},
        "views": {"base": base, "row": base[1], "t": base.t(), "cols": base[:, 1:3]},
        "dtypes": {"float32": torch.tensor([1.5, -2.0]), "float64": torch.tensor([0.1, 1e300], dtype=torch.float64),
                   "int64": torch.tensor([-(2 ** 63), 2 ** 63 - 1, 7]), "bool": torch.tensor([[True], [False]]),
                   "scalar": torch.tensor(3), "empty": torch.zeros(0, 2)},
        "param": torch.nn.Parameter(torch.tensor([1.0, -2.0])),
        "frozen": torch.nn.Parameter(torch.tensor([4.0]), requires_grad=False),
        "leaf": torch.tensor([3.0], requires_grad=True),
    }


def describe(obj, storages=None):
    """A JSON-able account of `obj` that is the same for PyTorch's and tinyddp's loaded objects."""
    if storages is None:
        storages = {}
    if isinstance(obj, dict):
        out = {"type": "OrderedDict" if isinstance(obj, OrderedDict) else "dict",
               "items": [[describe(k, storages), describe(v, storages)] for k, v in obj.items()]}
        if hasattr(obj, "_metadata"):
            out["metadata"] = describe(obj._metadata, storages)
        return out
    if isinstance(obj, (list, tuple)) and type(obj).__name__ != "Size":
        return {"type": type(obj).__name__, "items": [describe(v, storages) for v in obj]}
    if hasattr(obj, "storage_offset"):   # a tensor
        key = obj.storage().data_ptr()
        flat = obj.detach().reshape(-1).tolist()
        return {"type": "Parameter" if type(obj).__name__ == "Parameter" else "Tensor",
                "dtype": str(obj.dtype), "shape": list(obj.shape), "stride": list(obj.stride()),
                "storage_offset": obj.storage_offset(), "storage": storages.setdefault(key, len(storages)),
                "storage_size": len(obj.storage()), "requires_grad": obj.requires_grad, "values": flat}
    if type(obj).__name__ in ("dtype", "device", "Size"):
        return {"type": type(obj).__name__, "repr": repr(obj) if type(obj).__name__ != "Size" else list(obj)}
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return {"type": type(obj).__name__, "value": obj}
    raise TypeError(f"describe: {type(obj).__name__}")


def zip_entries(data):
    """(name, data offset modulo 64) of each zip entry, in order."""
    out = []
    for info in zipfile.ZipFile(io.BytesIO(data)).infolist():
        name_len, extra_len = struct.unpack("<HH", data[info.header_offset + 26:info.header_offset + 30])
        out.append([info.filename, (info.header_offset + 30 + name_len + extra_len) % 64])
    return out


def main():
    import torch
    from gen_tdp_params import write_json
    buffer = io.BytesIO()
    torch.save(build_checkpoint(torch), buffer)
    data = buffer.getvalue()
    with open(here("torch_checkpoint.pt"), "wb") as f:
        f.write(data)
    loaded = torch.load(io.BytesIO(data))
    native = io.BytesIO()
    torch.save(build_native(torch), native)
    native_zip = zipfile.ZipFile(io.BytesIO(native.getvalue()))
    write_json({"torch": torch.__version__, "entries": zip_entries(data),
                "version_record": zipfile.ZipFile(io.BytesIO(data)).read("archive/version").decode(),
                "content": describe(loaded),
                "native": {"entries": native_zip.namelist(),
                           "data_pkl": native_zip.read("archive/data.pkl").hex(),
                           "content": describe(build_native(torch))}},
               here("serialization.json"))
    print(f"torch_checkpoint.pt: {len(data)} bytes")


def check(paths):
    """Loads files that tinyddp wrote with torch and compares them with what they should hold."""
    import json
    import torch
    with open(here("serialization.json")) as f:
        golden = json.load(f)
    ok = True
    for path in paths:
        got = describe(torch.load(path))
        which = [name for name, want in (("torch_checkpoint.pt", golden["content"]),
                                         ("build_native", golden["native"]["content"])) if got == want]
        print(f"{path}: {'equal to ' + which[0] if which else 'DIFFERS from both goldens'}")
        ok = ok and bool(which)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--check":
        check(sys.argv[2:])
    else:
        main()
