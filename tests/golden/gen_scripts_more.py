"""Golden data: more PyTorch 1.13 CPU training and evaluation scripts, run as they are -> scripts_more.json.

The scripts of tests/python/scripts_more/ (mixed precision as written for CUDA and run on a CPU, evaluation under
inference_mode with metrics, gradient norms and clipping, early stopping with checkpoints, a CNN, an LSTM with
truncated backpropagation, DDP under spawn with AMP flags, dtype and settings queries) run exactly as
gen_scripts.py runs tests/python/scripts/: each in a fresh interpreter through tests/python/scripts/_harness.py,
with a stand-in `tinyddp` that resolves to `torch`, recording stdout, how it ended and the main thread's warnings.
tests/python/test_scripts_more.py runs the same scripts on tinyddp and compares all three. Run by hand, then commit
scripts_more.json (deterministic):
    /usr/bin/python3 tests/golden/gen_scripts_more.py
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
from _harness import normalize  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS_MORE = os.path.join(HERE, "..", "python", "scripts_more")
HARNESS = os.path.join(HERE, "..", "python", "scripts", "_harness.py")


def script_names():
    return sorted(f[:-3] for f in os.listdir(SCRIPTS_MORE) if f.endswith(".py") and not f.startswith("_"))


def run(name, stand_in):
    with tempfile.TemporaryDirectory() as tmp:
        result_path = os.path.join(tmp, "result.json")
        proc = subprocess.run([sys.executable, HARNESS, name + ".py", result_path], cwd=SCRIPTS_MORE,
                              capture_output=True, text=True, timeout=300,
                              env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1", PYTHONPATH=stand_in))
        if proc.returncode != 0 or not os.path.exists(result_path):
            raise RuntimeError(f"{name}: the harness failed ({proc.returncode}):\n{proc.stderr}")
        with open(result_path) as f:
            result = json.load(f)
    return {"stdout": normalize(proc.stdout), "exception": result["exception"], "warnings": result["warnings"]}


def main():
    only = sys.argv[1:]
    path = here("scripts_more.json")
    out = {"torch_version": torch.__version__, "scripts": {}}
    if only and os.path.exists(path):   # regenerate some scripts, keep the others
        with open(path) as f:
            out = json.load(f)
    with tempfile.TemporaryDirectory() as stand_in:
        os.mkdir(os.path.join(stand_in, "tinyddp"))
        with open(os.path.join(stand_in, "tinyddp", "__init__.py"), "w") as f:
            f.write(TORCH_AS_TINYDDP)
        for name in only or script_names():
            out["scripts"][name] = run(name, stand_in)
            print(name, "ok", flush=True)
    out["scripts"] = {k: out["scripts"][k] for k in sorted(out["scripts"]) if k in script_names()}
    write_json(out, path)


if __name__ == "__main__":
    main()
