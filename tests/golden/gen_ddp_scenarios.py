"""Behavioural reference for tinyddp's reducer: run the `tinyddp repro` scenarios
on real PyTorch DistributedDataParallel (gloo, 2 ranks on 127.0.0.1) and record
what happened, error for error.

Writes ddp_scenarios.json next to this script. Run by hand, from anywhere:

    /usr/bin/python3 tests/golden/gen_ddp_scenarios.py            # all runs
    /usr/bin/python3 tests/golden/gen_ddp_scenarios.py --only ID  # one run, JSON to stdout

How a run works
- The driver imports torch once and forks one child process per rank (a
  fresh interpreter per rank costs seconds; nothing has started a thread
  before the fork, and each child re-reads TORCH_DISTRIBUTED_DEBUG with
  dist.set_debug_level_from_env() because torch parses it at import). Each rank executes the plan and appends one JSON
  line per event to its own log file; C++ log lines (std::cerr) go to a per-rank
  stderr file in which the worker writes a marker line before every plan call,
  so each stderr line is attributed to the call that printed it.
- After a rank has finished (ok, or at its first exception) it stays alive
  until the driver releases it, so that no peer sees a closed connection.
  A rank that has not logged anything for HANG_GRACE_S seconds while another
  rank has finished is stuck (in a collective): the driver then releases the
  finished ranks, which exit and so close their gloo connections, and gives
  the stuck rank PEER_EXIT_WAIT_S seconds to raise what gloo raises (recorded
  as its error, at the call it was inside); a rank still silent after that is
  recorded as hung (with that call) and killed. The gloo timeout
  (init_process_group(timeout=20 s)) never fires. Every rank's own outcome is
  recorded (errors_by_rank, outcome_by_rank, hung_ranks).
- Cross-rank comparisons (grads_in_sync, replicas_in_sync) are made by the
  driver from SHA-1 digests of each tensor's raw bytes that every rank logs,
  not with an allgather: a collective issued after an error could hang or be
  matched against the reducer's own pending allreduce. Equal digests means
  bitwise identical.

Model, data and plan language: ../shared/DESIGN.md (models/, apps/), extended
as `tinyddp repro --help` and apps/tinyddp/repro/plan.h say (forward flags, t_outside, @K, grad, freeze,
rank{}, iter{}; options buffer, broadcast_buffers, per-rank iterations, join; option gan: a second
model, a discriminator in its own DDP, with steps disc(...), disc_step and terms d_real, d_fake, g_adv).
`forward(detach)` returns (a, b, t) where head_b and text_decoder read
trunk(x).detach() (graph separation for the detach-split scenario).
gen_ddp_patterns.py runs the same machinery on its own list of runs.
"""
import argparse
import hashlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # keep __pycache__ out of tests/golden

HERE = os.path.dirname(os.path.abspath(__file__))
WORLD = 2
HANG_GRACE_S = 5.0      # a rank idle this long after a peer finished is stuck: the finished ranks exit
PEER_EXIT_WAIT_S = 5.0  # how long a stuck rank gets to raise once its peers exited; then it is "hung"
ALL_IDLE_S = 60.0       # nobody finished and nobody logged for this long
PG_TIMEOUT_S = 20
MARK = "@@tinyddp-golden@@ "

PARAM_NAMES = ["trunk.0.weight", "trunk.0.bias", "trunk.2.weight", "trunk.2.bias",
               "head_a.weight", "head_a.bias", "head_b.weight", "head_b.bias",
               "text_decoder.weight", "text_decoder.bias"]

# ---------------------------------------------------------------------------
# The runs. Each: id, scenario (base name), plan, options. Options:
#   find_unused (bool), static_graph (bool), debug (OFF|INFO|DETAIL),
#   extra_unused_parameter (bool), same_data (bool), iterations (int, 3)
# ---------------------------------------------------------------------------
TWO_BWD = "forward; backward(a, retain); backward(b+t); step"
COMBINED = "forward; backward(a+b+t); step"


def R(id_, scenario, plan, note, **opts):
    o = {"find_unused_parameters": False, "static_graph": False, "debug": "OFF",
         "extra_unused_parameter": False, "same_data": False, "iterations": 3,
         "bucket_cap_mb": 25}
    for k, v in opts.items():
        assert k in o, k
        o[k] = v
    return {"id": id_, "scenario": scenario, "plan": plan, "options": o, "note": note}


