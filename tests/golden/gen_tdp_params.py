"""Shared writers for tinyddp golden data (used by the gen_*.py scripts).

Parameter text format (tinyddp parameters v1):

    # tinyddp parameters v1
    <name> <dtype> <ndim> <d0> ... <d_{ndim-1}>
    <v0> <v1> ... <v_{numel-1}>

One header/values line pair per entry of module.named_parameters(), in order.
Values are row-major, each written as repr(float(v)) (shortest round-trip).
"""
import json
import os

import torch

_DTYPES = {torch.float32: "f32", torch.float64: "f64"}


def _fmt(values):
    return " ".join(repr(float(v)) for v in values)


def write_params(module, path):
    """Write module.named_parameters() to `path` in tinyddp parameter format."""
    lines = ["# tinyddp parameters v1"]
    for name, p in module.named_parameters():
        t = p.detach().cpu().contiguous()
        dims = " ".join(str(d) for d in t.shape)
        header = f"{name} {_DTYPES[t.dtype]} {t.dim()}"
        lines.append(header + (" " + dims if dims else ""))
        lines.append(_fmt(t.reshape(-1).tolist()))
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def tensor_json(t):
    """Plain tensor -> {"shape": [...], "values": [row-major floats]}."""
    t = t.detach().cpu().contiguous()
    return {"shape": list(t.shape),
            "values": [float(v) for v in t.reshape(-1).tolist()]}


def write_json(obj, path):
    """Write `obj` as JSON (indent=1). Python floats are emitted with repr(),
    i.e. shortest round-trip, so no precision is lost."""
    with open(path, "w") as f:
        json.dump(obj, f, indent=1)
        f.write("\n")


def here(filename):
    """Path of `filename` next to the calling gen script (this directory)."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), filename)
