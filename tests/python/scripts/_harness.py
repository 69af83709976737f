"""Runs one script of this folder as `__main__` and records how it ended: the harness of the scripts golden.

    python _harness.py SCRIPT RESULT_JSON

The scripts are PyTorch 1.13 user scripts written as the front end asks (`import tinyddp as torch`, `import
tinyddp.nn as nn`, ...). Whichever `tinyddp` the interpreter imports runs them: tinyddp's own in
tests/python/test_scripts.py; in tests/golden/gen_scripts.py, a stand-in package that resolves `tinyddp` and every
`tinyddp.x.y` to PyTorch's `torch.x.y`. The script's stdout goes straight to this process's stdout (spawned ranks
print there too), and RESULT_JSON receives {"exception": [type name, str] or null, "warnings": [[category name,
message], ...]} for the main thread's run.
"""
import difflib
import json
import os
import re
import runpy
import signal
import subprocess
import sys
import tempfile
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))


def script_names(folder=HERE):
    """The scripts of a folder (this one by default), by name without .py, in order (files starting with _ are
    not scripts)."""
    return sorted(f[:-3] for f in os.listdir(folder) if f.endswith(".py") and not f.startswith("_"))


def normalize(text):
    """Object addresses differ from run to run: "object at 0x7f3a..." is compared as "object at 0x..."."""
    return re.sub(r"object at 0x[0-9a-f]+", "object at 0x...", text)


def run_script(folder, name, pythonpath, timeout):
    """Runs FOLDER/NAME.py through this harness in a fresh interpreter whose `tinyddp` is the one PYTHONPATH
    (a list of folders, first wins) finds: {"stdout", "exception", "warnings"}, as the goldens hold them. The
    generators (with the stand-in that resolves to torch) and the tests (with tinyddp) both run scripts so."""
    with tempfile.TemporaryDirectory() as tmp:
        result_path = os.path.join(tmp, "result.json")
        env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", PYTHONPATH=os.pathsep.join(pythonpath))
        # A session of its own, so that a timeout ends the ranks and launchers the script started too.
        proc = subprocess.Popen([sys.executable, os.path.join(HERE, "_harness.py"), name + ".py", result_path],
                                cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                                start_new_session=True)
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise
        if proc.returncode != 0 or not os.path.exists(result_path):
            raise RuntimeError(f"{name}: the harness failed ({proc.returncode}):\n{stderr}")
        with open(result_path) as f:
            result = json.load(f)
    return {"stdout": normalize(stdout), "exception": result["exception"], "warnings": result["warnings"]}


def differences(golden, ours):
    """What differs between two runs of run_script, as text ("" when nothing): a unified diff of stdout,
    then the exceptions and the warnings."""
    out = "".join(difflib.unified_diff(golden["stdout"].splitlines(True), ours["stdout"].splitlines(True),
                                       "pytorch", "tinyddp"))
    for key in ("exception", "warnings"):
        if golden[key] != ours[key]:
            out += f"{key}:\n  pytorch: {golden[key]}\n  tinyddp: {ours[key]}\n"
    return out


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