RUNS = [
    R("two-backward", "two-backward", TWO_BWD,
      "two losses on one forward, backpropagated separately (retain_graph on the first)"),
    R("two-backward/debug-INFO", "two-backward", TWO_BWD, "as two-backward, TORCH_DISTRIBUTED_DEBUG=INFO",
      debug="INFO"),
    R("two-backward/debug-DETAIL", "two-backward", TWO_BWD, "as two-backward, TORCH_DISTRIBUTED_DEBUG=DETAIL",
      debug="DETAIL"),
    R("find-unused", "find-unused", TWO_BWD, "two-backward with find_unused_parameters=True",
      find_unused_parameters=True),
    R("find-unused/debug-DETAIL", "find-unused", TWO_BWD, "as find-unused, TORCH_DISTRIBUTED_DEBUG=DETAIL",
      find_unused_parameters=True, debug="DETAIL"),
    R("combined-loss", "combined-loss", COMBINED, "one backward of the summed loss"),
    R("combined-loss/find-unused", "combined-loss", COMBINED,
      "combined-loss with find_unused_parameters=True (nothing is unused)", find_unused_parameters=True),
    R("dummy-loss", "dummy-loss", "forward; backward(a, retain); backward(dummy); backward(b+t); step",
      "the plan as briefed: a separate backward of 0*sum(params) between the two task backwards"),
    R("dummy-loss/dummy-first", "dummy-loss",
      "forward; backward(dummy); backward(a, retain); backward(b+t); step",
      "the dummy backward first (touches every parameter once, so the reducer finalizes before the task backwards)"),
    R("dummy-loss/dummy-last", "dummy-loss",
      "forward; backward(a, retain); backward(b+t); backward(dummy); step",
      "the dummy backward last"),
    R("dummy-loss/find-unused", "dummy-loss",
      "forward; backward(a, retain); backward(dummy); backward(b+t); step",
      "dummy-loss (as briefed) with find_unused_parameters=True", find_unused_parameters=True),
    R("dummy-in-loss", "dummy-in-loss", "forward; backward(a+dummy, retain); backward(b+t); step",
      "the dummy term added to the first task's loss"),
    R("accumulate", "accumulate", "forward; backward(a+b+t, retain); backward(a+b+t); step",
      "accumulation by two backwards of the full loss on one forward (retain_graph), then one step"),
    R("microbatch", "microbatch", "forward; backward(a+b+t); forward; backward(a+b+t); step",
      "documented micro-batch accumulation without no_sync: two forward+backward pairs, then one step"),
    R("no-sync-microbatch", "no-sync-microbatch",
      "no_sync{ forward; backward(a+b+t) }; forward; backward(a+b+t); step",
      "micro-batch accumulation with the first pair inside no_sync()"),
    R("no-sync-microbatch/forward-outside", "no-sync-microbatch",
      "forward; no_sync{ backward(a+b+t) }; forward; backward(a+b+t); step",
      "no_sync() around the first backward only; its forward ran outside the context"),
    R("no-sync-microbatch/backward-outside", "no-sync-microbatch",
      "no_sync{ forward }; backward(a+b+t); forward; backward(a+b+t); step",
      "no_sync() around the first forward only; its backward ran outside the context"),
    R("no-sync-microbatch/last-inside", "no-sync-microbatch",
      "forward; backward(a+b+t); no_sync{ forward; backward(a+b+t) }; step",
      "the LAST pair inside no_sync() (no synchronizing pass before step)"),
    R("detach-split", "detach-split", "forward(detach); backward(a); backward(b+t); step",
      "graph separation: head_b/text_decoder read trunk(x).detach(); task a's backward reaches the trunk,"
      " the b+t backward only the heads; two backwards, no retain needed"),
    R("detach-split/find-unused", "detach-split", "forward(detach); backward(a); backward(b+t); step",
      "detach-split with find_unused_parameters=True", find_unused_parameters=True),
    R("unused-param", "unused-param", COMBINED, "parameter unused_scale (index 0) never used by forward",
      extra_unused_parameter=True),
    R("unused-param/debug-INFO", "unused-param", COMBINED, "as unused-param, TORCH_DISTRIBUTED_DEBUG=INFO",
      extra_unused_parameter=True, debug="INFO"),
    R("unused-param/debug-DETAIL", "unused-param", COMBINED, "as unused-param, TORCH_DISTRIBUTED_DEBUG=DETAIL",
      extra_unused_parameter=True, debug="DETAIL"),
    R("unused-param/find-unused", "unused-param", COMBINED, "unused-param with find_unused_parameters=True",
      extra_unused_parameter=True, find_unused_parameters=True),
    R("unused-param/static-graph", "unused-param", COMBINED, "unused-param with static_graph=True",
      extra_unused_parameter=True, static_graph=True),
    R("static-graph", "static-graph", TWO_BWD, "two-backward with static_graph=True", static_graph=True),
    R("static-graph/debug-DETAIL", "static-graph", TWO_BWD, "as static-graph, TORCH_DISTRIBUTED_DEBUG=DETAIL",
      static_graph=True, debug="DETAIL"),
    R("static-graph/param-dropped", "static-graph",
      "forward; backward(a+b+t); step; forward(no_text); backward(a+b); step",
      "static_graph=True; text_decoder used in the first DDP iteration, unused in the second", static_graph=True),
    R("static-graph/param-dropped/debug-INFO", "static-graph",
      "forward; backward(a+b+t); step; forward(no_text); backward(a+b); step",
      "as static-graph/param-dropped, TORCH_DISTRIBUTED_DEBUG=INFO", static_graph=True, debug="INFO"),
    R("static-graph/param-added", "static-graph",
      "forward(no_text); backward(a+b); step; forward; backward(a+b+t); step",
      "static_graph=True; text_decoder unused in the first DDP iteration, used in the second", static_graph=True),
    R("static-graph/param-added/debug-DETAIL", "static-graph",
      "forward(no_text); backward(a+b); step; forward; backward(a+b+t); step",
      "as static-graph/param-added, TORCH_DISTRIBUTED_DEBUG=DETAIL", static_graph=True, debug="DETAIL"),
    R("no-text", "no-text", "forward(no_text); backward(a+b); step", "text decoder not called"),
    R("no-text/debug-INFO", "no-text", "forward(no_text); backward(a+b); step",
      "as no-text, TORCH_DISTRIBUTED_DEBUG=INFO", debug="INFO"),
    R("no-text/find-unused", "no-text", "forward(no_text); backward(a+b); step",
      "no-text with find_unused_parameters=True", find_unused_parameters=True),
    R("no-text/static-graph", "no-text", "forward(no_text); backward(a+b); step",
      "no-text with static_graph=True", static_graph=True),
    R("drop-text", "drop-text", "forward(drop_text); backward(a+b); step",
      "text decoder runs, its output is discarded inside forward"),
    R("drop-text/find-unused", "drop-text", "forward(drop_text); backward(a+b); step",
      "drop-text with find_unused_parameters=True", find_unused_parameters=True),
    R("unused-output", "unused-output", "forward; backward(a+b); step",
      "t is returned by forward but not used in the loss"),
    R("unused-output/find-unused", "unused-output", "forward; backward(a+b); step",
      "unused-output with find_unused_parameters=True", find_unused_parameters=True),
    R("find-unused/forward-without-backward", "find-unused", "forward; forward; backward(a+b+t); step",
      "find_unused_parameters=True; the first forward's outputs get no backward (PyTorch marks unused "
      "parameters at the first hook, not in prepare_for_backward, because the output may be ignored)",
      find_unused_parameters=True),
    R("find-unused/forward-without-backward-no-text", "find-unused",
      "forward(no_text); forward; backward(a+b+t); step",
      "as find-unused/forward-without-backward, the ignored forward skipping the text decoder: its unused "
      "parameters must not be marked ready before a hook fires, or the next forward raises", find_unused_parameters=True),
    R("combined-loss/forward-without-backward", "combined-loss", "forward; forward; backward(a+b+t); step",
      "without find_unused_parameters: a forward whose outputs get no backward, then forward + backward"),
]


