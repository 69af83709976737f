"""More PyTorch 1.13 CPU training and evaluation scripts on tinyddp against PyTorch (tests/golden/scripts_more.json,
from gen_scripts_more.py), compared as test_scripts.py compares tests/python/scripts/: stdout, the exception (type
and text) and the main thread's warnings must equal 1.13's exactly; object addresses compare as "object at 0x...".
`check_scripts` serves the other script folders too (test_scripts_ddp.py).
"""
import json
import os
import sys

import pytest

import tinyddp

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "scripts"))
from _harness import differences, run_script, script_names  # noqa: E402

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
    os.path.join(HERE, "scripts_more"), "scripts_more.json", timeout=240)
