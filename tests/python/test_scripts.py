"""Typical PyTorch 1.13 user scripts on tinyddp against PyTorch (tests/golden/scripts.json, from gen_scripts.py).

Each script of tests/python/scripts/ is a 1.13 user's script as the front end asks for it (`import tinyddp as
torch`); the generator ran the same text with `tinyddp` resolving to PyTorch. The harness (scripts/_harness.py)
runs it in a fresh interpreter. Its stdout, how it ended (exception type and text) and the warnings of its main
thread must equal PyTorch's exactly: the scripts print values with fixed formatting (a loss to 5 or 6 decimals,
tensors at PyTorch's print precision of 4), and tinyddp's engine computes those values as PyTorch's CPU kernels do
(the same random streams, initializations and optimizer steps), so no tolerance is needed. Object addresses are
compared as "object at 0x...". `check_scripts` serves every script folder (test_scripts_more.py, ...).
"""
import json
import os
import sys

import pytest

import tinyddp

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "scripts"))
from _harness import differences, run_script, script_names  # noqa: E402

# The package this test imported (a relative PYTHONPATH would not survive the scripts' working directory).
PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(tinyddp.__file__)))


def check_scripts(folder, json_name, timeout):
    """The two tests of a script folder and its golden: every script has a golden, and each prints and ends as
    1.13's did."""
    with open(os.path.join(HERE, "..", "golden", json_name)) as f:
        golden = json.load(f)

    def test_every_script_has_a_golden():
        assert sorted(golden["scripts"]) == script_names(folder)

    @pytest.mark.parametrize("name", sorted(golden["scripts"]))
    def test_script_prints_and_ends_as_pytorch(name):
        ours = run_script(folder, name, [PACKAGE_DIR] + os.environ.get("PYTHONPATH", "").split(os.pathsep), timeout)
        diff = differences(golden["scripts"][name], ours)
        assert diff == "", f"{name} differs from 1.13:\n{diff}"

    return test_every_script_has_a_golden, test_script_prints_and_ends_as_pytorch


test_every_script_has_a_golden, test_script_prints_and_ends_as_pytorch = check_scripts(
    os.path.join(HERE, "scripts"), "scripts.json", timeout=120)
