"""Behavioural reference for the DDP error patterns users report (issue 11): each pattern and its variants as
a plan of the extended plan language (`tinyddp repro --help`; apps/tinyddp/repro/plan.h), run on real PyTorch 1.13.1
DistributedDataParallel (gloo, 2 ranks on 127.0.0.1) by gen_ddp_scenarios.py's machinery, with the same
model, data and record format as ddp_scenarios.json.

Writes ddp_patterns.json next to this script. Run by hand, from anywhere:

    /usr/bin/python3 tests/golden/gen_ddp_patterns.py            # all runs
    /usr/bin/python3 tests/golden/gen_ddp_patterns.py --only ID  # one run, JSON to stdout
"""
import os
import sys

sys.dont_write_bytecode = True  # keep __pycache__ out of tests/golden
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import gen_ddp_scenarios as scen  # noqa: E402

COMBINED = "forward; backward(a+b+t); step"
ALL_HEADS_TWICE = "a@1+b@1+t@1+a@2+b@2+t@2"


def R(id_, plan, note, **opts):
    """A run "scenario/variant" (the scenario is the id up to its first '/'), every option spelled out but
    gan, which appears only in the runs that set it (the runs before it stay as they were recorded)."""
    o = {"find_unused_parameters": False, "static_graph": False, "debug": "OFF",
         "extra_unused_parameter": False, "same_data": False, "iterations": 3, "bucket_cap_mb": 25,
         "buffer": False, "broadcast_buffers": True, "join": False,
         "join_divide_by_initial_world_size": True, "join_throw_on_early_termination": False}
    for k, v in opts.items():
        assert k in o or k == "gan", k
        o[k] = v
    return {"id": id_, "scenario": id_.split("/")[0], "plan": plan, "options": o, "note": note}


FU = {"find_unused_parameters": True}
SG = {"static_graph": True}
# a GAN's training loop (option gan): the D step on real and detached fake outputs, then the G step through
# the frozen D
D_STEP = "forward; disc(real); disc(fake_detached); backward(d_real+d_fake); disc_step"
GAN = f"{D_STEP}; freeze(disc); disc(fake); backward(g_adv); unfreeze(disc); step"


def reuse_runs():
    """Pattern 2: trunk.2 applied twice, every combination of checkpointing, static_graph, find_unused."""
    runs = []
    for flag, ck_id, ck_note in (("", "", ""), (", ckpt", "ckpt", ", each application under reentrant "
                                                "checkpoint"), (", ckpt_nr", "ckpt-nr", ", each application "
                                                "under checkpoint(use_reentrant=False)")):
        for sg in (False, True):
            for fu in (False, True):
                parts = [p for p in (ck_id, "static-graph" if sg else "", "find-unused" if fu else "") if p]
                note = (f"model(x) applies the same Linear (trunk.2) twice{ck_note}; one backward of the full "
                        f"loss" + (", static_graph=True" if sg else "") + (", find_unused_parameters=True"
                                                                           if fu else ""))
                runs.append(R("layer-reuse" + ("/" + "-".join(parts) if parts else ""),
                              f"forward(reuse{flag}); backward(a+b+t); step", note,
                              static_graph=sg, find_unused_parameters=fu))
    return runs


