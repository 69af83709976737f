"""torch.multiprocessing.spawn, as threads: fn(rank, *args) runs on `nprocs` threads of this process, the ranks of
one dist::ThreadWorld (the "thread" backend). A rank that raises aborts the world, so ranks waiting in collectives
raise too instead of hanging; the first failure is re-raised here as ProcessRaisedException, with the rank and its
traceback in the message, as PyTorch's.

A rank stands for one of 1.13's child processes in what scripts do to their process:
  - warnings: a rank of a PyTorch script ("gloo") prints a warning to stderr as that process prints it (once per
    place, as a fresh interpreter's filters have it), and the spawning thread's warnings.catch_warnings does not
    record it; a rank that records warnings itself (catch_warnings inside the rank) records them. Ranks on
    tinyddp's "thread" backend are threads of this process and raise their warnings as any thread of it does.
  - os.environ: each rank starts from a copy of the environment as spawn found it and changes only its copy
    (`os.environ["LOCAL_RANK"] = str(rank)`, torchrun-style), which C code reading getenv() does not see.
  - builtins.print: a rank that replaces it (DETR's setup_for_distributed silencing the other ranks) replaces
    its own; the others, and the spawning thread, keep theirs.
  - sys.exit(code) in a rank ends that rank: 0 (or None) as a rank that returned, any other code as 1.13's
    ProcessExitedException("process 1 terminated with exit code 3").
  - Python's `random` and NumPy's global generator (`random.seed(seed + rank)`, `np.random.shuffle(...)`): each
    rank draws from its own, seeded from the OS until the rank seeds it, as a fresh process's are.
  - sys.stdout and sys.stderr: a rank that replaces them (`sys.stdout = open(os.devnull, "w")` on the ranks
    but 0) replaces its own; the others, and the spawning thread, keep theirs.
  - a module in `args` (a model built before spawn): each rank gets its own copy of it, as each child process
    unpickles its own, whose parameters and buffers share the parent's storage as 1.13's shared memory does
    (what one rank writes into them the others and the parent see); its own .grad, hooks and DDP wrapper.
    Other arguments are shared as they are (1.13 pickles them: a list a rank appends to stays the parent's
    list here).
"""
import builtins
import collections.abc
import copy
import os
import random
import sys
import threading
import traceback
import types
import warnings

from tinyddp import _C

# Set on spawn's rank threads: there init_process_group("gloo") means the thread backend (tinyddp.distributed).
_rank_thread = threading.local()


class ProcessException(Exception):
    __slots__ = ["error_index", "pid"]

    def __init__(self, msg, error_index, pid):
        super().__init__(msg)
        self.msg, self.error_index, self.pid = msg, error_index, pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid)


class ProcessRaisedException(ProcessException):
    """Raised in the caller when a rank raised; the message holds the rank's traceback."""


class ProcessExitedException(ProcessException):
    """Raised in the caller when a rank ended by sys.exit with a code other than 0."""
    __slots__ = ["exit_code"]

    def __init__(self, msg, error_index, error_pid, exit_code, signal_name=None):
        super().__init__(msg, error_index, error_pid)
        self.exit_code, self.signal_name = exit_code, signal_name

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid, self.exit_code, self.signal_name)


class _RankEnviron(collections.abc.MutableMapping):
    """os.environ while ranks run: on a rank thread, that rank's own copy; elsewhere the process's."""

    def __init__(self, real):
        self._real = real

    def _current(self):
        own = getattr(_rank_thread, "environ", None)
        return self._real if own is None else own

    def __getitem__(self, key):
        return self._current()[key]

    def __setitem__(self, key, value):
        for v in (key, value):   # os.environ's own check
            if not isinstance(v, str):
                raise TypeError(f"str expected, not {type(v).__name__}")
        self._current()[key] = value

    def __delitem__(self, key):
        del self._current()[key]

    def __iter__(self):
        return iter(list(self._current()))

    def __len__(self):
        return len(self._current())

    def __repr__(self):
        return f"environ({dict(self._current())!r})"

    def copy(self):
        return dict(self._current())


class _RankBuiltins(types.ModuleType):
    """The builtins module while ranks run: `builtins.print = f` on a rank thread replaces that rank's print, and
    reading builtins.print there gives the rank's current one (so a wrapper that calls it does not call itself);
    the print every frame finds (builtins' dict) dispatches to the calling rank's."""

    def __setattr__(self, name, value):
        if name == "print" and getattr(_rank_thread, "active", False):
            _rank_thread.print = value
        else:
            super().__setattr__(name, value)

    def __getattribute__(self, name):
        if name == "print" and getattr(_rank_thread, "active", False):
            return getattr(_rank_thread, "print", _process_print)
        return super().__getattribute__(name)


_process_print = builtins.print


def _rank_print(*args, **kwargs):
    return getattr(_rank_thread, "print", _process_print)(*args, **kwargs)


_STREAMS = ("stdout", "stderr")
_streams_of_ended_ranks = []


