"""How PyTorch 1.13 reads TORCH_DISTRIBUTED_DEBUG: the level of each value it accepts, the error for the others.

Run by hand from anywhere: /usr/bin/python3 tests/golden/gen_dist_debug_level.py
Writes dist_debug_level.json next to this script: {"levels": {value: "OFF" | "INFO" | "DETAIL"},
"errors": {value: str(e) of the RuntimeError}, "torch_version"}.
torch parses the variable at import (an invalid value makes `import torch` itself fail), so it is set after
the import and re-read with dist.set_debug_level_from_env(), the function the import calls.
"""
import os
import sys

import torch
import torch.distributed as dist

sys.dont_write_bytecode = True  # keep __pycache__ out of tests/golden
from gen_tdp_params import here, write_json

# PyTorch upper-cases what it reads (so "info" is INFO) and refuses anything else, the empty value included.
VALUES = ["OFF", "INFO", "DETAIL", "off", "info", "Detail", "", "bogus", " INFO", "DETAILS", "INFO "]


def main():
    out = {"levels": {}, "errors": {}}
    for value in VALUES:
        os.environ["TORCH_DISTRIBUTED_DEBUG"] = value
        try:
            dist.set_debug_level_from_env()
        except RuntimeError as e:
            out["errors"][value] = str(e)
        else:
            out["levels"][value] = dist.get_debug_level().name
    out["torch_version"] = torch.__version__
    write_json(out, here("dist_debug_level.json"))


if __name__ == "__main__":
    main()
