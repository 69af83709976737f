# The examples in examples/ run, and what they print is what tinyddp's C++ gives for the same thing:
#  - gradnorm.py (GradNorm in Python, autograd.grad(create_graph=True)) against `tinyddp train --weighting gradnorm`;
#  - multitask_ddp.py (the seed's two-backward script and its fixes) against `tinyddp repro NAME --json`;
#  - checkpoint_ddp.py (checkpointing under DDP, its error and fixes) against `tinyddp repro checkpoint* --json`;
#  - autograd_walkthrough.py against `tinyddp autograd`.
# The C++ values come from the tinyddp command at test time (TINYDDP_BIN), never from numbers written here.
import json
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
EXAMPLES = os.path.join(ROOT, "examples")


def run_example(name, *args):
    out = subprocess.run([sys.executable, os.path.join(EXAMPLES, name), *args], check=True, capture_output=True,
                         text=True, timeout=120)
    return out.stdout


def run_tinyddp(tinyddp_bin, *args, env=None):
    run = subprocess.run([tinyddp_bin, *args], capture_output=True, text=True, timeout=120, env=env)
    # `repro` exits 1 when the reproduced program raised (README, exit codes).
    assert run.returncode in ((0, 1) if args[0] == "repro" else (0,)), run.stderr
    return run.stdout


# ---- GradNorm ----

GRADNORM_STEPS = 25   # enough for the weights to move well away from 1 (they change by ~1% a step)


def test_gradnorm_in_python_gives_the_cpp_gradnorm_weights(tinyddp_bin):
    # examples/gradnorm.py steps the task weights by plain SGD; the C++ default is Adam (docs/gradnorm.md).
    cpp = json.loads(run_tinyddp(tinyddp_bin, "train", "--experiment", "toy2", "--weighting", "gradnorm", "--steps",
                                 str(GRADNORM_STEPS), "--weights-optimizer", "sgd", "--history-every", "1", "--json",
                                 "--quiet"))
    py = json.loads(run_example("gradnorm.py", "--experiment", "toy2", "--steps", str(GRADNORM_STEPS), "--json"))
    assert py["alpha"] == cpp["options"]["alpha"]
    cpp_rows = {row["step"]: row for row in cpp["history"]}
    moved = max(abs(w - 1.0) for w in cpp["weights"])
    assert moved > 0.05, f"the C++ weights barely moved ({cpp['weights']}): the comparison would mean little"
    for row in py["history"]:
        ref = cpp_rows[row["step"]]
        # Same data, weights and ops up to f32 rounding: the Python G_i is ||grad_W (w_i L_i)|| by autograd in
        # f32, the C++ one w_i ||grad_W L_i|| in f64 from the same f32 gradient.
        assert row["losses"] == pytest.approx(ref["losses"], rel=1e-4), row["step"]
        assert row["weights"] == pytest.approx(ref["weights"], rel=1e-5), row["step"]
        assert row["grad_norms"] == pytest.approx(ref["grad_norms"], rel=1e-4), row["step"]
    assert py["weights"] == pytest.approx(cpp["weights"], rel=1e-5)


# ---- the seed's multi-task DDP script and its fixes ----

@pytest.mark.parametrize("fix", [None, "combined", "find-unused", "no-sync"])
def test_multitask_ddp_variants_end_as_tinyddp_repro(tinyddp_bin, recorded_by_python, fix):
    py = json.loads(run_example("multitask_ddp.py", "--json", *(["--fix", fix] if fix else [])))
    env = {k: v for k, v in os.environ.items() if k != "TORCH_DISTRIBUTED_DEBUG"}
    ref = json.loads(run_tinyddp(tinyddp_bin, "repro", py["scenario"], "--json", env=env))
    assert py["outcome"] == ref["outcome"]
    if ref["outcome"] == "error":
        # Every rank raises at the call repro names, with its text.
        for rank in ("0", "1"):
            assert py["errors"][rank]["message"] == ref["error"]["message"]
            assert py["errors"][rank]["raised_at"] == ref["error"]["raised_at"]
        return
    assert py["replicas_in_sync"] == ref["replicas_in_sync"]
    assert py["params_out_of_sync"] == ref["params_out_of_sync"]
    assert py["warnings"] == sorted({w for w in ref["warnings"] if recorded_by_python(w)})
    if fix == "find-unused":
        assert py["params_out_of_sync"], "the silent drift did not show"