class _RankSys(types.ModuleType):
    """The sys module while ranks run: `sys.stdout = f` on a rank thread replaces that rank's stream, and reading
    sys.stdout there gives it; what C code (print) reads from sys's dict is a _RankStream, which writes to the
    calling rank's stream."""

    def __setattr__(self, name, value):
        if name in _STREAMS and getattr(_rank_thread, "active", False):
            setattr(_rank_thread, name, value)
        else:
            super().__setattr__(name, value)

    def __getattribute__(self, name):
        if name in _STREAMS and getattr(_rank_thread, "active", False):
            own = getattr(_rank_thread, name, None)
            if own is not None:
                return own
        return super().__getattribute__(name)


class _RankStream:
    """sys.stdout (or stderr) while ranks run: the calling rank's own stream if it set one, else the process's."""

    def __init__(self, name, process_stream):
        self._name, self._process_stream = name, process_stream

    def _target(self):
        own = getattr(_rank_thread, self._name, None) if getattr(_rank_thread, "active", False) else None
        return self._process_stream if own is None else own

    def write(self, text):
        return self._target().write(text)

    def flush(self):
        return self._target().flush()

    def __getattr__(self, name):
        return getattr(self._target(), name)


# The module-level functions of `random` and `numpy.random` that draw from, seed or read the global generator.
_PY_RANDOM = ("seed", "random", "uniform", "triangular", "randint", "choice", "randrange", "sample", "shuffle",
              "choices", "normalvariate", "lognormvariate", "expovariate", "vonmisesvariate", "gammavariate", "gauss",
              "betavariate", "paretovariate", "weibullvariate", "getstate", "setstate", "getrandbits", "randbytes")
_NP_RANDOM = ("seed", "get_state", "set_state", "rand", "randn", "randint", "random_integers", "random_sample",
              "random", "ranf", "sample", "choice", "bytes", "shuffle", "permutation", "beta", "binomial", "chisquare",
              "dirichlet", "exponential", "f", "gamma", "geometric", "gumbel", "hypergeometric", "laplace", "logistic",
              "lognormal", "logseries", "multinomial", "multivariate_normal", "negative_binomial", "normal", "pareto",
              "poisson", "power", "rayleigh", "standard_cauchy", "standard_exponential", "standard_gamma",
              "standard_normal", "standard_t", "triangular", "uniform", "vonmises", "wald", "weibull", "zipf")


def _per_rank_generator(name, process_fn, key, make):
    """`name` of random or numpy.random on a rank thread: the same method of that rank's own generator (made by `make` at first use);
    elsewhere the process's."""
    def fn(*args, **kwargs):
        if not getattr(_rank_thread, "active", False):
            return process_fn(*args, **kwargs)
        own = _rank_thread.__dict__.get(key)
        if own is None:
            own = _rank_thread.__dict__[key] = make()
        return getattr(own, name)(*args, **kwargs)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = process_fn.__doc__
    return fn


class _ranks_as_processes:
    """While ranks run: each has its own os.environ, builtins.print, sys.stdout and sys.stderr, and Python's and
    NumPy's global random generators (the module's notes)."""

    def __enter__(self):
        import numpy
        self._generators = []   # (module, name, the process's function)
        for module, names, key, make in ((random, _PY_RANDOM, "py_random", random.Random),
                                         (numpy.random, _NP_RANDOM, "np_random", numpy.random.RandomState)):
            for name in names:
                if hasattr(module, name):
                    process_fn = getattr(module, name)
                    self._generators.append((module, name, process_fn))
                    setattr(module, name, _per_rank_generator(name, process_fn, key, make))
        self._environ = os.environ
        os.environ = _RankEnviron(self._environ)
        self._print = builtins.print
        builtins.print = _rank_print
        builtins.__class__ = _RankBuiltins
        self._streams = {name: getattr(sys, name) for name in _STREAMS}
        for name, stream in self._streams.items():
            setattr(sys, name, _RankStream(name, stream))
        sys.__class__ = _RankSys
        return self

    def __exit__(self, *exc):
        for module, name, process_fn in self._generators:
            setattr(module, name, process_fn)
        sys.__class__ = types.ModuleType
        for name, stream in self._streams.items():
            setattr(sys, name, stream)
        builtins.__class__ = types.ModuleType
        builtins.print = self._print
        os.environ = self._environ
        return None