RUNS = [
    # 1. reentrant activation checkpointing
    R("ckpt-reentrant", "forward(ckpt); backward(a+b+t); step",
      "torch.utils.checkpoint.checkpoint(trunk[2], h) (use_reentrant=True, 1.13's default), one backward"),
    R("ckpt-reentrant/find-unused", "forward(ckpt); backward(a+b+t); step",
      "reentrant checkpoint with find_unused_parameters=True (the famous report)", **FU),
    R("ckpt-reentrant/non-reentrant", "forward(ckpt_nr); backward(a+b+t); step",
      "checkpoint(trunk[2], h, use_reentrant=False)"),
    R("ckpt-reentrant/non-reentrant-find-unused", "forward(ckpt_nr); backward(a+b+t); step",
      "checkpoint(..., use_reentrant=False) with find_unused_parameters=True", **FU),
    R("ckpt-reentrant/static-graph", "forward(ckpt); backward(a+b+t); step",
      "reentrant checkpoint with static_graph=True (the fix the error text suggests)", **SG),
    R("ckpt-reentrant/static-graph-find-unused", "forward(ckpt); backward(a+b+t); step",
      "reentrant checkpoint with static_graph=True and find_unused_parameters=True (users keep both)",
      **SG, **FU),
    # 2. a layer applied twice
    *reuse_runs(),
    # 3. several forwards, one backward
    R("multi-forward", "forward; forward(no_text); backward(a@1+b@2+t@1); step",
      "one forward per task (the second skips the text decoder), then one loss over both forwards' outputs"),
    R("multi-forward/find-unused", "forward; forward(no_text); backward(a@1+b@2+t@1); step",
      "as multi-forward, find_unused_parameters=True: the last forward did not reach text_decoder", **FU),
    R("multi-forward/full-last-find-unused", "forward(no_text); forward; backward(a@1+b@1+t@2); step",
      "the forward that reaches every parameter last, find_unused_parameters=True", **FU),
    R("multi-forward/backward-each-find-unused", "forward; backward(a+t); forward(no_text); backward(b); step",
      "a backward after each forward (two DDP iterations, grads accumulate), find_unused_parameters=True",
      **FU),
    # 4. a submodule applied outside the DDP forward
    R("outside-forward", "forward(no_text, features); backward(a+b+t_outside); step",
      "the forward returns (a, b, features); the loss applies ddp.module.text_decoder(features) outside it"),
    R("outside-forward/find-unused", "forward(no_text, features); backward(a+b+t_outside); step",
      "as outside-forward, find_unused_parameters=True", **FU),
    # 5. freezing after wrapping
    R("freeze-after-wrap", "iter(2+){ freeze(head_b) }; forward; backward(a+b+t); step",
      "head_b.requires_grad_(False) from iteration 2 on, after DDP was constructed"),
    R("freeze-after-wrap/find-unused", "iter(2+){ freeze(head_b) }; forward; backward(a+b+t); step",
      "as freeze-after-wrap, find_unused_parameters=True", **FU),
    R("freeze-after-wrap/unfreeze", "iter(2){ freeze(head_b) }; iter(3){ unfreeze(head_b) }; "
      "forward; backward(a+b+t); step",
      "head_b frozen in iteration 2 only, unfrozen again in iteration 3 (4 iterations)", iterations=4),
    R("freeze-after-wrap/unfreeze-find-unused", "iter(2){ freeze(head_b) }; iter(3){ unfreeze(head_b) }; "
      "forward; backward(a+b+t); step",
      "as freeze-after-wrap/unfreeze, find_unused_parameters=True", iterations=4, **FU),
    # 6. ranks whose graphs differ
    R("rank-divergent", "rank(0){ forward; backward(a+b+t) }; rank(1){ forward(no_text); backward(a+b) }; step",
      "a data-dependent branch: rank 1's batch has no text, so rank 1 skips the text decoder"),
    R("rank-divergent/find-unused",
      "rank(0){ forward; backward(a+b+t) }; rank(1){ forward(no_text); backward(a+b) }; step",
      "as rank-divergent, find_unused_parameters=True", **FU),
    # 7. uneven inputs
    R("uneven-inputs", COMBINED, "rank 0 has 3 batches, rank 1 has 2; no join", iterations=[3, 2]),
    R("uneven-inputs/join", COMBINED,
      "the loop inside `with ddp.join():` (divide_by_initial_world_size=True)", iterations=[3, 2], join=True),
    R("uneven-inputs/join-divide-by-current", COMBINED,
      "`with ddp.join(divide_by_initial_world_size=False):`", iterations=[3, 2], join=True,
      join_divide_by_initial_world_size=False),
    R("uneven-inputs/join-throw", COMBINED,
      "`with ddp.join(throw_on_early_termination=True):`", iterations=[3, 2], join=True,
      join_throw_on_early_termination=True),
    R("uneven-inputs/join-find-unused", COMBINED,
      "`with ddp.join():` and find_unused_parameters=True", iterations=[3, 2], join=True, **FU),
    # 8. buffers
    R("buffer-two-forwards", "forward; forward; backward(a@1+a@2); step",
      "a registered buffer read in forward; D(real) and D(fake) as two DDP forwards, one backward of the "
      "sum (broadcast_buffers=True, the default)", buffer=True),
    R("buffer-two-forwards/no-broadcast", "forward; forward; backward(a@1+a@2); step",
      "as buffer-two-forwards, broadcast_buffers=False (head_b and text_decoder get no gradient: the loss "
      "reads head a only)", buffer=True, broadcast_buffers=False),
    R("buffer-two-forwards/all-heads", f"forward; forward; backward({ALL_HEADS_TWICE}); step",
      "as buffer-two-forwards, the loss reading every head of both forwards (every parameter gets a "
      "gradient, as D's do in a GAN)", buffer=True),
    R("buffer-two-forwards/all-heads-no-broadcast", f"forward; forward; backward({ALL_HEADS_TWICE}); step",
      "as buffer-two-forwards/all-heads, broadcast_buffers=False", buffer=True, broadcast_buffers=False),
    R("buffer-two-forwards/single-forward", COMBINED,
      "the buffer with one forward per backward (broadcast_buffers=True)", buffer=True),
    # 9. autograd.grad
    R("autograd-grad", "forward; grad(a+b+t); step",
      "torch.autograd.grad of the loss w.r.t. the parameters, .grad assigned by hand, then step"),
    R("autograd-grad/find-unused", "forward; grad(a+b+t); step",
      "as autograd-grad, find_unused_parameters=True", **FU),
    R("autograd-grad/static-graph", "forward; grad(a+b+t); step",
      "as autograd-grad, static_graph=True", **SG),
    # 10. static_graph with changing graphs
    R("static-graph-changing/dropped",
      "iter(1){ forward; backward(a+b+t) }; iter(2+){ forward(no_text); backward(a+b) }; step",
      "static_graph=True; text_decoder used in iteration 1, not from iteration 2 on", **SG),
    R("static-graph-changing/added",
      "iter(1){ forward(no_text); backward(a+b) }; iter(2+){ forward; backward(a+b+t) }; step",
      "static_graph=True; text_decoder unused in iteration 1, used from iteration 2 on", **SG),
    R("static-graph-changing/changes-late",
      "iter(1){ forward; backward(a+b+t) }; iter(2){ forward; backward(a+b+t) }; "
      "iter(3){ forward(no_text); backward(a+b) }; iter(4){ forward; backward(a+b+t) }; step",
      "static_graph=True; the same graph for two iterations, text_decoder dropped in iteration 3 only "
      "(4 iterations, so that a forward follows the changed one)", iterations=4, **SG),
    R("static-graph-changing/no-sync-first",
      "no_sync{ forward; backward(a+b+t) }; forward; backward(a+b+t); step",
      "static_graph=True; gradient accumulation with the first micro-batch inside no_sync(), from the very "
      "first iteration", **SG),
    R("static-graph-changing/forward-without-backward", "forward; forward; backward(a+b+t); step",
      "static_graph=True; a forward whose outputs get no backward, then forward + backward", **SG),
    # 11. checkpointing a block whose input does not require grad
    R("ckpt-frozen-input", "iter(1){ freeze(trunk.0) }; forward(ckpt); backward(a+b+t); step",
      "trunk.0 (the layer before the checkpointed block) frozen after wrapping, so the block's input does "
      "not require grad; reentrant checkpoint"),
    R("ckpt-frozen-input/find-unused", "iter(1){ freeze(trunk.0) }; forward(ckpt); backward(a+b+t); step",
      "as ckpt-frozen-input, find_unused_parameters=True", **FU),
    R("ckpt-frozen-input/non-reentrant", "iter(1){ freeze(trunk.0) }; forward(ckpt_nr); backward(a+b+t); step",
      "as ckpt-frozen-input, checkpoint(..., use_reentrant=False)"),
    R("ckpt-frozen-input/non-reentrant-find-unused",
      "iter(1){ freeze(trunk.0) }; forward(ckpt_nr); backward(a+b+t); step",
      "as ckpt-frozen-input/non-reentrant, find_unused_parameters=True", **FU),
    # 12. a GAN: a second model (the discriminator) in its own DDP
    R("gan", GAN,
      "the standard loop: D on real targets and detached text outputs, backward(d_real+d_fake), D's step; "
      "then D frozen, D on the text outputs, backward(g_adv), D unfrozen, G's step", gan=True),
    R("gan/find-unused", GAN, "as gan, find_unused_parameters=True (both DDPs)", gan=True, **FU),
    R("gan/no-detach", GAN.replace("disc(fake_detached)", "disc(fake)"),
      "the D step reads the text outputs without detach: backward(d_real+d_fake) runs through G's graph "
      "and frees it before the G step's backward(g_adv)", gan=True),
    R("gan/no-freeze", f"{D_STEP}; disc(fake); backward(g_adv); step",
      "the standard loop without freezing D for the G step (D's parameters get g_adv's gradients)",
      gan=True),
    R("gan/g-loss-through-main-term", GAN.replace("backward(g_adv)", "backward(g_adv+a+b+t)"),
      "as gan, the G step's loss adds G's task losses: backward(g_adv+a+b+t)", gan=True),
    # the debug levels' texts where several parameters are named (found by a differential run against 1.13)
    R("debug-names/info", "forward; backward(a); step",
      "one head's loss under TORCH_DISTRIBUTED_DEBUG=INFO: the next forward's error names the four parameters "
      "of head_b and text_decoder, which got no gradient", debug="INFO"),
    R("debug-names/detail-find-unused", "forward(no_text); backward(a+b); step",
      "text_decoder unused with find_unused_parameters=True under DETAIL: no error; what 1.13 warns (its "
      "'marked as unused' lines are INFO logs, not warnings)", debug="DETAIL", find_unused_parameters=True),
    R("step-between-backwards", "forward; backward(a+b+t, retain); step; backward(a+b+t); step",
      "optimizer.step() between two backward calls of one retained graph: the second backward meets a weight "
      "the step changed in place (its saved W.t(), a view: 1.13 names it AsStridedBackward0; nn.Linear's "
      "in-place init makes the versions 1 higher than a bare tensor's)"),
    R("freed-graph-through-sink", "forward; backward(a+b+t); forward(no_text); backward(a@1); step",
      "a backward of the first forward's loss after its graph was freed, find_unused_parameters=True: DDP's "
      "sink hands undefined gradients to the unused heads, whose freed nodes raise before any hook fires",
      find_unused_parameters=True),
    R("grad-create-graph-then-zero-grad", "forward; grad(a, create_graph); step",
      "gradients from autograd.grad(create_graph=True) assigned to .grad: the next iteration's zero_grad() "
      "(set_to_none=False) cannot detach a weight's gradient in place, a view", iterations=2),
    # found by a differential fuzz of random plans against 1.13 (how a run's gradients per iteration are
    # summarized, tinyddp's drift report, the dummy term, a reachable internal assertion)
    R("fuzz/one-head-unread", "forward; backward(a+b); step",
      "text_decoder gets no gradient and no next forward reports it: the run ends without an error, its "
      "gradients never averaged", iterations=1),
    R("fuzz/grad-only", "forward; grad(a+b+t)", "autograd.grad only: DDP averages nothing", iterations=1),
    R("fuzz/step-on-one-rank", "forward; backward(a+b+t); rank(0){ step }",
      "gradients averaged, the step on rank 0 only: the replicas end apart", iterations=1),
    R("fuzz/forward-before-step", "forward; backward(a+b+t); forward; step",
      "a forward without a backward between the averaged backward and the step: in sync", iterations=1),
    R("fuzz/dummy-after", "forward; backward(a+b+t); backward(dummy); step",
      "a dummy backward (exact zeros) after the averaged one: its second reduction averages zeros, in sync",
      iterations=1),
    R("fuzz/rank-only-backward", "forward; rank(0){ backward(a, retain) }; backward(b+t); step",
      "one rank runs an extra backward, find_unused_parameters=True: the iteration's last backward all ranks "
      "completed decides its gradients", iterations=1, **FU),
    R("fuzz/no-sync-on-one-rank", "rank(0){ no_sync{ forward; backward(a+b+t) } }; forward; backward(a+b+t); step",
      "rank 0 accumulates one micro-batch in no_sync(), rank 1 does not", iterations=1),
    R("fuzz/iteration-without-backward", "iter(2+){ forward; backward(a+b+t); step }",
      "iteration 1 runs nothing: it is left out of the per-iteration list", iterations=3),
    R("fuzz/dummy-before-forward", "backward(dummy); forward; backward(a+b+t); step",
      "the dummy term reads only the parameters, so it needs no forward", iterations=1),
    R("fuzz/dummy-at-k", "forward; backward(a+b+t+dummy@2); step",
      "dummy@2 with one forward: the script's dummy ignores which forward", iterations=1),
    R("fuzz/static-graph-unused-first", "forward(no_text); backward(dummy); forward; backward(a@1)",
      "static_graph=True whose first iteration's graph leaves text_decoder out: 1.13's rebuild asserts at "
      "the next iteration's forward", iterations=2, **SG),
    R("fuzz/detail-fingerprint", "forward; rank(0){ backward(a+b+t) }",
      "rank 1 skips the backward and goes on to broadcast the buffers while rank 0 reduces a bucket, under "
      "DETAIL: each rank reports the mismatch with 1.13's collective fingerprints, from its own side",
      iterations=2, buffer=True, debug="DETAIL"),
]