NOTES = {
    "runs": "id is unique; scenario is the base name used by `tinyddp repro`; variants add /find-unused, "
            "/static-graph, /debug-INFO|DETAIL or another plan. note says what the plan means.",
    "plan_choices": {
        "dummy-loss": "the plan as briefed (dummy backward between the two task backwards) raises 'marked "
                      "ready twice'; dummy-loss/dummy-first (dummy backward before the task backwards) is the "
                      "version that runs without error and silently leaves grads un-averaged",
        "accumulate": "two backwards of the full loss on ONE forward (retain_graph), then one step",
        "microbatch": "two forward+backward pairs, then one step (no no_sync)",
        "no-sync-microbatch": "the first forward+backward pair inside no_sync(), the second outside, then step",
        "detach-split": "forward(detach): head_b and text_decoder read trunk(x).detach() (plan-language "
                        "extension); backward(a) reaches trunk+head_a, backward(b+t) only the two heads",
    },
    "iterations": "each plan iteration starts with optimizer.zero_grad() (set_to_none=False in 1.13); a plan "
                  "may contain several forwards/steps, so DDP iterations (forwards) and plan iterations differ",
    "raised_at": "'<kind> #<n> of iteration <i>': i counts plan iterations from 1, n counts calls of that kind "
                 "within the plan iteration from 1 (calls inside no_sync{} included)",
    "grads_in_sync": "per parameter after a backward: true = bitwise identical on all ranks, false = differ, "
                     "null = None on every rank. Iteration-level value: after the iteration's last backward "
                     "(data differs per rank, so identical means averaged)",
    "replicas_in_sync": "every parameter bitwise identical across ranks at the end (each rank's last recorded "
                        "state: after the last step, or at its error)",
    "warnings": "distinct texts; Python warnings (none occurred) and C++ stderr log entries of level W/E "
                "without the glog prefix and without c10's 'Warning: ... (function ...)' wrapper; "
                "warnings_detail keeps rank, call, level, file and line. INFO entries (debug levels) are in "
                "info_logs, with lines carrying times/ports/uninitialized values removed",
    "hangs": "a rank idle for 5 s after a peer finished would be listed in hung_ranks and killed; "
             "no run needed it (every error was raised by both ranks at the same call)",
}


# ---------------------------------------------------------------------------
# Plan language
# ---------------------------------------------------------------------------
def _split_top(s, sep):
    parts, depth, cur = [], 0, ""
    for ch in s:
        if ch in "({":
            depth += 1
        elif ch in ")}":
            depth -= 1
        if ch == sep and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    return [p.strip() for p in parts if p.strip()]


TEXT_MODES = ("no_text", "drop_text", "detach")
FORWARD_FLAGS = TEXT_MODES + ("ckpt", "ckpt_nr", "reuse", "features")
MODULES = ("trunk", "trunk.0", "trunk.2", "head_a", "head_b", "text_decoder")
GAN_MODULES = ("disc",)          # freeze(disc) / unfreeze(disc): the discriminator (option gan)
DISC_INPUTS = ("real", "fake", "fake_detached")
DISC_TERMS = ("d_real", "d_fake", "g_adv")   # read the latest disc(...) output, never a forward's: no @K


def parse_expr(e):
    """[(scale, name, K or None)]: K binds the term to forward #K of the plan iteration."""
    terms = []
    for t in e.replace(" ", "").split("+"):
        m = re.fullmatch(r"(?:([0-9.eE+-]+)\*)?(a|b|t|t_outside|dummy|d_real|d_fake|g_adv)(?:@([1-9][0-9]*))?", t)
        if not m:
            raise ValueError(f"bad term {t!r}")
        if m.group(2) in DISC_TERMS and m.group(3):
            raise ValueError(f"plan: term {m.group(2)} reads the latest disc(...) output and takes no @K")
        terms.append((float(m.group(1)) if m.group(1) else 1.0, m.group(2),
                      int(m.group(3)) if m.group(3) else None))
    return terms


def parse_forward(args):
    """('forward', text mode, ckpt None|'ckpt'|'ckpt_nr', reuse, features)."""
    flags = [f.strip() for f in args.split(",")] if args is not None else []
    for f in flags:
        if f not in FORWARD_FLAGS or flags.count(f) > 1:
            raise ValueError(f"bad forward flag {f!r} (flags: {', '.join(FORWARD_FLAGS)}, each at most once)")
    modes = [f for f in flags if f in TEXT_MODES]
    ckpts = [f for f in flags if f in ("ckpt", "ckpt_nr")]
    if len(modes) > 1 or len(ckpts) > 1:
        raise ValueError(f"forward({args}): at most one text mode and one of ckpt, ckpt_nr")
    return ("forward", modes[0] if modes else "normal", ckpts[0] if ckpts else None,
            "reuse" in flags, "features" in flags)


