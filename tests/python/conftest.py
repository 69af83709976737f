# pytest configuration for tests/python: run through CTest (label `python`) with PYTHONPATH=<build>/python and
# TINYDDP_BIN=<the tinyddp command>; by hand: PYTHONPATH=build/python TINYDDP_BIN=build/apps/tinyddp \
#   /usr/bin/python3 -m pytest tests/python
import os
import sys

import pytest

# tests/golden's case runners (snippet_cases.py and the *_cases.py built on it), shared with the generators there
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "golden"))


@pytest.fixture
def tinyddp_bin():
    path = os.environ.get("TINYDDP_BIN", os.path.join(os.path.dirname(__file__), "..", "..", "build", "apps", "tinyddp"))
    if not os.path.exists(path):
        pytest.skip(f"the tinyddp command is not built ({path})")
    return path


# The reducer's warnings that a 1.13 script's `warnings.catch_warnings` does not record (dist::WarningOrigin):
# prepare_for_backward's TORCH_WARN, which 1.13 prints to stderr, and tinyddp's own diagnoses, printed too.
# `tinyddp repro --json` lists every warning; these are the ones a Python script sees only on stderr.
PRINTED_NOT_RECORDED = ("find_unused_parameters=True was specified in DDP constructor, but did not find any unused",
                        "tinyddp: ", "backward() ran inside no_sync() but the forward")


@pytest.fixture
def recorded_by_python():
    """Whether a warning of `tinyddp repro --json` is one a Python script records with `warnings`."""
    return lambda w: not w.startswith(PRINTED_NOT_RECORDED)