def test_multitask_ddp_prints_the_error_and_the_drift():
    out = run_example("multitask_ddp.py")
    assert "rank 1: RuntimeError at backward #2 of iteration 1: Expected to mark a variable ready only once" in out
    out = run_example("multitask_ddp.py", "--fix", "find-unused")
    assert "replicas DRIFTED APART: trunk.0.weight" in out


# ---- activation checkpointing under DDP ----

@pytest.mark.parametrize("variant", [[], ["--fix", "non-reentrant"], ["--fix", "static-graph"],
                                     ["--fix", "no-find-unused"], ["--frozen-input"]])
def test_checkpoint_ddp_variants_end_as_tinyddp_repro(tinyddp_bin, recorded_by_python, variant):
    py = json.loads(run_example("checkpoint_ddp.py", "--json", *variant))
    assert py["scenario"].startswith("checkpoint")
    env = {k: v for k, v in os.environ.items() if k != "TORCH_DISTRIBUTED_DEBUG"}
    ref = json.loads(run_tinyddp(tinyddp_bin, "repro", py["scenario"], "--json", env=env))
    assert py["outcome"] == ref["outcome"]
    # frozen input: the checkpoint's own warning
    assert py["warnings"] == sorted({w for w in ref["warnings"] if recorded_by_python(w)})
    if ref["outcome"] == "error":
        for r in ref["rank_outcomes"]:
            assert py["errors"][str(r["rank"])] == {"message": r["message"], "raised_at": r["raised_at"]}
        return
    assert py["replicas_in_sync"] == ref["replicas_in_sync"]
    assert py["params_out_of_sync"] == ref["params_out_of_sync"]


def test_checkpoint_ddp_prints_the_error_and_the_fix():
    out = run_example("checkpoint_ddp.py")
    assert out.startswith("checkpoint: error\n")
    assert "rank 0: RuntimeError at backward #1 of iteration 1: Expected to mark a variable ready only once" in out
    assert "Parameter at index 3 has been marked as ready twice" in out
    out = run_example("checkpoint_ddp.py", "--fix", "non-reentrant")
    assert out.startswith("checkpoint-non-reentrant: ok\nreplicas in sync\n")


# ---- the autograd walkthrough ----

def sections(text):
    """{section number: its lines} of a walkthrough's output."""
    out, current = {}, None
    for line in text.splitlines():
        m = re.match(r"== (\d+)\. ", line)
        if m:
            current = int(m.group(1))
            out[current] = []
        elif current is not None:
            out[current].append(line)
    return out


def test_autograd_walkthrough_prints_what_tinyddp_autograd_prints(tinyddp_bin):
    py = sections(run_example("autograd_walkthrough.py"))
    cpp = sections(run_tinyddp(tinyddp_bin, "autograd"))

    # 1: the loss value and the grad_fn walk (the C++ lines carry sequence numbers too).
    loss_line = [l for l in cpp[1] if "loss = mse_loss" in l]
    assert loss_line and loss_line[0] in py[1]
    cpp_graph = [re.sub(r"  \(sequence_nr \d+\)", "", l) for l in cpp[1] if l.startswith("    ")]
    # name() of a C++-only node carries 1.13's namespace in Python ("torch::autograd::AccumulateGrad")
    py_graph = [l.replace("torch::autograd::", "") for l in py[1] if l.startswith("    ")]
    assert py_graph == cpp_graph and len(cpp_graph) >= 5

    # 2: the hooks fire in the engine's order: b before W.
    cpp_order = [re.search(r"wrote (\w+)\.grad", l).group(1) for l in cpp[2] if "wrote" in l]
    py_order = [re.search(r"gradient for (\w+) ready", l).group(1) for l in py[2] if "ready" in l]
    assert py_order == cpp_order == ["b", "W"]

    # 3-5: the same lines (accumulated gradient, the freed-graph error, higher derivatives, GradNorm's d/dw).
    for n, keys in ((3, ("second backward", "third backward", '    "Trying')), (4, ("f = s^3", "d1.grad_fn()")),
                    (5, ("||grad_W",))):
        for key in keys:
            want = [l for l in cpp[n] if l.startswith("  " + key) or l.startswith(key)]
            assert want, (n, key)
            assert want[0] in py[n], (n, key, want[0])

    # 6 (Python only): the dynamic graph and a gradient-replacing hook.
    assert any("ExpBackward0" in l for l in py[6]) and any("PowBackward0" in l for l in py[6])
    assert "  v.grad with a zeroing hook = [0.0, 0.0]" in py[6]