def parse_plan(s, in_no_sync=False):
    """The plan language of `tinyddp repro --help` (apps/tinyddp/repro/plan.h) as nested tuples."""
    steps = []
    for p in _split_top(s, ";"):
        block = re.fullmatch(r"(no_sync|rank\((\d+)\)|iter\(([1-9]\d*)(\+?)\))\s*\{(.*)\}", p, re.S)
        call = re.fullmatch(r"(\w+)(?:\((.*)\))?", p, re.S)
        if block and block.group(1) == "no_sync":
            if in_no_sync:
                raise ValueError("no_sync{} inside no_sync{}")
            steps.append(("no_sync", parse_plan(block.group(5), True)))
        elif block and block.group(2) is not None:
            steps.append(("rank", int(block.group(2)), parse_plan(block.group(5), in_no_sync)))
        elif block:
            steps.append(("iter", int(block.group(3)), block.group(4) == "+",
                          parse_plan(block.group(5), in_no_sync)))
        elif call and call.group(1) == "forward":
            steps.append(parse_forward(call.group(2)))
        elif call and call.group(1) in ("backward", "grad") and call.group(2) is not None:
            m = re.fullmatch(r"(.*?)(,\s*retain)?(,\s*create_graph)?", call.group(2), re.S)
            steps.append((call.group(1), parse_expr(m.group(1)), bool(m.group(2)), bool(m.group(3))))
        elif call and call.group(1) in ("freeze", "unfreeze") and call.group(2) in MODULES + GAN_MODULES:
            steps.append((call.group(1), call.group(2)))
        elif call and call.group(1) == "disc" and call.group(2) in DISC_INPUTS:
            steps.append(("disc", call.group(2)))
        elif p in ("step", "disc_step"):
            steps.append((p,))
        else:
            raise ValueError(f"bad step {p!r}")
    return steps


