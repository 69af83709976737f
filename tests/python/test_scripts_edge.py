"""PyTorch 1.13 scripts that meet the edges, on tinyddp against PyTorch (tests/golden/scripts_edge.json,
from gen_scripts_edge.py), compared as test_scripts.py compares tests/python/scripts/: stdout, the exception (type
and text) and the main thread's warnings must equal 1.13's exactly; object addresses compare as "object at 0x...".
"""
import difflib
import json
import os
import subprocess
import sys

import pytest

import tinyddp

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS_MORE = os.path.join(HERE, "scripts_edge")
HARNESS = os.path.join(HERE, "scripts", "_harness.py")
with open(os.path.join(HERE, "..", "golden", "scripts_edge.json")) as f:
    GOLDEN = json.load(f)
sys.path.insert(0, os.path.join(HERE, "scripts"))
from _harness import normalize  # noqa: E402

PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(tinyddp.__file__)))


def script_names():
    return sorted(f[:-3] for f in os.listdir(SCRIPTS_MORE) if f.endswith(".py") and not f.startswith("_"))


def run_on_tinyddp(name, tmp_path):
    result_path = str(tmp_path / "result.json")
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1",
               PYTHONPATH=os.pathsep.join([PACKAGE_DIR] + os.environ.get("PYTHONPATH", "").split(os.pathsep)))
    proc = subprocess.run([sys.executable, HARNESS, name + ".py", result_path], cwd=SCRIPTS_MORE,
                          capture_output=True, text=True, timeout=240, env=env)
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