def _rank_copy(value, memo):
    """value as a rank receives it: a module copied with its tensors aliased (see the module's notes), within
    tuples, lists and dicts too; anything else as it is."""
    from tinyddp.nn import Module, Parameter
    if isinstance(value, Module):
        for p in value.parameters():
            memo.setdefault(id(p), Parameter(p.detach(), p.requires_grad))
        for b in value.buffers():
            memo.setdefault(id(b), b.detach())
        return copy.deepcopy(value, memo)
    if isinstance(value, (tuple, list)):
        copied = [_rank_copy(v, memo) for v in value]
        if all(c is v for c, v in zip(copied, value)):
            return value
        return type(value)(copied) if type(value) in (tuple, list) else value
    if isinstance(value, dict):
        copied = {k: _rank_copy(v, memo) for k, v in value.items()}
        return copied if any(copied[k] is not v for k, v in value.items()) else value
    return value


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn", timeout=None):
    """Runs fn(rank, *args) for rank in range(nprocs) and returns when all ranks ended. `timeout` (seconds)
    bounds each collective wait of the ranks' group (default 60 s, dist::kDefaultTimeout)."""
    if not join:
        raise NotImplementedError("spawn(join=False): tinyddp's ranks are threads joined by spawn; use join=True.")
    failures = []   # (rank, traceback text) in the order the ranks failed
    lock = threading.Lock()
    # What each of 1.13's child processes reads from TORCH_DISTRIBUTED_DEBUG when it imports torch: the
    # environment as spawn found it (a rank that sets the variable afterwards changes nothing).
    try:
        debug_level, debug_error = _C._dist.debug_level_from_env(), None
    except RuntimeError as e:
        debug_level, debug_error = None, e

    environ = dict(os.environ)   # what each child process inherits
    rank_args = [_rank_copy(tuple(args), {}) for _ in range(nprocs)]

    def _wrap(i):   # 1.13's names: the rank's traceback starts with "in _wrap\n    fn(i, *args)" as there
        args = rank_args[i]
        for name in _STREAMS:   # a fresh process's streams (a thread that ran an earlier rank kept its own)
            setattr(_rank_thread, name, None)
        for key in ("print", "py_random", "np_random"):
            _rank_thread.__dict__.pop(key, None)
        _rank_thread.active = True
        _rank_thread.rank = i
        _rank_thread.debug_level = debug_level
        _rank_thread.environ = dict(environ)
        try:
            if debug_error is not None:
                raise RuntimeError(str(debug_error))
            fn(i, *args)
        except SystemExit as e:   # the child process exits with this code
            code = e.code if isinstance(e.code, int) or e.code is None else 1
            if e.code is not None and not isinstance(e.code, int):
                print(e.code, file=sys.stderr)   # as the interpreter prints sys.exit("message")
            if code:
                with lock:
                    failures.append((i, code))
                raise
        except BaseException:
            with lock:
                failures.append((i, traceback.format_exc()))
            raise
        finally:
            # A stream the rank opened for itself stays open, as a child process's does until it exits (closing
            # it here, or letting the thread's end collect it, would be this process's ResourceWarning).
            _streams_of_ended_ranks.extend(s for s in (getattr(_rank_thread, name, None) for name in _STREAMS)
                                           if s is not None)

    with _warnings_of_child_processes(), _ranks_as_processes():
        _C._dist.run_threads(nprocs, _wrap, float(timeout or 0))
    if failures:
        rank, failure = failures[0]
        if isinstance(failure, int):
            raise ProcessExitedException("process %d terminated with exit code %d" % (rank, failure), rank,
                                         threading.get_native_id(), failure)
        msg = "\n\n-- Process %d terminated with the following error:\n" % rank + failure
        raise ProcessRaisedException(msg, rank, threading.get_native_id())


# The categories a fresh interpreter's default filters ignore (DeprecationWarning is shown from __main__ only).
_IGNORED_IN_A_FRESH_PROCESS = (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning)


class _warnings_of_child_processes:
    """While ranks run: a warning raised on a rank thread that stands for a process (see the module's notes)
    goes to stderr, not to warnings' current destination."""

    def __enter__(self):
        self._show = warnings._showwarnmsg
        # What warnings' destination is now: a rank that changes it (catch_warnings) records its own warnings.
        self._destination = (warnings._showwarnmsg_impl, warnings.showwarning)
        self._shown = set()   # (rank, text, category, filename, lineno): the "default" action's once per place
        self._lock = threading.Lock()
        warnings._showwarnmsg = self._dispatch
        return self

    def __exit__(self, *exc):
        if warnings._showwarnmsg == self._dispatch:
            warnings._showwarnmsg = self._show
        return None

    def _dispatch(self, msg):
        own_process = getattr(_rank_thread, "active", False) and getattr(_rank_thread, "backend", None) != "thread"
        if not own_process or (warnings._showwarnmsg_impl, warnings.showwarning) != self._destination:
            return self._show(msg)
        if issubclass(msg.category, _IGNORED_IN_A_FRESH_PROCESS) and not (
                issubclass(msg.category, DeprecationWarning) and
                msg.filename == getattr(sys.modules.get("__main__"), "__file__", None)):
            return None
        key = (getattr(_rank_thread, "rank", None), str(msg.message), msg.category, msg.filename, msg.lineno)
        with self._lock:
            if key in self._shown:
                return None
            self._shown.add(key)
        sys.stderr.write(warnings._formatwarnmsg(msg))
        return None
