"""PyTorch 1.13's error for a TORCH_DISTRIBUTED_DEBUG value it does not know.

Run by hand from anywhere: /usr/bin/python3 tests/golden/gen_dist_debug_level.py
Writes dist_debug_level.json next to this script: {value: str(e) of the RuntimeError, ..., "torch_version"}.
torch parses the variable at import (an invalid value makes `import torch` itself fail), so it is set after
the import and re-read with dist.set_debug_level_from_env(), the function the import calls.
"""
import os
import sys

import torch
import torch.distributed as dist

sys.dont_write_bytecode = True  # keep __pycache__ out of tests/golden
from gen_tdp_params import here, write_json

# Values both PyTorch and tinyddp refuse. (They disagree elsewhere: PyTorch upper-cases what it reads, so "info"
# means INFO, and refuses an empty value; tinyddp refuses "info" and reads an empty value as OFF.)
VALUES = ["bogus", " INFO", "DETAILS"]


def main():
    out = {}
    for value in VALUES:
        os.environ["TORCH_DISTRIBUTED_DEBUG"] = value
        try:
            dist.set_debug_level_from_env()
        except RuntimeError as e:
            out[value] = str(e)
        else:
            raise AssertionError(f"{value!r} was accepted")
    out["torch_version"] = torch.__version__
    write_json(out, here("dist_debug_level.json"))


if __name__ == "__main__":
    main()