NOTES = {
    "runs": "id is 'scenario/variant' (the base run of a scenario has no variant); note says what the user "
            "wrote. Plans and options: `tinyddp repro --help` (apps/tinyddp/repro/plan.h). Every option is spelled out, but gan "
            "(default False) only in the runs that set it; those runs also list their param_names (the "
            "main model's, then the discriminator's disc.*), which the digests and grads_in_sync cover",
    "iterations": scen.NOTES["iterations"] + ". A list gives each rank its own count (uneven inputs)",
    "raised_at": scen.NOTES["raised_at"] + ". 'join exit' is the exit of `with ddp.join(...)` after the "
                 "rank's last iteration",
    "grads_in_sync": scen.NOTES["grads_in_sync"] + ". grad() calls are listed in grad_calls; the iteration "
                     "value is after the iteration's last backward or grad call",
    "replicas_in_sync": scen.NOTES["replicas_in_sync"],
    "warnings": scen.NOTES["warnings"].replace("Python warnings (none occurred)", "Python warnings"),
    "plan_choices": {
        "buffer-two-forwards": "backward(a@1+a@2) as briefed reads head a only, so head_b and text_decoder "
                               "never get a gradient (a second, unrelated cause without broadcast); the "
                               "/all-heads variants read every head of both forwards",
        "ckpt-frozen-input": "freeze(trunk.0) runs after DDP was constructed, so trunk.0's own missing "
                             "gradients (indices 0 1) add to the checkpointed block's (2 3)",
    },
    "outcomes": "every rank's own outcome: outcome_by_rank (ok|error|hung), errors_by_rank. A rank idle for "
                f"{scen.HANG_GRACE_S:g} s after a peer finished is stuck: the finished ranks then exit (closing "
                f"their gloo connections, as a user's finished script does) and the stuck rank gets "
                f"{scen.PEER_EXIT_WAIT_S:g} s to raise; hung_ranks[rank] has the call it was inside, "
                "after_peer_exit (error|hung) and that error. The top-level error is the lowest rank's own "
                "failure, before any error a stuck rank raised only because its peers exited",
}


if __name__ == "__main__":
    scen.main(RUNS, NOTES, "tests/golden/gen_ddp_patterns.py", "ddp_patterns.json")