# ---------------------------------------------------------------------------
# Worker (one rank)
# ---------------------------------------------------------------------------
def worker(spec, rank, logpath):
    log = open(logpath, "w", buffering=1)

    def emit(**ev):
        log.write(json.dumps(ev) + "\n")
        log.flush()

    def mark(text):
        sys.stderr.flush()
        os.write(2, (MARK + text + "\n").encode())

    import warnings
    from datetime import timedelta

    import torch
    import torch.distributed as dist
    import torch.nn.functional as F
    from torch.nn.parallel import DistributedDataParallel as DDP

    torch.set_num_threads(1)
    dist.set_debug_level_from_env()  # forked after import: re-read TORCH_DISTRIBUTED_DEBUG
    opts = spec["options"]
    plan = parse_plan(spec["plan"])

    from gen_scenario_model import ScenarioModel, discriminator

    def digest(t):
        return hashlib.sha1(t.detach().contiguous().numpy().tobytes()).hexdigest()[:20]

    wlist = []
    wseen = [0]
    where = ["init"]

    def flush_warnings():
        for w in wlist[wseen[0]:]:
            emit(ev="warning", at=where[0], category=w.category.__name__, message=str(w.message))
        wseen[0] = len(wlist)

    emit(ev="start", rank=rank, torch_version=torch.__version__)
    ctx = warnings.catch_warnings(record=True)
    wlist = ctx.__enter__()
    warnings.simplefilter("always")

    gan = opts.get("gan", False)

    def named_params():
        """The main model's parameters, then (option gan) the discriminator's as "disc.<name>"."""
        named = list(model.named_parameters())
        if disc is not None:
            named += [("disc." + n, p) for n, p in disc.named_parameters()]
        return named

    def params_state():
        return {n: digest(p) for n, p in named_params()}

    def grads_state():
        return {n: (None if p.grad is None else digest(p.grad)) for n, p in named_params()}

    model = disc = None
    try:
        mark("init_process_group")
        dist.init_process_group("gloo", rank=rank, world_size=WORLD,
                                timeout=timedelta(seconds=PG_TIMEOUT_S))
        torch.manual_seed(0)
        model = ScenarioModel(opts["extra_unused_parameter"], opts.get("buffer", False))
        if gan:  # the same seed stream, right after the main model
            disc = discriminator()
        mark("construct DDP")
        where[0] = "construct DDP"
        ddp = DDP(model, find_unused_parameters=opts["find_unused_parameters"],
                  static_graph=opts["static_graph"], bucket_cap_mb=opts["bucket_cap_mb"],
                  broadcast_buffers=opts.get("broadcast_buffers", True))
        if gan:  # its own DDP, with the main one's options; its warnings are the construction's too
            ddp_d = DDP(disc, find_unused_parameters=opts["find_unused_parameters"],
                        static_graph=opts["static_graph"], bucket_cap_mb=opts["bucket_cap_mb"])
        flush_warnings()
        emit(ev="constructed", params=params_state(), param_names=[n for n, _ in named_params()])
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        opt_d = torch.optim.SGD(disc.parameters(), lr=0.1) if gan else None
        gen = torch.Generator().manual_seed(1234 if opts["same_data"] else 1234 + 1000 * rank)
        # latest: the latest forward of the run, fwds: this plan iteration's, each (outputs, batch, flags)
        # real / fake: the latest disc(real) / disc(fake|fake_detached) output of the run
        state = {"latest": None, "fwds": [], "real": None, "fake": None}

        def need_gan(what):
            if not gan:
                raise ValueError(f"plan: {what} needs the gan option")

        def loss_of(terms):
            total = None
            for coef, name, k in terms:
                if name == "dummy":
                    v = 0 * sum(p.sum() for p in model.parameters())
                elif name in DISC_TERMS:
                    need_gan(f"term {name}")
                    out_d = state["real" if name == "d_real" else "fake"]
                    if out_d is None:
                        raise ValueError(f"plan: term {name} needs a "
                                         f"{'disc(real)' if name == 'd_real' else 'disc(fake) or disc(fake_detached)'}"
                                         " before it")
                    v = F.mse_loss(out_d, torch.zeros(6, 1) if name == "d_fake" else torch.ones(6, 1))
                else:
                    if k is not None and k > len(state["fwds"]):
                        raise ValueError(f"plan: term {name}@{k} needs forward #{k} of this iteration; "
                                         f"it ran {len(state['fwds'])}")
                    out, (x, ya, yb, yt), fwd = state["latest"] if k is None else state["fwds"][k - 1]
                    if name == "a":
                        v = F.mse_loss(out[0], ya)
                    elif name == "b":
                        v = F.cross_entropy(out[1], yb)
                    elif name == "t":
                        if fwd[1] in ("no_text", "drop_text"):
                            raise ValueError("term t used after a forward that did not return t")
                        v = F.mse_loss(out[2], yt)
                    else:
                        if not fwd[4]:
                            raise ValueError("plan: term t_outside needs a forward with the features flag")
                        v = F.mse_loss(ddp.module.text_decoder(out[-1]), yt)
                v = v if coef == 1.0 else coef * v
                total = v if total is None else total + v
            return total

        def run_steps(steps, it, counts, in_no_sync):
            for st in steps:
                kind = st[0]
                if kind == "no_sync":
                    emit(ev="call", kind="no_sync_enter", iteration=it)
                    with ddp.no_sync():
                        run_steps(st[1], it, counts, True)
                    emit(ev="call", kind="no_sync_exit", iteration=it)
                    continue
                if kind == "rank":
                    if st[1] == rank:
                        run_steps(st[2], it, counts, in_no_sync)
                    continue
                if kind == "iter":
                    if it + 1 == st[1] or (st[2] and it + 1 > st[1]):
                        run_steps(st[3], it, counts, in_no_sync)
                    continue
                counts[kind] = counts.get(kind, 0) + 1
                at = f"{kind} #{counts[kind]} of iteration {it + 1}"   # iterations count from 1, as tinyddp prints them
                where[0] = at
                mark(at)
                emit(ev="begin", at=at, kind=kind, iteration=it, call=counts[kind])
                if kind == "forward":
                    x = torch.randn(6, 4, generator=gen)
                    ya = torch.randn(6, 1, generator=gen)
                    yb = torch.randint(0, 3, (6,), generator=gen)
                    yt = torch.randn(6, 5, generator=gen)
                    state["latest"] = (ddp(x, *st[1:]), (x, ya, yb, yt), st)
                    state["fwds"].append(state["latest"])
                    flush_warnings()
                    emit(ev="end", at=at, kind=kind, iteration=it, call=counts[kind])
                elif kind in ("backward", "grad"):
                    loss = loss_of(st[1])
                    if kind == "backward":
                        # retain_graph=None: PyTorch's default, the value of create_graph
                        loss.backward(retain_graph=True if st[2] else None, create_graph=st[3])
                    else:  # the gradient-penalty / MAML pattern: .grad assigned by hand
                        ps = [p for p in model.parameters() if p.requires_grad]
                        gs = torch.autograd.grad(loss, ps, retain_graph=True if st[2] else None,
                                                 create_graph=st[3], allow_unused=True)
                        for p, g in zip(ps, gs):
                            if g is not None:
                                p.grad = g
                    flush_warnings()
                    emit(ev="end", at=at, kind=kind, iteration=it, call=counts[kind],
                         in_no_sync=in_no_sync, loss=float(loss), grads=grads_state())
                elif kind in ("freeze", "unfreeze"):
                    if st[1] == "disc":
                        need_gan(f"{kind}(disc)")
                        disc.requires_grad_(kind == "unfreeze")
                    else:
                        ddp.module.get_submodule(st[1]).requires_grad_(kind == "unfreeze")
                    emit(ev="end", at=at, kind=kind, iteration=it, call=counts[kind])
                elif kind == "disc":
                    need_gan(f"disc({st[1]})")
                    if state["latest"] is None:
                        raise ValueError(f"plan: disc({st[1]}) needs a forward before it")
                    out, (_, _, _, yt), fwd = state["latest"]
                    if st[1] == "real":
                        state["real"] = ddp_d(yt)
                    else:
                        if fwd[1] in ("no_text", "drop_text"):
                            raise ValueError(f"plan: disc({st[1]}) needs a forward that returned t")
                        state["fake"] = ddp_d(out[2] if st[1] == "fake" else out[2].detach())
                    flush_warnings()
                    emit(ev="end", at=at, kind=kind, iteration=it, call=counts[kind])
                elif kind == "disc_step":
                    need_gan("disc_step")
                    opt_d.step()
                    flush_warnings()
                    emit(ev="end", at=at, kind=kind, iteration=it, call=counts[kind],
                         params=params_state())
                else:
                    opt.step()
                    flush_warnings()
                    emit(ev="end", at=at, kind=kind, iteration=it, call=counts[kind],
                         params=params_state())

        its = opts["iterations"]

        def iterations():
            for it in range(its[rank] if isinstance(its, list) else its):
                where[0] = f"zero_grad of iteration {it + 1}"
                opt.zero_grad()
                if gan:
                    opt_d.zero_grad()
                state["fwds"] = []
                run_steps(plan, it, {}, False)

        if opts.get("join", False):
            with ddp.join(divide_by_initial_world_size=opts.get("join_divide_by_initial_world_size", True),
                          enable=True,
                          throw_on_early_termination=opts.get("join_throw_on_early_termination", False)):
                iterations()
                # what the context manager's exit raises is raised at "join exit"
                where[0] = "join exit"
                mark(where[0])
                emit(ev="begin", at=where[0], kind="join_exit")
            flush_warnings()
            emit(ev="end", at=where[0], kind="join_exit")
        else:
            iterations()
        flush_warnings()
        emit(ev="done", outcome="ok", params=params_state(), grads=grads_state())
    except BaseException as e:  # noqa: BLE001 - record whatever was raised
        flush_warnings()
        emit(ev="error", at=where[0], type=type(e).__name__, message=str(e),
             params=params_state() if model is not None else None,
             grads=grads_state() if model is not None else None)
        emit(ev="done", outcome="error")
    mark("done")
    # Stay alive until the driver releases us (stdin closes), then leave
    # without running destructors (no collective in teardown).
    while os.read(0, 4096):
        pass
    os._exit(0)


