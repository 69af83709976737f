"""Typical PyTorch 1.13 user scripts on tinyddp against PyTorch (tests/golden/scripts.json, from gen_scripts.py).

Each script of tests/python/scripts/ is a 1.13 user's script as the front end asks for it (`import tinyddp as
torch`); the generator ran the same text with `tinyddp` resolving to PyTorch. The harness (scripts/_harness.py)
runs it in a fresh interpreter. Its stdout, how it ended (exception type and text) and the warnings of its main
thread must equal PyTorch's exactly: the scripts print values with fixed formatting (a loss to 5 or 6 decimals,
tensors at PyTorch's print precision of 4), and tinyddp's engine computes those values as PyTorch's CPU kernels do
(the same random streams, initializations and optimizer steps), so no tolerance is needed. Object addresses are
compared as "object at 0x...".
"""
import difflib
import json
import os
import subprocess
import sys

import pytest

import tinyddp

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.join(HERE, "scripts")
with open(os.path.join(HERE, "..", "golden", "scripts.json")) as f:
    GOLDEN = json.load(f)
sys.path.insert(0, SCRIPTS)
from _harness import normalize, script_names  # noqa: E402


# The package this test imported (a relative PYTHONPATH would not survive the scripts' working directory).
PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(tinyddp.__file__)))


def run_on_tinyddp(name, tmp_path):
    result_path = str(tmp_path / "result.json")
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1",
               PYTHONPATH=os.pathsep.join([PACKAGE_DIR] + os.environ.get("PYTHONPATH", "").split(os.pathsep)))
    proc = subprocess.run([sys.executable, "_harness.py", name + ".py", result_path], cwd=SCRIPTS,
                          capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0 and os.path.exists(result_path), f"the harness failed:\n{proc.stderr}"
    with open(result_path) as f:
        result = json.load(f)
    return {"stdout": normalize(proc.stdout), "exception": result["exception"], "warnings": result["warnings"]}


def test_every_script_has_a_golden():
    assert sorted(GOLDEN["scripts"]) == script_names()


@pytest.mark.parametrize("name", sorted(GOLDEN["scripts"]))
def test_script_prints_and_ends_as_pytorch(name, tmp_path):
    golden = GOLDEN["scripts"][name]
    ours = run_on_tinyddp(name, tmp_path)
    diff = "".join(difflib.unified_diff(golden["stdout"].splitlines(True), ours["stdout"].splitlines(True),
                                        "pytorch", "tinyddp"))
    assert ours["stdout"] == golden["stdout"], f"{name}: stdout differs:\n{diff}"
    assert ours["exception"] == golden["exception"], name
    assert ours["warnings"] == golden["warnings"], name
