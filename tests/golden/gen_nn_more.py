"""More of torch.nn on real PyTorch 1.13: Conv1d and grouped/padded convolutions, 1-D and adaptive pooling,
GroupNorm and InstanceNorm, channel dropout, PReLU and the other activations, the padding layers and F.pad's
modes, Upsample/interpolate, PixelShuffle, Fold/Unfold, distances, the pair and triplet losses, Bilinear, the
common losses' reductions and options, ParameterDict; plus their errors.

Run by hand from anywhere: /usr/bin/python3 tests/golden/gen_nn_more.py
Writes nn_more.json next to this script (deterministic, about a second).

The cases are nn_more_cases.py's (the same code runs on tinyddp in tests/python/test_nn_more.py). Layout:
{"torch_version", "cases": {name: {"repr", "keys", "buffers", "params", "shape", "out", "grads"}},
"parameter_dict": {...}, "errors": {name: {"type", "message"}}}.
"""
import json
import sys

import torch

sys.dont_write_bytecode = True  # keep __pycache__ out of tests/golden
from gen_tdp_params import here
from nn_more_cases import cases, errors, in_place, inits, lazy_linear, parameter_dict, sync_batchnorm


def main():
    out = {name: fn() for name, fn in cases(torch).items()}
    errs = {}
    for name, fn in errors(torch).items():
        try:
            fn()
        except Exception as e:   # noqa: BLE001 -- the golden records whatever 1.13 raises
            errs[name] = {"type": type(e).__name__, "message": str(e)}
        else:
            raise AssertionError(f"{name}: PyTorch raised nothing")
    golden = {"torch_version": torch.__version__, "cases": out, "parameter_dict": parameter_dict(torch),
              "in_place": in_place(torch), "inits": inits(torch),
              "sync_batchnorm": sync_batchnorm(torch), "lazy_linear": lazy_linear(torch),
              "errors": errs}
    with open(here("nn_more.json"), "w") as f:
        f.write("{\n" + ",\n".join(
            json.dumps(k) + ": " + (json.dumps(v) if not isinstance(v, dict) else
                                    "{\n" + ",\n".join(" " + json.dumps(n) + ": " + json.dumps(e)
                                                       for n, e in v.items()) + "\n}")
            for k, v in golden.items()) + "\n}\n")


if __name__ == "__main__":
    main()
