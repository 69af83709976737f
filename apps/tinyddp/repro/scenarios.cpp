#include "apps/tinyddp/repro/scenarios.h"

namespace tinyddp::app {

const std::vector<Scenario>& scenarios() {
  static const std::vector<Scenario> all = {
      {"two-backward", "forward; backward(a, retain); backward(b+t); step", {},
       "One forward, then one backward per task: task a's loss first (retain_graph), then task b's (b + t).",
       "In the first iteration DDP 1.13 puts all 10 parameters in one bucket (it does not know the gradient order "
       "yet). backward(a) reaches the trunk and head_a: 6 of 10 parameters are marked ready, the bucket waits for "
       "the other 4 and nothing is reduced. backward(b+t) then reaches the trunk a second time: the hook of "
       "trunk.2.bias (index 3) fires again in the same iteration and the reducer raises \"marked ready twice\".",
       "Add the task losses and call backward once per forward: `tinyddp repro combined-loss`.", "RuntimeError at backward #2 of iteration 1"},
      {"find-unused", "forward; backward(a, retain); backward(b+t); step", {.find_unused_parameters = true},
       "two-backward with find_unused_parameters=True, the fix most answers suggest.",
       "No error, and the replicas silently drift apart. With find_unused_parameters DDP routes all outputs through "
       "one node (_DDPSink), so backward(a) fires the hooks of every parameter, those of head_b and the text "
       "decoder with no gradient. Every bucket completes, the reducer finalizes at the end of backward(a) and "
       "averages task a's gradients only. backward(b+t) comes after finalize: its hooks are ignored and its "
       "gradients stay local to each rank, so each rank steps with different gradients. tinyddp warns; PyTorch "
       "says nothing.",
       "Add the losses into one backward: `tinyddp repro combined-loss --find-unused-parameters` (or without the flag).", "ok, replicas drift apart"},
      {"combined-loss", "forward; backward(a+b+t); step", {},
       "One forward, one backward of the summed task losses.",
       "Every parameter's hook fires exactly once per iteration; buckets are reduced while the backward runs and "
       "finalize averages all gradients. This is the pattern DDP is built for.",
       "", "ok, replicas in sync"},
      {"dummy-loss", "forward; backward(a, retain); backward(dummy); backward(b+t); step", {},
       "two-backward plus a zero \"dummy\" loss (0 * sum of all parameters) backpropagated on its own, a popular "
       "workaround.",
       "The dummy backward reaches every parameter, including the 6 that backward(a) already marked ready: the hooks "
       "of the text decoder and head_b fire first, then head_a.bias (index 5) fires a second time and the reducer "
       "raises \"marked ready twice\". (Run before the task backwards instead, the dummy completes the bucket, the "
       "reducer finalizes, and both task backwards go unaveraged: see dummy-in-loss.)",
       "Add the losses into one backward: `tinyddp repro combined-loss`.", "RuntimeError at backward #2 of iteration 1"},
      {"dummy-in-loss", "forward; backward(a+dummy, retain); backward(b+t); step", {},
       "The dummy term added to the first task's loss, so that its backward touches every parameter.",
       "No error, and the replicas silently drift apart. backward(a + dummy) reaches all 10 parameters, the bucket "
       "completes and the reducer finalizes at the end of it. backward(b+t) then runs after finalize: its hooks are "
       "ignored and task b's gradients are never averaged. tinyddp warns; PyTorch says nothing.",
       "Add the losses into one backward: `tinyddp repro combined-loss`.", "ok, replicas drift apart"},
      {"accumulate", "forward; backward(a+b+t, retain); backward(a+b+t); step", {},
       "\"Gradient accumulation\" by two backward calls through one forward before the step.",
       "No error, and the replicas silently drift apart. The first backward completes the reduction and finalizes; "
       "the second comes after finalize, its hooks are ignored, and its gradients stay local to each rank.",
       "Accumulate over micro-batches, each with its own forward, inside no_sync() except the last: "
       "`tinyddp repro no-sync-microbatch`.", "ok, replicas drift apart"},
      {"microbatch", "forward; backward(a+b+t); forward; backward(a+b+t); step", {},
       "Documented micro-batch accumulation without no_sync(): two forward/backward pairs, then one step.",
       "Each DDP forward arms the reducer again, so each backward is reduced: correct, but it communicates once per "
       "micro-batch.",
       "Correct as is. Put all micro-batches but the last inside no_sync() to reduce once: "
       "`tinyddp repro no-sync-microbatch`.", "ok, replicas in sync"},
      {"no-sync-microbatch", "no_sync{ forward; backward(a+b+t) }; forward; backward(a+b+t); step", {},
       "Micro-batch accumulation with no_sync(): the first micro-batch's forward and backward inside no_sync().",
       "Inside no_sync() the forward does not arm the reducer, so the first backward's hooks are ignored and its "
       "gradients accumulate locally; the last micro-batch's backward reduces the accumulated sum once. Note the "
       "forward must be inside no_sync() too: with only the backward inside, DDP was already armed and reduces "
       "anyway (tinyddp warns).",
       "", "ok, replicas in sync"},
      {"detach-split", "forward(detach); backward(a); backward(b+t); step", {},
       "Graph separation with detach(): head_b and the text decoder read the trunk's output detached, then one "
       "backward per task.",
       "The two backwards touch disjoint parameters (task a: trunk and head_a; task b: head_b and the text decoder), "
       "so every hook fires once and the single first-iteration bucket completes during the second backward. It "
       "works, but only because b and t no longer train the trunk, which changes the model. With "
       "find_unused_parameters the _DDPSink joins the two graphs again and the second backward fails (the graph "
       "was freed).",
       "", "ok, replicas in sync"},
      {"unused-param", "forward; backward(a+b+t); step", {.extra_unused_parameter = true},
       "A parameter (unused_scale, index 0) is registered but never used in the forward.",
       "Its hook never fires, so its bucket never completes: no reduction, no finalize, and the step uses "
       "un-averaged gradients. Nothing is raised until the next DDP forward checks that the previous reduction "
       "finished: \"Expected to have finished reduction in the prior iteration\", listing index 0. By then the "
       "replicas have already diverged.",
       "Pass find_unused_parameters=True (`tinyddp repro unused-param --find-unused-parameters`), or remove the "
       "parameter, or use static_graph.", "RuntimeError at forward #1 of iteration 2"},
      {"no-text", "forward(no_text); backward(a+b); step", {},
       "The text decoder is not called in this forward (data without text).",
       "Parameters 8 and 9 get no gradient, their bucket never completes; the next forward raises \"Expected to "
       "have finished reduction\" listing 8 9.",
       "Pass find_unused_parameters=True: `tinyddp repro no-text --find-unused-parameters`.", "RuntimeError at forward #1 of iteration 2"},
      {"drop-text", "forward(drop_text); backward(a+b); step", {},
       "The text decoder runs but its output is not returned.",
       "As no-text: no gradient reaches parameters 8 and 9. With find_unused_parameters DDP walks the graph from "
       "the returned outputs, does not reach the text decoder, and marks it unused: that works.",
       "Pass find_unused_parameters=True: `tinyddp repro drop-text --find-unused-parameters`.", "RuntimeError at forward #1 of iteration 2"},
      {"unused-output", "forward; backward(a+b); step", {},
       "The text output is returned but left out of the loss.",
       "No gradient reaches the text decoder; the next forward raises \"Expected to have finished reduction\".",
       "Use every output in the loss, or pass find_unused_parameters=True: "
       "`tinyddp repro unused-output --find-unused-parameters`.", "RuntimeError at forward #1 of iteration 2"},
      {"static-graph", "forward; backward(a, retain); backward(b+t); step", {.static_graph = true},
       "two-backward with static_graph=True, suggested by the error text itself.",
       "On the first static-graph iteration the hooks only count and the reduction is delayed to the end of the "
       "backward, where the reducer finalizes. The second backward's delayed reduction then finds the reducer "
       "already finalized and PyTorch 1.13 fails an internal assertion (expect_autograd_hooks_).",
       "Add the losses into one backward: `tinyddp repro combined-loss --static-graph`.", "RuntimeError at backward #2 of iteration 1"},
      {"static-graph-changed", "forward; backward(a+b+t); step; forward(no_text); backward(a+b); step", {.static_graph = true},
       "static_graph=True, but the text decoder is used in one forward and skipped in the next.",
       "static_graph records which parameters get gradients in the first iteration and expects the same afterwards; "
       "when the text decoder is skipped its bucket never completes and the next forward raises the static-graph "
       "form of \"Expected to have finished reduction\".",
       "Use find_unused_parameters=True instead of static_graph when the graph changes between iterations.", "RuntimeError at forward #1 of iteration 2"},
      // ---- issue 11: the patterns behind the public reports of the same two errors ----
      {"checkpoint", "forward(ckpt); backward(a+b+t); step", {.find_unused_parameters = true},
       "trunk.2 wrapped in torch.utils.checkpoint.checkpoint (1.13's default use_reentrant=True) to save memory, with "
       "find_unused_parameters=True (microsoft/FocalNet#4, huggingface/peft#313, pytorch/pytorch#24005).",
       "The reentrant checkpoint runs trunk.2 under no_grad in the forward: its output's only graph node is "
       "CheckpointFunctionBackward, whose edges lead to trunk.2's input, not to its parameters. DDP's unused-parameter "
       "search walks that graph from the outputs, does not reach trunk.2.weight and trunk.2.bias (2, 3), and marks "
       "them ready at the first hook. The checkpoint's backward then re-runs trunk.2 with grad enabled and calls the "
       "engine re-entrantly; inside that nested backward the hooks of trunk.2's parameters fire, and trunk.2.bias "
       "(index 3) is marked ready a second time.",
       "use_reentrant=False, which keeps trunk.2's parameters in the forward graph "
       "(`tinyddp repro checkpoint-non-reentrant`), or static_graph=True (`tinyddp repro checkpoint-static-graph`), "
       "or no find_unused_parameters when nothing is unused (`tinyddp repro checkpoint-no-find-unused`).",
       "RuntimeError at backward #1 of iteration 1"},
      {"checkpoint-no-find-unused", "forward(ckpt); backward(a+b+t); step", {},
       "Reentrant checkpointing of trunk.2 without find_unused_parameters.",
       "Without the unused-parameter search nothing is marked ready early: the hooks of trunk.2's parameters fire "
       "once, inside the checkpoint's nested backward, and the bucket completes in the outer one.",
       "", "ok, replicas in sync"},
      {"checkpoint-non-reentrant", "forward(ckpt_nr); backward(a+b+t); step", {.find_unused_parameters = true},
       "checkpoint(trunk[2], h, use_reentrant=False) with find_unused_parameters=True.",
       "The non-reentrant form runs the forward with grad enabled under saved-tensor hooks: the graph holds trunk.2's "
       "parameters as usual (only the tensors it saves are dropped and recomputed at unpack), so DDP finds them and "
       "their hooks fire once, in the one backward. PyTorch warns that find_unused_parameters found nothing unused.",
       "", "ok, replicas in sync"},
      {"checkpoint-static-graph", "forward(ckpt); backward(a+b+t); step", {.find_unused_parameters = true, .static_graph = true},
       "Reentrant checkpointing with static_graph=True (the error text's suggestion), find_unused_parameters left on.",
       "static_graph makes the reducer learn in the first iteration which parameters get gradients and how often, and "
       "from then on it counts hooks instead of marking parameters ready once: the nested backward's hooks are "
       "expected. PyTorch warns that find_unused_parameters is redundant with it.",
       "", "ok, replicas in sync"},
      {"reuse", "forward(reuse); backward(a+b+t); step", {},
       "trunk.2 applied twice in the forward (shared weights), no checkpointing.",
       "A parameter used twice in one graph has one AccumulateGrad node; the engine sums both gradients before that "
       "node runs, so its hook fires once and DDP is content.",
       "", "ok, replicas in sync"},
      {"reuse-checkpoint", "forward(reuse, ckpt); backward(a+b+t); step", {},
       "trunk.2 applied twice, each application checkpointed (use_reentrant=True) (pytorch/pytorch#55248, "
       "lucidrains/DALLE2-pytorch#225).",
       "Each checkpoint has its own nested backward, and each nested backward accumulates into trunk.2's parameters "
       "and fires their hooks: trunk.2.bias (index 3) is marked ready twice in one iteration, with or without "
       "find_unused_parameters. This is reason 2) of the error text.",
       "static_graph=True, which expects every hook the first iteration saw (`tinyddp repro reuse-checkpoint-static-graph`), "
       "or use_reentrant=False (`tinyddp repro reuse-checkpoint-non-reentrant`).",
       "RuntimeError at backward #1 of iteration 1"},
      {"reuse-checkpoint-static-graph", "forward(reuse, ckpt); backward(a+b+t); step", {.static_graph = true},
       "reuse-checkpoint with static_graph=True.",
       "In its first iteration the static graph counts how many times each parameter's hook fires (twice for trunk.2's) "
       "and afterwards reduces a parameter after its last expected hook.",
       "", "ok, replicas in sync"},
      {"reuse-checkpoint-non-reentrant", "forward(reuse, ckpt_nr); backward(a+b+t); step", {},
       "reuse-checkpoint with use_reentrant=False.",
       "No nested backward: both applications are in the one graph, the gradients meet in trunk.2's AccumulateGrad "
       "nodes, and each hook fires once.",
       "", "ok, replicas in sync"},
      {"multi-forward", "forward; forward(no_text); backward(a@1+b@2+t@1); step", {.find_unused_parameters = true},
       "Two DDP forwards (one per task or dataset), then one loss over both forwards' outputs, with "
       "find_unused_parameters=True (pytorch/pytorch#60844, #105723).",
       "Each DDP forward re-arms the reducer and searches for unused parameters from its own outputs. The second "
       "forward skips the text decoder, so DDP marks its parameters (8, 9) unused, i.e. ready at the first hook. The "
       "loss also reads t from the first forward, whose graph reaches the text decoder: its hooks fire in the same "
       "backward and text_decoder.bias (index 9) is marked ready twice.",
       "One backward per forward (`tinyddp repro --plan \"forward; backward(a+t); forward(no_text); backward(b); step\" "
       "--find-unused-parameters`), or make the last forward the one that uses every parameter "
       "(`tinyddp repro --plan \"forward(no_text); forward; backward(a@1+b@1+t@2); step\" --find-unused-parameters`), or "
       "drop find_unused_parameters when every parameter is used (`tinyddp repro multi-forward --no-find-unused-parameters`).",
       "RuntimeError at backward #1 of iteration 1"},
      {"outside-forward", "forward(no_text, features); backward(a+b+t_outside); step", {.find_unused_parameters = true},
       "The text decoder applied outside the DDP forward, to the features the forward returned: "
       "ddp.module.text_decoder(features) (pytorch/pytorch#19515).",
       "DDP's forward returns a, b and the features; the search from those outputs does not reach the text decoder, "
       "so its parameters (8, 9) are marked ready at the first hook. The loss then backpropagates through "
       "ddp.module.text_decoder, whose hooks fire anyway: text_decoder.bias (index 9) is marked ready twice.",
       "Call every submodule inside the DDP forward (return t from it), or drop find_unused_parameters: "
       "`tinyddp repro outside-forward --no-find-unused-parameters` (then the decoder's gradients are averaged with "
       "the rest, because every parameter's hook fires once).",
       "RuntimeError at backward #1 of iteration 1"},
      {"freeze-after-wrap", "iter(2+){ freeze(head_b) }; forward; backward(a+b+t); step", {},
       "head_b.requires_grad_(False) from iteration 2 on, after DDP was built (pytorch/pytorch#22049, "
       "facebookresearch/ClassyVision#398).",
       "DDP decides at construction which parameters it reduces and keeps expecting a hook for each. A frozen "
       "parameter gets no AccumulateGrad node, so from iteration 2 the hooks of head_b (6, 7) never fire, the bucket "
       "never completes, and the forward of iteration 3 raises \"Expected to have finished reduction\" listing 6 7.",
       "Freeze before wrapping the model in DDP, or pass find_unused_parameters=True "
       "(`tinyddp repro freeze-after-wrap --find-unused-parameters`), which marks the frozen parameters unused.",
       "RuntimeError at forward #1 of iteration 3"},
      {"rank-divergent", "rank(0){ forward; backward(a+b+t) }; rank(1){ forward(no_text); backward(a+b) }; step", {},
       "A data-dependent branch: rank 1's batch has no text, so rank 1 skips the text decoder (lhotse-speech/lhotse#554, "
       "WongKinYiu/yolov9#559).",
       "Rank 0 completes its bucket and starts the allreduce; rank 1 never gets hooks for 8 and 9, so it launches "
       "nothing, ends its backward without reducing, steps, and raises \"Expected to have finished reduction\" at its "
       "next forward. Rank 0 meanwhile waits in the allreduce that rank 1 never joins: in PyTorch it gets gloo's "
       "\"Connection closed by peer\" when rank 1's process exits (or waits out the timeout). Each rank ends "
       "differently; tinyddp reports both.",
       "Pass find_unused_parameters=True (`tinyddp repro rank-divergent --find-unused-parameters`): every rank then "
       "allreduces which parameters were used, and rank 1 contributes zeros for the text decoder.",
       "rank 0: RuntimeError at backward #1 of iteration 1; rank 1: RuntimeError at forward #1 of iteration 2"},
      {"uneven-inputs", "forward; backward(a+b+t); step", {.rank_iterations = {3, 2}},
       "Uneven inputs: rank 0 has 3 batches, rank 1 only 2 (pytorch/pytorch#33148, #38174).",
       "Rank 1 finishes its loop after 2 iterations and its program ends. Rank 0's third backward starts an allreduce "
       "that no other rank joins: in PyTorch it fails when rank 1's process exits (gloo: \"Connection closed by "
       "peer\") or hangs until the timeout.",
       "Wrap the loop in `with ddp.join():` (`tinyddp repro uneven-inputs-join`): the rank that ran out shadows the "
       "others' collectives with zeros until every rank is done.",
       "rank 0: RuntimeError at backward #1 of iteration 3; rank 1: ok"},
      {"uneven-inputs-join", "forward; backward(a+b+t); step", {.rank_iterations = {3, 2}, .join = true},
       "uneven-inputs with the loop inside `with ddp.join():` (torch.distributed.algorithms.join).",
       "When rank 1 runs out it enters the join loop: for every iteration rank 0 still runs, it allreduces a zero to "
       "count the ranks not yet joined, then shadows the backward's bucket allreduces with zero gradients. Rank 0's "
       "gradients are divided by the initial world size (2) as usual. At the end the last rank to join broadcasts "
       "its parameters, so the replicas end in sync.",
       "", "ok, replicas in sync"},
      {"uneven-inputs-join-throw", "forward; backward(a+b+t); step",
       {.rank_iterations = {3, 2}, .join = true, .join_throw_on_early_termination = true},
       "ddp.join(throw_on_early_termination=True): stop every rank as soon as one runs out.",
       "The rank that runs out announces it with an allreduce and raises \"Rank 1 exhausted all inputs.\" as the "
       "join context exits; the others see it in the check their next forward makes and raise \"Detected at least one "
       "rank that exhausted inputs.\"",
       "", "rank 0: RuntimeError at forward #1 of iteration 3; rank 1: RuntimeError at join exit"},
      {"buffer-two-forwards", "forward; forward; backward(a@1+b@1+t@1+a@2+b@2+t@2); step", {.buffer = true},
       "A model with a registered buffer (like BatchNorm's running stats) read in forward; two DDP forwards before one "
       "backward, as a GAN's D(real) and D(fake) (pytorch/pytorch#22095, #65907, XPixelGroup/BasicSR#322).",
       "With broadcast_buffers=True (the default) every DDP forward copies rank 0's buffers into every rank's buffers "
       "in place, which bumps their version counters. The first forward saved feature_scale (for the product h * "
       "feature_scale) at version 2; the second forward's broadcast made it version 3; the backward through the "
       "first forward finds the saved tensor modified: autograd's \"modified by an inplace operation\", on every rank "
       "(rank 0, the source, copies too).",
       "broadcast_buffers=False (`tinyddp repro buffer-two-forwards --no-broadcast-buffers`), or one DDP forward per "
       "backward, or run both inputs through one forward (torch.cat).",
       "RuntimeError at backward #1 of iteration 1"},
      {"buffer-two-forwards-no-broadcast", "forward; forward; backward(a@1+b@1+t@1+a@2+b@2+t@2); step",
       {.buffer = true, .broadcast_buffers = false},
       "buffer-two-forwards with broadcast_buffers=False.",
       "No in-place copy between the forwards, so the saved buffer is intact; the second forward re-arms the reducer "
       "and the one backward reaches every parameter once per AccumulateGrad node. The buffers are then each rank's "
       "own (here they never change).",
       "", "ok, replicas in sync"},
      {"autograd-grad", "forward; grad(a+b+t); step", {},
       "Gradients by torch.autograd.grad, assigned to .grad by hand (gradient penalties, MAML, GradNorm; "
       "pytorch/pytorch#47562).",
       "autograd.grad captures the gradients at the parameters instead of running their AccumulateGrad nodes, so "
       "DDP's hooks never fire and nothing is averaged. With every parameter left waiting the reducer has nothing in "
       "flight, so the next forward raises nothing either: each rank steps with its own gradients and the replicas "
       "drift apart. PyTorch says nothing; tinyddp warns before the step.",
       "Use loss.backward() (with inputs=... to restrict it), or allreduce the gradients yourself before the step "
       "(dist.all_reduce(p.grad); p.grad /= world_size).",
       "ok, replicas drift apart"},
      {"create-graph", "forward; backward(a+b+t, create_graph); step", {},
       "loss.backward(create_graph=True) under DDP, as the textbook GradNorm and gradient-penalty code does "
       "(pytorch/pytorch#63812, #63929).",
       "With create_graph the gradients require grad and DDP's hooks run with grad mode on, so the reducer's copy "
       "of a gradient into its bucket view is an in-place op autograd records. PyTorch 1.13 logs (C++ glog, every "
       "1000th time, not a Python warning) \"Using DistributedDataParallel with create_graph=True  is not "
       "well-supported\", copies the first gradient, and so gives the bucket's flat tensor history; every other "
       "view of that bucket is then, to autograd, a leaf that requires grad, and the next copy raises \"a leaf "
       "Variable that requires grad is being used in an in-place operation.\" inside the backward, on every rank, "
       "before any allreduce. All 10 parameters share one bucket here (1.13's buckets are 1 MiB and more). Only "
       "a bucket holding a single parameter survives: its gradient is averaged, but its higher-order graph is "
       "this rank's gradient / world size, never synchronized (dist test CreateGraphSingleParameter).",
       "Keep create_graph off DDP's backward: take the higher-order part with torch.autograd.grad(..., "
       "create_graph=True), which runs no DDP hook, add it to the loss, and call loss.backward() once without "
       "create_graph; its hooks run in no-grad mode (golden: ddp_create_graph_single.json, recipes).",
       "RuntimeError at backward #1 of iteration 1"},
      {"static-graph-per-task-grad", "forward; grad(a, retain); grad(b+t, retain); backward(a+b+t); step",
       {.static_graph = true},
       "static_graph=True, per-task gradients by torch.autograd.grad (gradient surgery, GradNorm's G_i), then one "
       "backward of the summed loss.",
       "In static_graph's first iteration DDP routes the outputs through _DDPSink, whose backward queues the "
       "delayed allreduce whatever the backward is: the first grad() already runs delay_all_reduce and finalizes "
       "the reducer, and the second grad() queues it again with nothing armed, so PyTorch 1.13 fails its internal "
       "assertion expect_autograd_hooks_ there. Without static_graph (or from iteration 2 on) the same plan works.",
       "Leave static_graph off for this pattern, or run a plain first iteration (forward; backward) before the "
       "first autograd.grad through the DDP outputs.",
       "RuntimeError at grad #2 of iteration 1"},
      {"static-graph-dropped", "iter(1){ forward; backward(a+b+t) }; iter(2+){ forward(no_text); backward(a+b) }; step",
       {.static_graph = true},
       "static_graph=True, and from iteration 2 on the forward skips the text decoder (pytorch/pytorch#97030).",
       "static_graph records in iteration 1 that every parameter gets a gradient. In iteration 2 the text decoder's "
       "hooks never fire, its bucket never completes, and the forward of iteration 3 raises the static-graph form "
       "of \"Expected to have finished reduction\" listing 8 9. The step of iteration 2 used un-averaged gradients.",
       "find_unused_parameters=True without static_graph when the graph changes between iterations.",
       "RuntimeError at forward #1 of iteration 3"},
      {"static-graph-added", "iter(1){ forward(no_text); backward(a+b) }; iter(2+){ forward; backward(a+b+t) }; step",
       {.static_graph = true},
       "static_graph=True, with the text decoder skipped in iteration 1 and used from iteration 2 on.",
       "Iteration 1 taught the reducer that the text decoder is unused; when its hooks fire in iteration 2 the "
       "reducer raises \"Your training graph has changed in this iteration\" inside the backward.",
       "find_unused_parameters=True without static_graph.",
       "RuntimeError at backward #1 of iteration 2"},
      {"static-graph-no-sync-first", "no_sync{ forward; backward(a+b+t) }; forward; backward(a+b+t); step",
       {.static_graph = true},
       "static_graph=True with no_sync() gradient accumulation from the very first step (pytorch/pytorch#143580).",
       "Iteration 1 runs: its synchronized second micro-batch is the static graph's first iteration. In iteration 2 the "
       "backward inside no_sync() reaches the static graph's delayed-reduction path although no forward armed the "
       "reducer, and PyTorch 1.13 fails its internal assertion expect_autograd_hooks_ (a PyTorch bug report, not a "
       "user error).",
       "Do not combine static_graph with no_sync() in 1.13: use find_unused_parameters (or neither) for accumulation.",
       "RuntimeError at backward #1 of iteration 2"},
      {"static-graph-forward-without-backward", "forward; forward; backward(a+b+t); step", {.static_graph = true},
       "static_graph=True and a forward whose output is never backpropagated before the next forward "
       "(pytorch/pytorch#58111).",
       "The static graph's first iteration is recorded from the first forward; the second forward arms the reducer "
       "again, and its backward looks to the reducer like a different graph: \"Your training graph has changed\".",
       "Run the extra forward under torch.no_grad(), or one forward per backward.",
       "RuntimeError at backward #1 of iteration 1"},
      {"checkpoint-frozen-input", "iter(1){ freeze(trunk.0) }; forward(ckpt); backward(a+b+t); step", {},
       "Frozen layers (trunk.0, like frozen embeddings) in front of a reentrant-checkpointed block (TinyLLaVA#144, "
       "artidoro/qlora#224).",
       "The checkpointed block's input does not require grad, so the reentrant checkpoint's output does not either: "
       "PyTorch warns \"None of the inputs have requires_grad=True. Gradients will be None\" and trunk.2 gets no "
       "gradient at all. Together with the frozen trunk.0 (frozen after wrapping), 0 1 2 3 never receive a gradient "
       "and the next forward raises \"Expected to have finished reduction\".",
       "use_reentrant=False, which trains trunk.2 even when its input needs no grad, with find_unused_parameters=True "
       "for the frozen layer (`tinyddp repro checkpoint-frozen-input-non-reentrant`); or make the input require grad "
       "(h.requires_grad_()).",
       "RuntimeError at forward #1 of iteration 2"},
      {"checkpoint-frozen-input-non-reentrant", "iter(1){ freeze(trunk.0) }; forward(ckpt_nr); backward(a+b+t); step",
       {.find_unused_parameters = true},
       "checkpoint-frozen-input with use_reentrant=False and find_unused_parameters=True.",
       "The non-reentrant checkpoint keeps trunk.2's parameters in the graph whether or not its input requires grad, "
       "and the unused-parameter search marks the frozen trunk.0 unused every iteration.",
       "", "ok, replicas in sync"},
      {"gan", "forward; disc(real); disc(fake_detached); backward(d_real+d_fake); disc_step; freeze(disc); disc(fake); backward(g_adv); unfreeze(disc); step", {.gan = true},
       "A GAN with two DDP models and two optimizers: the scenario model is the generator (its text output t is "
       "the fake sample), a discriminator has its own DDP; the D step scores real and fake.detach(), the G step "
       "freezes D and backpropagates D(fake) into G.",
       "Each DDP has its own reducer on the one process group, and the D step works: fake.detach() keeps the D "
       "loss out of G's graph, and freezing D in the G step leaves D's reducer with no hook to wait for (1.13 "
       "only complains about a reduction that started). But the G loss reaches only the trunk and the text "
       "decoder: head_a and head_b (4 5 6 7) get no gradient, G's bucket never completes, and G's next forward "
       "raises \"Expected to have finished reduction\" listing 4 5 6 7.",
       "find_unused_parameters=True for the generator's parameters that a step does not reach "
       "(`tinyddp repro gan --find-unused-parameters`), or give every generator parameter a loss in the G step "
       "(`tinyddp repro gan-task-losses`).",
       "RuntimeError at forward #1 of iteration 2"},
      {"gan-task-losses", "forward; disc(real); disc(fake_detached); backward(d_real+d_fake); disc_step; freeze(disc); disc(fake); backward(g_adv+a+b+t); unfreeze(disc); step", {.gan = true},
       "The GAN with the generator also trained on its task losses in the G step (g_adv + a + b + t).",
       "Every generator parameter gets its one gradient in the G step, so G's reduction completes; the frozen D "
       "was armed by its forward but no hook fired, which 1.13 lets pass.",
       "", "ok, replicas in sync"},
      {"gan-no-detach", "forward; disc(real); disc(fake); backward(d_real+d_fake); disc_step; freeze(disc); disc(fake); backward(g_adv); unfreeze(disc); step", {.gan = true},
       "The GAN's D step on disc(fake) without fake.detach().",
       "The D loss then reaches the generator's graph, and its backward frees that graph (no retain_graph). The G "
       "step backpropagates D(fake) through the same generator forward again: autograd's \"Trying to backward "
       "through the graph a second time\".",
       "fake.detach() in the D step (`tinyddp repro gan-task-losses` shows the working loop).",
       "RuntimeError at backward #2 of iteration 1"},
      // ---- issue 16: gradient surgery (PCGrad, MGDA) under DDP; golden: tests/golden/ddp_surgery.json ----
      {"pcgrad-naive", "forward; backward(a, retain); backward(b, retain); backward(t, retain); step", {},
       "PCGrad's and MGDA's public loop (WeiChengTseng/Pytorch-PCGrad's pc_backward, LibMTL): one forward, then per "
       "task zero_grad, backward(retain_graph=True) and a copy of .grad, then the projection of the copies into "
       ".grad and one step (WeiChengTseng/Pytorch-PCGrad#5, #16; median-research-group/LibMTL#16).",
       "Each per-task backward reaches the shared trunk, and DDP marks a parameter ready when its hook fires. "
       "backward(a) marks the trunk and head_a (6 of 10 parameters, one first-iteration bucket that waits for the "
       "rest); backward(b) reaches the trunk again, and the hook of trunk.2.bias (index 3) fires a second time in "
       "the iteration: \"marked as ready twice\", at the second backward, before any projection runs. Even where "
       "it ran (find_unused_parameters: `tinyddp repro pcgrad-naive-find-unused`), DDP would average the first "
       "task's gradients only, and the surgery needs each task's global gradient, which no single backward gives.",
       "Take the per-task gradients of the shared parameters with autograd.grad, which fires no DDP hook, average "
       "them over ranks in one allreduce, run the surgery on every rank alike, and give it to one backward "
       "(`tinyddp repro pcgrad-per-task-grad`; the full recipe: `tinyddp train --weighting pcgrad --ranks 2`, "
       "docs/multitask.md).",
       "RuntimeError at backward #2 of iteration 1"},
      {"pcgrad-naive-find-unused", "forward; backward(a, retain); backward(b, retain); backward(t, retain); step",
       {.find_unused_parameters = true},
       "pcgrad-naive with find_unused_parameters=True, the usual answer to the error.",
       "No error, and the replicas silently drift apart. The unused-parameter search makes backward(a) fire every "
       "hook (those it does not reach as unused), the reducer finalizes at its end and averages task a's gradients "
       "only; backward(b) and backward(t) come after finalize, their hooks are ignored and their gradients stay "
       "local. A projection of .grad would then mix one averaged task with local ones, differently on each rank. "
       "tinyddp warns; PyTorch says nothing.",
       "The per-task gradients by autograd.grad and one backward: `tinyddp repro pcgrad-per-task-grad`.",
       "ok, replicas drift apart"},
      {"pcgrad-per-task-grad", "forward; grad(a, retain); grad(b, retain); grad(t, retain); backward(a+b+t); step", {},
       "Per-task gradients by torch.autograd.grad, then one backward: the structure of tinyddp's PCGrad and MGDA "
       "recipe as DDP sees it (the plan's grad() also assigns .grad by hand, which the backward then adds to).",
       "autograd.grad returns gradients without running the parameters' AccumulateGrad nodes, so no DDP hook fires "
       "and nothing is marked ready. The one backward then fires every hook exactly once, its buckets are reduced "
       "and the replicas stay in sync. In tinyddp's recipe the per-task gradients are averaged over ranks between "
       "the grads and the backward (one flat allreduce), the surgery runs on every rank alike, and the backward's "
       "loss carries the surgery's result into the shared parameters' gradients.",
       "", "ok, replicas in sync"},
  };
  return all;
}

const Scenario* find_scenario(const std::string& name) {
  for (const Scenario& s : scenarios())
    if (s.name == name) return &s;
  return nullptr;
}

}  // namespace tinyddp::app
