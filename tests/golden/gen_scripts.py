"""Golden data: typical PyTorch 1.13 user scripts, run as they are -> scripts.json.

Each script of tests/python/scripts/ (an MLP classifier, a DataLoader loop, 2-rank DDP with spawn, no_sync,
a multi-task model's two backward() calls, a GAN's two optimizers, eval/train and clipping, a custom Module, a
CNN, custom autograd Functions, a checkpoint saved and resumed, autograd, tensor methods, indexing, printing,
errors, ...) runs in a fresh interpreter through tests/python/scripts/_harness.py, which records its stdout, how
it ended (exception type and text) and the warnings its main thread raised. tests/python/test_scripts.py runs the
same scripts on tinyddp and compares all three. Object addresses ("object at
0x7f...") are written as "object at 0x..." here and there. Run by hand, then commit scripts.json (about a minute;
deterministic):
    /usr/bin/python3 tests/golden/gen_scripts.py
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
from _harness import normalize, script_names  # noqa: E402


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


def run(name, stand_in):
    with tempfile.TemporaryDirectory() as tmp:
        result_path = os.path.join(tmp, "result.json")
        proc = subprocess.run([sys.executable, "_harness.py", name + ".py", result_path], cwd=SCRIPTS,
                              capture_output=True, text=True, timeout=300,
                              env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1", PYTHONPATH=stand_in))
        if proc.returncode != 0 or not os.path.exists(result_path):
            raise RuntimeError(f"{name}: the harness failed ({proc.returncode}):\n{proc.stderr}")
        with open(result_path) as f:
            result = json.load(f)
    return {"stdout": normalize(proc.stdout), "exception": result["exception"], "warnings": result["warnings"]}


def main():
    out = {"torch_version": torch.__version__, "scripts": {}}
    with tempfile.TemporaryDirectory() as stand_in:
        os.mkdir(os.path.join(stand_in, "tinyddp"))
        with open(os.path.join(stand_in, "tinyddp", "__init__.py"), "w") as f:
            f.write(TORCH_AS_TINYDDP)
        for name in script_names():
            out["scripts"][name] = run(name, stand_in)
            print(name, "ok", flush=True)
    write_json(out, here("scripts.json"))


if __name__ == "__main__":
    main()
