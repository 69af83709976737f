"""Runs one script of this folder as `__main__` and records how it ended: the harness of the scripts golden.

    python _harness.py SCRIPT RESULT_JSON

The scripts are PyTorch 1.13 user scripts written as the front end asks (`import tinyddp as torch`, `import
tinyddp.nn as nn`, ...). Whichever `tinyddp` the interpreter imports runs them: tinyddp's own in
tests/python/test_scripts.py; in tests/golden/gen_scripts.py, a stand-in package that resolves `tinyddp` and every
`tinyddp.x.y` to PyTorch's `torch.x.y`. The script's stdout goes straight to this process's stdout (spawned ranks
print there too), and RESULT_JSON receives {"exception": [type name, str] or null, "warnings": [[category name,
message], ...]} for the main thread's run.
"""
import json
import os
import re
import runpy
import sys
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))


def script_names():
    """The scripts of this folder, by name without .py, in order (files starting with _ are not scripts)."""
    return sorted(f[:-3] for f in os.listdir(HERE) if f.endswith(".py") and not f.startswith("_"))


def normalize(text):
    """Object addresses differ from run to run: "object at 0x7f3a..." is compared as "object at 0x..."."""
    return re.sub(r"object at 0x[0-9a-f]+", "object at 0x...", text)


def main():
    script, result_path = sys.argv[1:3]
    import tinyddp  # noqa: F401  (imported before the script's warnings are recorded)
    sys.argv = [script]
    result = {"exception": None, "warnings": []}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            runpy.run_path(script, run_name="__main__")
        except Exception as e:  # noqa: BLE001  (recorded, then compared)
            result["exception"] = [type(e).__name__, normalize(str(e))]
    sys.stdout.flush()
    result["warnings"] = [[w.category.__name__, normalize(str(w.message))] for w in caught]
    with open(result_path, "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    main()
