"""More PyTorch 1.13 CPU training and evaluation scripts (tests/python/scripts_more/) on tinyddp against PyTorch
(tests/golden/scripts_more.json, from gen_scripts_more.py), compared as test_scripts.py compares its folder: stdout,
the exception (type and text) and the main thread's warnings must equal 1.13's exactly.
"""
import os

from test_scripts import HERE, check_scripts

test_every_script_has_a_golden, test_script_prints_and_ends_as_pytorch = check_scripts(
    os.path.join(HERE, "scripts_more"), "scripts_more.json", timeout=240)
