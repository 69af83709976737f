#include "apps/tinyddp/repro/scenarios.h"

namespace tinyddp::app {

const std::vector<Scenario>& scenarios() {
  static const std::vector<Scenario> all = {
      {"two-backward", "forward; backward(a, retain); backward(b+t); step", false, false, false,
       "One forward, then one backward per task: task a's loss first (retain_graph), then task b's (b + t).",
       "In the first iteration DDP 1.13 puts all 10 parameters in one bucket (it does not know the gradient order "
       "yet). backward(a) reaches the trunk and head_a: 6 of 10 parameters are marked ready, the bucket waits for "
       "the other 4 and nothing is reduced. backward(b+t) then reaches the trunk a second time: the hook of "
       "trunk.2.bias (index 3) fires again in the same iteration and the reducer raises \"marked ready twice\".",
       "Add the task losses and call backward once per forward: `tinyddp repro combined-loss`."},
      {"find-unused", "forward; backward(a, retain); backward(b+t); step", true, false, false,
       "two-backward with find_unused_parameters=True, the fix most answers suggest.",
       "No error, and the replicas silently drift apart. With find_unused_parameters DDP routes all outputs through "
       "one node (_DDPSink), so backward(a) fires the hooks of every parameter, those of head_b and the text "
       "decoder with no gradient. Every bucket completes, the reducer finalizes at the end of backward(a) and "
       "averages task a's gradients only. backward(b+t) comes after finalize: its hooks are ignored and its "
       "gradients stay local to each rank, so each rank steps with different gradients. tinyddp warns; PyTorch "
       "says nothing.",
       "Add the losses into one backward: `tinyddp repro combined-loss --find-unused-parameters` (or without the flag)."},
      {"combined-loss", "forward; backward(a+b+t); step", false, false, false,
       "One forward, one backward of the summed task losses.",
       "Every parameter's hook fires exactly once per iteration; buckets are reduced while the backward runs and "
       "finalize averages all gradients. This is the pattern DDP is built for.",
       ""},
      {"dummy-loss", "forward; backward(a, retain); backward(dummy); backward(b+t); step", false, false, false,
       "two-backward plus a zero \"dummy\" loss (0 * sum of all parameters) backpropagated on its own, a popular "
       "workaround.",
       "The dummy backward reaches every parameter, including the 6 that backward(a) already marked ready: the hooks "
       "of the text decoder and head_b fire first, then head_a.bias (index 5) fires a second time and the reducer "
       "raises \"marked ready twice\". (Run before the task backwards instead, the dummy completes the bucket, the "
       "reducer finalizes, and both task backwards go unaveraged: see dummy-in-loss.)",
       "Add the losses into one backward: `tinyddp repro combined-loss`."},
      {"dummy-in-loss", "forward; backward(a+dummy, retain); backward(b+t); step", false, false, false,
       "The dummy term added to the first task's loss, so that its backward touches every parameter.",
       "No error, and the replicas silently drift apart. backward(a + dummy) reaches all 10 parameters, the bucket "
       "completes and the reducer finalizes at the end of it. backward(b+t) then runs after finalize: its hooks are "
       "ignored and task b's gradients are never averaged. tinyddp warns; PyTorch says nothing.",
       "Add the losses into one backward: `tinyddp repro combined-loss`."},
      {"accumulate", "forward; backward(a+b+t, retain); backward(a+b+t); step", false, false, false,
       "\"Gradient accumulation\" by two backward calls through one forward before the step.",
       "No error, and the replicas silently drift apart. The first backward completes the reduction and finalizes; "
       "the second comes after finalize, its hooks are ignored, and its gradients stay local to each rank.",
       "Accumulate over micro-batches, each with its own forward, inside no_sync() except the last: "
       "`tinyddp repro no-sync-microbatch`."},
      {"microbatch", "forward; backward(a+b+t); forward; backward(a+b+t); step", false, false, false,
       "Documented micro-batch accumulation without no_sync(): two forward/backward pairs, then one step.",
       "Each DDP forward arms the reducer again, so each backward is reduced: correct, but it communicates once per "
       "micro-batch.",
       "Correct as is. Put all micro-batches but the last inside no_sync() to reduce once: "
       "`tinyddp repro no-sync-microbatch`."},
      {"no-sync-microbatch", "no_sync{ forward; backward(a+b+t) }; forward; backward(a+b+t); step", false, false, false,
       "Micro-batch accumulation with no_sync(): the first micro-batch's forward and backward inside no_sync().",
       "Inside no_sync() the forward does not arm the reducer, so the first backward's hooks are ignored and its "
       "gradients accumulate locally; the last micro-batch's backward reduces the accumulated sum once. Note the "
       "forward must be inside no_sync() too: with only the backward inside, DDP was already armed and reduces "
       "anyway (tinyddp warns).",
       ""},
      {"detach-split", "forward(detach); backward(a); backward(b+t); step", false, false, false,
       "Graph separation with detach(): head_b and the text decoder read the trunk's output detached, then one "
       "backward per task.",
       "The two backwards touch disjoint parameters (task a: trunk and head_a; task b: head_b and the text decoder), "
       "so every hook fires once and the single first-iteration bucket completes during the second backward. It "
       "works, but only because b and t no longer train the trunk, which changes the model. With "
       "find_unused_parameters the _DDPSink joins the two graphs again and the second backward fails (the graph "
       "was freed).",
       ""},
      {"unused-param", "forward; backward(a+b+t); step", false, false, true,
       "A parameter (unused_scale, index 0) is registered but never used in the forward.",
       "Its hook never fires, so its bucket never completes: no reduction, no finalize, and the step uses "
       "un-averaged gradients. Nothing is raised until the next DDP forward checks that the previous reduction "
       "finished: \"Expected to have finished reduction in the prior iteration\", listing index 0. By then the "
       "replicas have already diverged.",
       "Pass find_unused_parameters=True (`tinyddp repro unused-param --find-unused-parameters`), or remove the "
       "parameter, or use static_graph."},
      {"no-text", "forward(no_text); backward(a+b); step", false, false, false,
       "The text decoder is not called in this forward (data without text).",
       "Parameters 8 and 9 get no gradient, their bucket never completes; the next forward raises \"Expected to "
       "have finished reduction\" listing 8 9.",
       "Pass find_unused_parameters=True: `tinyddp repro no-text --find-unused-parameters`."},
      {"drop-text", "forward(drop_text); backward(a+b); step", false, false, false,
       "The text decoder runs but its output is not returned.",
       "As no-text: no gradient reaches parameters 8 and 9. With find_unused_parameters DDP walks the graph from "
       "the returned outputs, does not reach the text decoder, and marks it unused: that works.",
       "Pass find_unused_parameters=True: `tinyddp repro drop-text --find-unused-parameters`."},
      {"unused-output", "forward; backward(a+b); step", false, false, false,
       "The text output is returned but left out of the loss.",
       "No gradient reaches the text decoder; the next forward raises \"Expected to have finished reduction\".",
       "Use every output in the loss, or pass find_unused_parameters=True: "
       "`tinyddp repro unused-output --find-unused-parameters`."},
      {"static-graph", "forward; backward(a, retain); backward(b+t); step", false, true, false,
       "two-backward with static_graph=True, suggested by the error text itself.",
       "On the first static-graph iteration the hooks only count and the reduction is delayed to the end of the "
       "backward, where the reducer finalizes. The second backward's delayed reduction then finds the reducer "
       "already finalized and PyTorch 1.13 fails an internal assertion (expect_autograd_hooks_).",
       "Add the losses into one backward: `tinyddp repro combined-loss --static-graph`."},
      {"static-graph-changed", "forward; backward(a+b+t); step; forward(no_text); backward(a+b); step", false, true,
       false,
       "static_graph=True, but the text decoder is used in one forward and skipped in the next.",
       "static_graph records which parameters get gradients in the first iteration and expects the same afterwards; "
       "when the text decoder is skipped its bucket never completes and the next forward raises the static-graph "
       "form of \"Expected to have finished reduction\".",
       "Use find_unused_parameters=True instead of static_graph when the graph changes between iterations."},
  };
  return all;
}

const Scenario* find_scenario(const std::string& name) {
  for (const Scenario& s : scenarios())
    if (s.name == name) return &s;
  return nullptr;
}

}  // namespace tinyddp::app