# ---------------------------------------------------------------------------
# Driver
# ---------------------------------------------------------------------------
def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


_GLOG = re.compile(r"^(?P<lvl>[IWEF])\d{8} [\d:.]+ +\d+ (?:[^\]]*/)?(?P<file>[^/\]:]+):(?P<line>\d+)\] ?(?P<msg>.*)$")
# INFO continuation lines that carry times, ports or (a 1.13 bug) an
# uninitialized gloo_num_threads: dropped so that reruns give the same JSON.
_NONDET = re.compile(r"time|master_port|gloo_num_threads|cuda_visible_devices")


def parse_stderr(text):
    """Split one rank's stderr into log entries attributed to plan calls.
    Returns [{at, level, file, line, message, continuation}] where message is
    the first line without the glog prefix (timestamp, thread id, path)."""
    entries, at = [], "startup"
    for line in text.splitlines():
        if line.startswith(MARK):
            at = line[len(MARK):].strip()
            continue
        if line.startswith("WARNING: Logging before InitGoogleLogging()"):
            continue
        m = _GLOG.match(line)
        if m:
            entries.append({"at": at, "level": m.group("lvl"), "file": m.group("file"),
                            "line": int(m.group("line")), "message": m.group("msg").rstrip(),
                            "continuation": []})
        elif line.strip():
            if entries and entries[-1]["at"] == at:
                entries[-1]["continuation"].append(line.rstrip())
            else:  # a line that is not a glog entry (e.g. printed by Python)
                entries.append({"at": at, "level": None, "file": None, "line": None,
                                "message": line.rstrip(), "continuation": []})
    for e in entries:
        if e["level"] == "I":
            e["continuation"] = [c for c in e["continuation"] if not _NONDET.search(c)]
    return entries


def bare_warning(msg):
    """c10's stderr warning handler prints 'Warning: <text> (function <fn>)'."""
    m = re.fullmatch(r"Warning: (.*) \(function [^()]*\)", msg, re.S)
    return m.group(1) if m else msg


class _Child:
    """A forked rank: pid plus the write end of the pipe that is its stdin."""

    def __init__(self, pid, wfd):
        self.pid, self.wfd, self.status = pid, wfd, None

    def poll(self):
        if self.status is None:
            pid, st = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.status = st
        return self.status

    def release(self):
        if self.wfd is not None:
            os.close(self.wfd)
            self.wfd = None

    def wait(self, timeout):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.poll() is not None:
                return True
            time.sleep(0.02)
        return False

    def kill(self):
        os.kill(self.pid, signal.SIGKILL)  # only ever our own child
        os.waitpid(self.pid, 0)
        self.status = -9


