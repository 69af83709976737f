"""The cases of optim_groups.json, written once for both sides: gen_optim_groups.py runs them on PyTorch 1.13
and records what they give, tests/python/test_optim.py runs them on tinyddp and compares.

cases(torch) builds every piece over the module it is given (torch or tinyddp): the interpreter of a run (build,
execute), the lr traces of the schedulers, the calls that must raise or warn. Only the data (gen_optim_groups.py's
RUNS, the epochs and metrics of the traces) lives in the golden file.
"""
import collections
import types
import warnings


class HalfEvery:
    """A callable object: LambdaLR saves its __dict__ in state_dict (a function is saved as None)."""

    def __init__(self, every):
        self.every = every

    def __call__(self, epoch):
        return 0.5 ** (epoch // self.every)


# LambdaLR/MultiplicativeLR functions, by name
LAMBDAS = {
    "inverse": lambda e: 1.0 / (e + 1),
    "decay09": lambda e: 0.9 ** e,
    "half_every_2": HalfEvery(2),
    "times095": lambda e: 0.95,
}


def cases(torch):
    """The interpreter and the tables, over `torch` (a module with PyTorch 1.13's optim API)."""
    S = torch.optim.lr_scheduler
    DTYPES = {"float32": torch.float32, "float64": torch.float64}

    def encode(x):
        if torch.is_tensor(x):
            return {"tensor": x.tolist(), "dtype": str(x.dtype)}
        if isinstance(x, collections.Counter):
            return {"counter": [[k, v] for k, v in x.items()]}
        if isinstance(x, dict):
            return {"dict": [[encode(k), encode(v)] for k, v in x.items()]}
        if isinstance(x, tuple):
            return {"tuple": [encode(v) for v in x]}
        if isinstance(x, list):
            return [encode(v) for v in x]
        if callable(x):   # a function or bound method by name; CyclicLR's weakref.WeakMethod by its type
            return {"callable": getattr(x, "__name__", type(x).__name__)}
        assert x is None or isinstance(x, (bool, int, float, str)), type(x)
        return x

    def _group_args(spec_value):
        """JSON lists back to the tuples 1.13 keeps (betas)."""
        return tuple(spec_value) if isinstance(spec_value, list) else spec_value

    def build(run, tensors):
        groups = run["groups"]
        if isinstance(groups[0], str):
            params = [tensors[n] for n in groups]
        else:
            params = [{k: ([tensors[n] for n in v] if k == "params" else _group_args(v)) for k, v in g.items()}
                      for g in groups]
        kwargs = {k: _group_args(v) for k, v in run["kwargs"].items()}
        opt = getattr(torch.optim, run["optimizer"])(params, **kwargs)
        scheds = []
        for cls, skw in run["schedulers"]:
            skw = dict(skw)
            if "lr_lambda" in skw:
                f = skw["lr_lambda"]
                skw["lr_lambda"] = [LAMBDAS[n] for n in f] if isinstance(f, list) else LAMBDAS[f]
            scheds.append(getattr(torch.optim.lr_scheduler, cls)(opt, **skw))
        return opt, scheds

    def execute(run):
        dtype = DTYPES[run["dtype"]]
        tensors = {n: torch.nn.Parameter(torch.tensor(p["values"], dtype=dtype).reshape(p["shape"]))
                   for n, p in run["params"].items()}
        opt, scheds = build(run, tensors)
        records = []
        for i, step in enumerate(run["steps"]):
            for edit in step["edits"]:
                if edit[0] == "set":
                    opt.param_groups[edit[1]][edit[2]] = edit[3]
                elif edit[0] == "add_group":
                    opt.add_param_group({k: ([tensors[n] for n in v] if k == "params" else _group_args(v))
                                         for k, v in edit[1].items()})
                elif edit[0] == "resume":
                    saved, saved_scheds = opt.state_dict(), [s.state_dict() for s in scheds]
                    tensors = {n: torch.nn.Parameter(t.detach().clone()) for n, t in tensors.items()}
                    opt, scheds = build(run, tensors)
                    opt.load_state_dict(saved)
                    for s, sd in zip(scheds, saved_scheds):
                        s.load_state_dict(sd)
            for n, t in tensors.items():
                g = step["grads"].get(n)
                t.grad = None if g is None else torch.tensor(g, dtype=dtype).reshape(t.shape)
            opt.step()
            for s in scheds:
                s.step()
            records.append({"params": {n: t.detach().reshape(-1).tolist() for n, t in tensors.items()},
                            "lrs": [g["lr"] for g in opt.param_groups],
                            "last_lrs": [s.get_last_lr() for s in scheds],
                            "state_dict": encode(opt.state_dict()) if i in (0, 3, len(run["steps"]) - 1) else None,
                            "scheduler_state_dicts": [encode(s.state_dict()) for s in scheds]})
        return records, repr(opt)

    def recorded(fn):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fn()
        return [[str(w.message), w.category.__name__] for w in caught]

    def lr_trace(make_sched, n=8, epochs=None, metrics=None):
        """get_last_lr() after each of n (optimizer.step(), scheduler.step()) pairs, on SGD over two groups with lrs
        0.1 and 0.05; with `epochs`, step(epoch) is called with those epochs (the closed form); with `metrics`,
        step(metric) (ReduceLROnPlateau). Also the scheduler's state_dict and the groups' values at the end, and what
        it warned."""
        a, b = torch.nn.Parameter(torch.ones(1)), torch.nn.Parameter(torch.ones(1))
        opt = torch.optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.05}], lr=0.1)
        out = {}

        def go():
            sched = make_sched(opt)
            lrs = [sched.get_last_lr()] if metrics is None else []   # ReduceLROnPlateau has none before its step
            for i in range(n if metrics is None else len(metrics)):
                opt.step()
                if metrics is not None:
                    sched.step(metrics[i])
                elif epochs is not None:
                    sched.step(epochs[i])
                else:
                    sched.step()
                # (1.13's ReduceLROnPlateau has no get_last_lr())
                lrs.append(sched.get_last_lr() if metrics is None else [g["lr"] for g in opt.param_groups])
            out["lrs"] = lrs
            out["state_dict"] = encode(sched.state_dict())
            out["groups"] = encode([{k: v for k, v in g.items() if k != "params"} for g in opt.param_groups])
        out["warnings"] = recorded(go)
        return out

    SCHEDULES = {
        "StepLR": lambda o: S.StepLR(o, step_size=3, gamma=0.3),
        "MultiStepLR": lambda o: S.MultiStepLR(o, milestones=[1, 4, 4, 6], gamma=0.7),
        "ExponentialLR": lambda o: S.ExponentialLR(o, gamma=0.85),
        "CosineAnnealingLR": lambda o: S.CosineAnnealingLR(o, T_max=3, eta_min=0.001),
        "LinearLR": lambda o: S.LinearLR(o, start_factor=0.1, end_factor=0.9, total_iters=5),
        "ConstantLR": lambda o: S.ConstantLR(o, factor=0.25, total_iters=3),
        "PolynomialLR": lambda o: S.PolynomialLR(o, total_iters=6, power=2.0),
        "LambdaLR": lambda o: S.LambdaLR(o, lr_lambda=LAMBDAS["inverse"]),
        "MultiplicativeLR": lambda o: S.MultiplicativeLR(o, lr_lambda=[LAMBDAS["times095"], LAMBDAS["decay09"]]),
        "SequentialLR": lambda o: S.SequentialLR(o, [S.ConstantLR(o, factor=0.5, total_iters=2),
                                                     S.ExponentialLR(o, gamma=0.9)], milestones=[3]),
        "ChainedScheduler": lambda o: S.ChainedScheduler([S.ExponentialLR(o, gamma=0.9),
                                                          S.StepLR(o, step_size=2, gamma=0.5)]),
        "CosineAnnealingWarmRestarts": lambda o: S.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=2, eta_min=0.01),
        "CosineAnnealingWarmRestarts-Tmult1": lambda o: S.CosineAnnealingWarmRestarts(o, T_0=3),
        "OneCycleLR": lambda o: S.OneCycleLR(o, max_lr=[1.0, 0.5], total_steps=10),
        # resumed with last_epoch > 0 over groups that carry initial_lr (set by a first scheduler here)
        "CosineAnnealingLR-resumed": lambda o: (S.CosineAnnealingLR(o, T_max=6),
                                                S.CosineAnnealingLR(o, T_max=6, eta_min=0.01, last_epoch=4))[1],
        "StepLR-resumed": lambda o: (S.StepLR(o, 2), S.StepLR(o, step_size=2, gamma=0.5, last_epoch=3))[1],
        "CyclicLR": lambda o: S.CyclicLR(o, base_lr=0.01, max_lr=[0.1, 0.2], step_size_up=2, step_size_down=3),
        "CyclicLR-triangular2": lambda o: S.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=2, mode="triangular2",
                                                     cycle_momentum=False),
        "CyclicLR-exp-range": lambda o: S.CyclicLR(o, base_lr=[0.01, 0.02], max_lr=0.1, step_size_up=1,
                                                   mode="exp_range", gamma=0.9, base_momentum=0.7, max_momentum=[0.8, 0.95]),
        "CyclicLR-scale-fn": lambda o: S.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=3,
                                                  scale_fn=LAMBDAS["inverse"], scale_mode="iterations"),
        "OneCycleLR-three-phase-linear": lambda o: S.OneCycleLR(o, max_lr=0.8, epochs=3, steps_per_epoch=3,
                                                                pct_start=0.4, anneal_strategy="linear",
                                                                three_phase=True, base_momentum=0.8),
    }
    # ReduceLROnPlateau: step(metric) with the metrics of the golden
    PLATEAUS = {
        "ReduceLROnPlateau": lambda o: S.ReduceLROnPlateau(o, patience=2, cooldown=1, factor=0.5, min_lr=[0.02, 0.0]),
        "ReduceLROnPlateau-max-abs": lambda o: S.ReduceLROnPlateau(o, mode="max", threshold_mode="abs", threshold=0.01,
                                                                   patience=1, verbose=True),
    }

    def _p():
        return torch.nn.Parameter(torch.ones(2))

    def _sgd():
        return torch.optim.SGD([_p()], lr=0.1)

    def _resumed_without_initial_lr():
        S.StepLR(_sgd(), step_size=1, last_epoch=3)

    def _load_groups_mismatch():
        _sgd().load_state_dict(torch.optim.SGD([{"params": [_p()]}, {"params": [_p()]}], lr=0.1).state_dict())

    def _onecycle_past_the_end():
        o = _sgd()
        s = S.OneCycleLR(o, max_lr=0.1, total_steps=2)
        for _ in range(3):
            o.step()
            s.step()

    def _load_size_mismatch():
        _sgd().load_state_dict(torch.optim.SGD([_p(), _p()], lr=0.1).state_dict())

    ERRORS = {
        "param-in-two-groups": lambda: (lambda p: torch.optim.SGD([{"params": [p]}, {"params": p}], lr=0.1))(_p()),
        "add-group-overlap": lambda: (lambda p: torch.optim.Adam([p]).add_param_group({"params": [p], "lr": 1.0}))(
            _p()),
        "missing-lr": lambda: torch.optim.SGD([{"params": [_p()]}]),
        "missing-lr-second-group": lambda: torch.optim.SGD([{"params": [_p()], "lr": 0.1}, {"params": [_p()]}]),
        "empty": lambda: torch.optim.AdamW([]),
        "set-of-params": lambda: torch.optim.SGD([{"params": {_p()}}], lr=0.1),
        "tensor-as-params": lambda: torch.optim.SGD(_p(), lr=0.1),
        "not-a-tensor": lambda: torch.optim.SGD([_p(), 3], lr=0.1),
        "dict-after-tensor": lambda: torch.optim.SGD([_p(), {"params": [_p()]}], lr=0.1),
        "non-leaf": lambda: torch.optim.SGD([_p() * 2], lr=0.1),
        "group-not-a-dict": lambda: _sgd().add_param_group([_p()]),
        "group-without-params": lambda: torch.optim.SGD([{"lr": 0.1}], lr=0.1),
        "load-groups-mismatch": _load_groups_mismatch,
        "load-size-mismatch": _load_size_mismatch,
        "adamw-negative-wd": lambda: torch.optim.AdamW([_p()], weight_decay=-0.1),
        "adamw-bad-beta": lambda: torch.optim.AdamW([_p()], betas=(0.9, 1.0)),
        "adamw-bad-eps": lambda: torch.optim.AdamW([_p()], eps=-1),
        "scheduler-not-optimizer": lambda: S.StepLR("opt", step_size=1),
        "scheduler-resume-without-initial-lr": _resumed_without_initial_lr,
        "lambdalr-count": lambda: S.LambdaLR(_sgd(), lr_lambda=[LAMBDAS["inverse"]] * 2),
        "constantlr-factor": lambda: S.ConstantLR(_sgd(), factor=1.5),
        "linearlr-start": lambda: S.LinearLR(_sgd(), start_factor=-0.1),
        "linearlr-end": lambda: S.LinearLR(_sgd(), end_factor=2),
        "sequentiallr-milestones": lambda: (lambda o: S.SequentialLR(o, [S.StepLR(o, 1)], milestones=[2]))(_sgd()),
        "sequentiallr-other-optimizer": lambda: (lambda o: S.SequentialLR(o, [S.StepLR(_sgd(), 1)], milestones=[]))(
            _sgd()),
        "plateau-factor": lambda: S.ReduceLROnPlateau(_sgd(), factor=1.0),
        "plateau-mode": lambda: S.ReduceLROnPlateau(_sgd(), mode="lowest"),
        "plateau-threshold-mode": lambda: S.ReduceLROnPlateau(_sgd(), threshold_mode="ratio"),
        "plateau-min-lrs": lambda: S.ReduceLROnPlateau(_sgd(), min_lr=[0.1, 0.2]),
        "warm-restarts-T0": lambda: S.CosineAnnealingWarmRestarts(_sgd(), T_0=0),
        "warm-restarts-Tmult": lambda: S.CosineAnnealingWarmRestarts(_sgd(), T_0=2, T_mult=1.5),
        "warm-restarts-negative-epoch": lambda: S.CosineAnnealingWarmRestarts(_sgd(), T_0=2).step(-1),
        "onecycle-no-length": lambda: S.OneCycleLR(_sgd(), max_lr=0.1),
        "onecycle-total-steps": lambda: S.OneCycleLR(_sgd(), max_lr=0.1, total_steps=0),
        "onecycle-pct-start": lambda: S.OneCycleLR(_sgd(), max_lr=0.1, total_steps=4, pct_start=1),
        "onecycle-strategy": lambda: S.OneCycleLR(_sgd(), max_lr=0.1, total_steps=4, anneal_strategy="exp"),
        "onecycle-max-lrs": lambda: S.OneCycleLR(_sgd(), max_lr=[0.1, 0.2], total_steps=4),
        "onecycle-past-the-end": _onecycle_past_the_end,
        "cyclic-mode": lambda: S.CyclicLR(_sgd(), base_lr=0.1, max_lr=1.0, mode="sawtooth"),
        "cyclic-no-momentum": lambda: S.CyclicLR(torch.optim.Adam([_p()]), base_lr=0.1, max_lr=1.0),
        "onecycle-no-momentum": lambda: S.OneCycleLR(torch.optim.Optimizer([_p()], {"lr": 0.1}), max_lr=1.0,
                                                     total_steps=3),
    }

    def _scheduler_before_optimizer():
        o = _sgd()
        s = S.StepLR(o, step_size=1)
        s.step()
        o.step()
        s.step()

    def _optimizer_step_replaced():
        o = _sgd()
        s = S.ExponentialLR(o, gamma=0.5)
        o.step = lambda closure=None: None
        o.step()
        s.step()

    def _get_lr_directly():
        S.StepLR(_sgd(), step_size=1).get_lr()

    def _in_order():
        o = _sgd()
        s = S.StepLR(o, step_size=1)
        for _ in range(3):
            o.step()
            s.step()

    def _epoch_argument():
        o = _sgd()
        s = S.StepLR(o, step_size=1)
        o.step()
        s.step(4)

    def _duplicate_in_group():
        p = _p()
        torch.optim.SGD([{"params": [p, p]}], lr=0.1)

    def _verbose():
        o = _sgd()
        s = S.StepLR(o, step_size=1, verbose=True)
        o.step()
        s.step()
        s.step(3)

    WARNINGS = {
        "scheduler-before-optimizer": _scheduler_before_optimizer,
        "optimizer-step-replaced": _optimizer_step_replaced,
        "get-lr-directly": _get_lr_directly,
        "in-order": _in_order,
        "epoch-argument": _epoch_argument,
        "duplicate-in-group": _duplicate_in_group,
        "verbose": _verbose,
    }

    return types.SimpleNamespace(encode=encode, execute=execute, recorded=recorded, lr_trace=lr_trace,
                                 SCHEDULES=SCHEDULES, PLATEAUS=PLATEAUS, ERRORS=ERRORS, WARNINGS=WARNINGS)
