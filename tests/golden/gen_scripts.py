"""Golden data: typical PyTorch 1.13 user scripts, run as they are -> scripts.json.

Each script of tests/python/scripts/ (an MLP classifier, a DataLoader loop, 2-rank DDP with spawn, no_sync,
a multi-task model's two backward() calls, a GAN's two optimizers, eval/train and clipping, a custom Module, a
CNN, custom autograd Functions, a checkpoint saved and resumed, autograd, tensor methods, indexing, printing,
errors, ...) runs in a fresh interpreter through tests/python/scripts/_harness.py (run_script), which records its
stdout, how it ended (exception type and text) and the warnings its main thread raised. tests/python/test_scripts.py runs the
same scripts on tinyddp and compares all three. Object addresses ("object at
0x7f...") are written as "object at 0x..." here and there. Run by hand, then commit scripts.json (about a minute;
deterministic):
    /usr/bin/python3 tests/golden/gen_scripts.py [NAME...]
`generate` serves the other script folders too.
"""
import json
import os
import subprocess
import sys
import tempfile

import torch

sys.dont_write_bytecode = True  # keep __pycache__ out of tests/golden
from gen_tdp_params import here, write_json  # noqa: E402

SCRIPTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python", "scripts")
sys.path.insert(0, SCRIPTS)
from _harness import run_script, script_names  # noqa: E402


# The scripts say `import tinyddp as torch`; here `tinyddp` is a stand-in package, first on PYTHONPATH (so spawned
# ranks import it too), that resolves `tinyddp` and every `tinyddp.x.y` to PyTorch's `torch.x.y`.
TORCH_AS_TINYDDP = """
import importlib
import importlib.abc
import importlib.util
import sys

import torch


class _TorchModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path, target=None):
        if name.startswith("tinyddp."):
            return importlib.util.spec_from_loader(name, self)
        return None

    def create_module(self, spec):
        return importlib.import_module("torch" + spec.name[len("tinyddp"):])

    def exec_module(self, module):
        pass


sys.meta_path.insert(0, _TorchModules())
sys.modules["tinyddp"] = torch
"""


def generate(folder=SCRIPTS, json_name="scripts.json", timeout=300):
    """Runs the scripts of `folder` named on the command line (all of them when none is) on torch and writes
    json_name next to this file; named scripts replace their records and keep the others'. Every script folder's
    generator is this function (gen_scripts_more.py, gen_scripts_ddp.py, gen_scripts_edge.py)."""
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
    generate()