def fork_worker(spec, rank, logpath, errpath, env):
    """Fork a rank from the driver (torch already imported, no threads yet):
    much faster than a fresh interpreter per rank."""
    rfd, wfd = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(wfd)
            os.dup2(rfd, 0)
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            efd = os.open(errpath, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.dup2(efd, 2)
            os.environ.clear()
            os.environ.update(env)
            worker(spec, rank, logpath)
        finally:
            os._exit(1)
    os.close(rfd)
    return _Child(pid, wfd)


def read_events(path):
    evs = []
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                if line.endswith("\n"):
                    evs.append(json.loads(line))
    return evs


def run_one(spec, tmpdir):
    """Run one spec; returns (per-rank events, per-rank stderr, stuck) where stuck maps each rank that sat in
    a collective after a peer had finished to how that ended: "error" (gloo raised once the finished peers
    exited) or "hung" (killed)."""
    port = free_port()
    env = dict(os.environ)
    env.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), GLOO_SOCKET_IFNAME="lo",
               OMP_NUM_THREADS="1", PYTHONDONTWRITEBYTECODE="1", PYTHONWARNINGS="")
    env.pop("TORCH_DISTRIBUTED_DEBUG", None)
    if spec["options"]["debug"] != "OFF":
        env["TORCH_DISTRIBUTED_DEBUG"] = spec["options"]["debug"]
    tag = re.sub(r"[^A-Za-z0-9]+", "_", spec["id"])
    procs, logs, errs = [], [], []
    for r in range(WORLD):
        logs.append(os.path.join(tmpdir, f"{tag}.r{r}.jsonl"))
        errs.append(os.path.join(tmpdir, f"{tag}.r{r}.stderr"))
        procs.append(fork_worker(spec, r, logs[r], errs[r], env))
    last_change = [time.monotonic()] * WORLD
    last_size = [-1] * WORLD
    stuck, released_at = [], None
    while True:
        time.sleep(0.05)
        now = time.monotonic()
        done = []
        for r in range(WORLD):
            sz = os.path.getsize(logs[r]) if os.path.exists(logs[r]) else 0
            if sz != last_size[r]:
                last_size[r], last_change[r] = sz, now
            evs = read_events(logs[r])
            done.append(bool(evs) and evs[-1]["ev"] == "done" or procs[r].poll() is not None)
        if all(done):
            break
        if released_at is None:
            if any(done) and all(done[r] or now - last_change[r] > HANG_GRACE_S for r in range(WORLD)):
                # The finished ranks exit, closing their gloo pairs: what a stuck rank raises then is what a
                # user's stuck rank raises when its peer's script ends.
                stuck = [r for r in range(WORLD) if not done[r]]
                for r in range(WORLD):
                    if done[r]:
                        procs[r].release()
                released_at = now
            elif all(now - last_change[r] > ALL_IDLE_S for r in range(WORLD)):
                stuck = [r for r in range(WORLD) if not done[r]]
                break
        elif now - released_at > PEER_EXIT_WAIT_S:
            break
    for p in procs:
        p.release()
    deadline = time.monotonic() + 3
    for p in procs:
        if not p.wait(max(0.1, deadline - time.monotonic())):
            p.kill()
    rank_events = [read_events(l) for l in logs]
    ended = {r: ("error" if any(e["ev"] == "error" for e in rank_events[r]) else "hung") for r in stuck}
    return rank_events, [open(e).read() for e in errs], ended


# gloo's "Connection closed by peer [127.0.0.1]:41089" names the peer's ephemeral port
_PEER_PORT = re.compile(r"(\[\d+\.\d+\.\d+\.\d+\]):\d+")


def summarize(spec, rank_events, rank_stderr, stuck):
    rec = {"id": spec["id"], "scenario": spec["scenario"], "plan": spec["plan"], "note": spec["note"],
           "options": spec["options"], "ranks": WORLD, "backend": "gloo"}
    torch_version = next((e["torch_version"] for e in rank_events[0] if e["ev"] == "start"), None)

    # errors
    errors_by_rank = {}
    for r, evs in enumerate(rank_events):
        for e in evs:
            if e["ev"] == "error":
                errors_by_rank[str(r)] = {"type": e["type"], "message": _PEER_PORT.sub(r"\1:<port>", e["message"]),
                                          "raised_at": e["at"]}
    hung_info = {}
    for r in stuck:
        begins = [e for e in rank_events[r] if e["ev"] == "begin"]
        ends = {e["at"] for e in rank_events[r] if e["ev"] == "end"}
        inside = [e["at"] for e in begins if e["at"] not in ends]
        hung_info[str(r)] = {"inside": inside[-1] if inside else None,
                             "idle_s_before_peers_exited": HANG_GRACE_S, "after_peer_exit": stuck[r],
                             "error": errors_by_rank.get(str(r))}
    outcome_by_rank = {}
    for r in range(WORLD):
        outcome_by_rank[str(r)] = ("error" if str(r) in errors_by_rank else
                                   "hung" if r in stuck else "ok")
    # the top-level error is the first rank's own failure; an error a stuck rank raised only because its
    # peers exited comes after every other rank's
    first = [r for r in errors_by_rank if int(r) not in stuck] or list(errors_by_rank)
    if first:
        r0 = min(first, key=int)
        err = dict(errors_by_rank[r0])
        err["rank"] = int(r0)
        rec["outcome"], rec["error"] = "error", err
    elif stuck:
        rec["outcome"], rec["error"] = "hang", None
    else:
        rec["outcome"], rec["error"] = "ok", None
    rec["errors_by_rank"] = errors_by_rank
    rec["outcome_by_rank"] = outcome_by_rank
    rec["hung_ranks"] = hung_info

    # warnings: python warnings + C++ stderr lines, attributed to calls
    wdetail = []
    for r, evs in enumerate(rank_events):
        for e in evs:
            if e["ev"] == "warning":
                wdetail.append({"rank": r, "at": e["at"], "source": "python",
                                "category": e["category"], "message": e["message"]})
    info_logs = []
    for r, text in enumerate(rank_stderr):
        for e in parse_stderr(text):
            if e["level"] == "I":
                info_logs.append({"rank": r, "at": e["at"], "file": e["file"], "line": e["line"],
                                  "message": "\n".join([e["message"]] + e["continuation"])})
            else:
                wdetail.append({"rank": r, "at": e["at"], "source": "stderr", "level": e["level"],
                                "file": e["file"], "line": e["line"],
                                "message": bare_warning("\n".join([e["message"]] + e["continuation"]))})
    warnings_list = []
    for w in wdetail:
        if w["message"] not in warnings_list:
            warnings_list.append(w["message"])
    rec["warnings"] = warnings_list
    rec["warnings_detail"] = wdetail
    rec["info_logs"] = info_logs

    # replicas_in_sync: each rank's last recorded parameter digests
    def last_params(evs):
        p = None
        for e in evs:
            if e.get("params"):
                p = e["params"]
        return p

    lp = [last_params(evs) for evs in rank_events]
    rec["replicas_in_sync"] = (all(x is not None for x in lp) and all(x == lp[0] for x in lp))
    rec["params_out_of_sync"] = ([] if rec["replicas_in_sync"] or lp[0] is None or any(x is None for x in lp)
                                 else [n for n in lp[0] if any(x[n] != lp[0][n] for x in lp)])

    # per-iteration diagnostics
    def by_at(evs, kind):
        return {e["at"]: e for e in evs if e["ev"] == "end" and e["kind"] == kind}

    steps = [by_at(evs, "step") for evs in rank_events]
    names = next((e["param_names"] for e in rank_events[0] if e["ev"] == "constructed"), [])
    seq = [{e["at"]: i for i, e in enumerate(evs) if e["ev"] == "end"} for evs in rank_events]

    def calls(kind, it):
        """The backward or grad calls of plan iteration it, in call order, each with its position in the
        run (the smallest index of its end event over the ranks that completed it)."""
        ends = [by_at(evs, kind) for evs in rank_events]
        out, k = [], 1
        while True:
            at = f"{kind} #{k} of iteration {it}"
            if not any(at in d for d in ends):
                return out
            entry = {"call": k, "completed_on_ranks": [r for r in range(WORLD) if at in ends[r]]}
            entry["in_no_sync"] = next(d[at]["in_no_sync"] for d in ends if at in d)
            entry["grad_none"] = {str(r): [n for n, v in ends[r][at]["grads"].items() if v is None]
                                  for r in range(WORLD) if at in ends[r]}
            if len(entry["completed_on_ranks"]) == WORLD:
                gs = [ends[r][at]["grads"] for r in range(WORLD)]
                entry["grads_in_sync"] = {n: (None if all(g[n] is None for g in gs)
                                              else all(g[n] == gs[0][n] for g in gs)) for n in names}
            else:
                entry["grads_in_sync"] = None
            out.append((min(seq[r][at] for r in entry["completed_on_ranks"]), entry))
            k += 1

    its = spec["options"]["iterations"]
    iters = []
    for it in range(1, (max(its) if isinstance(its, list) else its) + 1):   # iterations count from 1
        bw_calls, grad_calls = calls("backward", it), calls("grad", it)
        bws = [e for _, e in bw_calls]
        itrec = {"iteration": it, "backwards": bws}
        if grad_calls:
            itrec["grad_calls"] = [e for _, e in grad_calls]
        full = [e for _, e in sorted(bw_calls + grad_calls, key=lambda c: c[0]) if e["grads_in_sync"] is not None]
        if full:
            g = full[-1]["grads_in_sync"]
            itrec["grads_in_sync"] = g
            itrec["all_grads_in_sync"] = all(v is not False for v in g.values())
            itrec["grads_out_of_sync"] = [n for n, v in g.items() if v is False]
        else:
            itrec["grads_in_sync"] = None
            itrec["all_grads_in_sync"] = None
            itrec["grads_out_of_sync"] = None
        st_ats = sorted({a for d in steps for a in d if a.endswith(f"of iteration {it}")})
        if st_ats and all(st_ats[-1] in d for d in steps):
            ps = [d[st_ats[-1]]["params"] for d in steps]
            itrec["params_in_sync_after_step"] = all(p == ps[0] for p in ps)
        else:
            itrec["params_in_sync_after_step"] = None
        if bws or grad_calls or itrec["params_in_sync_after_step"] is not None:
            iters.append(itrec)
    rec["iterations"] = iters
    rec["grads_in_sync_per_iteration"] = [i["all_grads_in_sync"] for i in iters]
    if spec["options"].get("gan", False):  # the top-level param_names lists the main model's only
        rec["param_names"] = names
    return rec, torch_version


