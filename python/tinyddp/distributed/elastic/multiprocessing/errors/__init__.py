"""torch.distributed.elastic.multiprocessing.errors.record: the decorator torchrun scripts put on main(). An
exception escaping the function is written, as 1.13's ErrorHandler writes it, to the JSON file named by
TORCHELASTIC_ERROR_FILE (set by torchrun for each worker; without it nothing is written), then re-raised."""
import functools
import json
import os
import time
import traceback

__all__ = ["record"]


def _write_error_file(e):
    path = os.environ.get("TORCHELASTIC_ERROR_FILE")
    if path is None:
        return
    data = {"message": {"message": f"{type(e).__name__}: {e}",
                        "extraInfo": {"py_callstack": traceback.format_exc(), "timestamp": str(int(time.time()))}}}
    with open(path, "w") as f:
        json.dump(data, f)


def record(fn, error_handler=None):
    """fn, whose escaping exceptions are recorded (above) and re-raised; SystemExit passes through untouched."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except Exception as e:
            _write_error_file(e)
            raise
    return wrapper
