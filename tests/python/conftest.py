# pytest configuration for tests/python: run through CTest (label `python`) with PYTHONPATH=<build>/python and
# TINYDDP_BIN=<the tinyddp command>; by hand: PYTHONPATH=build/python TINYDDP_BIN=build/apps/tinyddp \
#   /usr/bin/python3 -m pytest tests/python
import os

import pytest


@pytest.fixture
def tinyddp_bin():
    path = os.environ.get("TINYDDP_BIN", os.path.join(os.path.dirname(__file__), "..", "..", "build", "apps", "tinyddp"))
    if not os.path.exists(path):
        pytest.skip(f"the tinyddp command is not built ({path})")
    return path