def main(all_runs=RUNS, notes=NOTES, generator="tests/golden/gen_ddp_scenarios.py",
         out_name="ddp_scenarios.json"):
    """Run all_runs (or --only one of them) and write out_name next to this script."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", help="run one id and print its record")
    args = ap.parse_args()
    import tempfile

    import torch  # noqa: F401 - imported once here, inherited by the forked ranks
    import torch.distributed  # noqa: F401
    import torch.nn.functional  # noqa: F401
    import torch.nn.parallel  # noqa: F401
    import torch.optim  # noqa: F401
    runs = [r for r in all_runs if args.only is None or r["id"] == args.only]
    assert runs, "no such run id"
    ids = [r["id"] for r in all_runs]
    assert len(ids) == len(set(ids))
    for r in all_runs:
        parse_plan(r["plan"])
    out = {"generator": generator, "torch_version": None,
           "debian_package": None, "backend": "gloo", "ranks": WORLD,
           "param_names": PARAM_NAMES, "notes": notes, "runs": []}
    try:
        out["debian_package"] = subprocess.run(
            ["dpkg-query", "-W", "-f", "${Version}", "python3-torch"],
            capture_output=True, text=True).stdout or None
    except OSError:
        pass
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="ddp_golden_") as tmp:
        for spec in runs:
            t = time.monotonic()
            evs, errs, stuck = run_one(spec, tmp)
            rec, tv = summarize(spec, evs, errs, stuck)
            out["torch_version"] = out["torch_version"] or tv
            out["runs"].append(rec)
            err = rec["error"]
            print(f"{spec['id']:42s} {rec['outcome']:5s} "
                  f"{(err['raised_at'] + ': ' + err['message'][:60]) if err else ''} "
                  f"sync={rec['replicas_in_sync']} grads={rec['grads_in_sync_per_iteration']} "
                  f"ranks={rec['outcome_by_rank']} ({time.monotonic() - t:.1f}s)", file=sys.stderr)
    print(f"total {time.monotonic() - t0:.1f}s", file=sys.stderr)
    if args.only:
        json.dump(out, sys.stdout, indent=1)
        print()
        return
    with open(os.path.join(HERE, out_name), "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
