"""Golden data: more PyTorch 1.13 CPU training and evaluation scripts, run as they are -> scripts_more.json.

The scripts of tests/python/scripts_more/ (mixed precision as written for CUDA and run on a CPU, evaluation under
inference_mode with metrics, gradient norms and clipping, early stopping with checkpoints, a CNN, an LSTM with
truncated backpropagation, DDP under spawn with AMP flags, dtype and settings queries) run exactly as
gen_scripts.py runs tests/python/scripts/: each in a fresh interpreter through tests/python/scripts/_harness.py,
with a stand-in `tinyddp` that resolves to `torch`, recording stdout, how it ended and the main thread's warnings.
tests/python/test_scripts_more.py runs the same scripts on tinyddp and compares all three. Run by hand, then commit
scripts_more.json (deterministic):
    /usr/bin/python3 tests/golden/gen_scripts_more.py
`main` serves the other script folders too (gen_scripts_ddp.py).
"""
import json
import os
import subprocess
import sys
import tempfile

import torch

sys.dont_write_bytecode = True  # keep __pycache__ out of tests/golden
from gen_scripts import TORCH_AS_TINYDDP  # noqa: E402  (also puts tests/python/scripts on sys.path)
from gen_tdp_params import here, write_json  # noqa: E402
from _harness import run_script, script_names  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS_MORE = os.path.join(HERE, "..", "python", "scripts_more")


def main(folder=SCRIPTS_MORE, json_name="scripts_more.json", timeout=300):
    """Runs the scripts of `folder` named on the command line (all of them when none is) on torch and writes
    json_name next to this file; named scripts replace their records and keep the others'."""
    only = sys.argv[1:]
    path = here(json_name)
    out = {"torch_version": torch.__version__, "scripts": {}}
    if only and os.path.exists(path):   # regenerate some scripts, keep the others
        with open(path) as f:
            out = json.load(f)
    with tempfile.TemporaryDirectory() as stand_in:
        os.mkdir(os.path.join(stand_in, "tinyddp"))
        with open(os.path.join(stand_in, "tinyddp", "__init__.py"), "w") as f:
            f.write(TORCH_AS_TINYDDP)
        for name in only or script_names(folder):
            for attempt in range(3):
                try:
                    out["scripts"][name] = run_script(folder, name, [stand_in], timeout)
                    break
                except subprocess.TimeoutExpired:
                    # 1.13's gloo can deadlock at exit: ~ProcessGroupGloo joins its worker under the GIL while the
                    # worker waits for the GIL to free a tensor's Python object. The output is deterministic.
                    print(name, "timed out; running it again", flush=True)
            else:
                raise RuntimeError(f"{name} timed out 3 times")
            print(name, "ok", flush=True)
    out["scripts"] = {k: out["scripts"][k] for k in sorted(out["scripts"]) if k in script_names(folder)}
    write_json(out, path)


if __name__ == "__main__":
    main()
