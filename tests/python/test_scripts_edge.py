"""PyTorch 1.13 scripts that meet the edges (tests/python/scripts_edge/) on tinyddp against PyTorch
(tests/golden/scripts_edge.json, from gen_scripts_edge.py): stdout, the exception and the main thread's warnings must
equal 1.13's exactly, as test_scripts.py compares its folder.
"""
import os

from test_scripts import HERE, check_scripts

test_every_script_has_a_golden, test_script_prints_and_ends_as_pytorch = check_scripts(
    os.path.join(HERE, "scripts_edge"), "scripts_edge.json", timeout=240)
