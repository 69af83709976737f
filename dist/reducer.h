// The Reducer: averages gradients across ranks while the backward runs, as PyTorch 1.13's does.
//
// Life of one iteration (DistributedDataParallel drives the first three calls):
//   prepare_for_forward()     counts the iteration
//   rebuild_buckets()         first raises if the previous iteration's reduction never finished
//                             ("Expected to have finished reduction ..."); once, after the first
//                             iteration, re-buckets parameters in the order their gradients arrived
//   prepare_for_backward(out) arms the hooks; with find_unused_parameters, walks the graph from the
//                             forward's outputs to find parameters that will get no gradient
//   autograd_hook(i)          fired after AccumulateGrad wrote parameter i's .grad; marks it ready:
//                             copies grad / world_size into its bucket (under a Join, maybe / the
//                             number of ranks still running); a bucket whose parameters are all ready
//                             is allreduced, strictly in bucket index order
//   finalize_backward()       queued on the engine when the last bucket launched; runs after the whole
//                             backward: waits for every bucket and copies the averages into .grad
//
// Note [Why buckets launch in index order]
//   Every rank must issue the same collectives in the same order, or sums mix different buckets (or
//   hang). Gradients may become ready in a different order on different ranks, so a bucket that is ready
//   early waits for all lower-indexed buckets.
//
// Note [Hooks the reducer does not expect]  (tinyddp's addition; PyTorch stays silent)
//   After finalize, hooks are ignored until the next DDP forward arms them. That is right for the
//   documented no_sync() accumulation (forward and backward inside no_sync), but a second backward in
//   the same iteration, or any backward after finalize, accumulates gradients locally that are never
//   averaged: replicas silently drift apart. tinyddp reports such gradients (DDPOptions::unsynced_grads).
//
// Note [The reducer's hook]
//   It is a post hook on each parameter's AccumulateGrad node, not a post-accumulate-grad hook on the
//   parameter (PyTorch 1.13 does the same): the node runs, and its post hooks fire, also when only an
//   undefined gradient reached it (an output left out of the loss, routed through _DDPSink), and such a
//   parameter must be marked ready too; AccumulateGrad then returns before its post-accumulate-grad hooks.
//   Of the gradient it is handed, the hook keeps only whether it is defined, and reads .grad: that is what
//   is averaged, since it also holds what earlier backwards accumulated (no_sync) and what the parameter's
//   own hooks changed. It is a contiguous tensor of its own (AccumulateGrad takes the incoming buffer when it is
//   one and no one else holds it, else copies it), while the handed gradient may be a stride-0 expand, so
//   reading the handed one would save no copy. The hook reads it once: one pass, grad / world size into the
//   bucket (or, when .grad already is the bucket view, an in-place division), and no buffer is allocated per
//   step (tests/dist/ddp_step_alloc_test.cpp counts them).
//
// Note [Static graph]
//   static_graph=True promises that every iteration uses the same parameters and fires each one's hook
//   the same number of times. The first iteration only counts: each hook adds one to its parameter's
//   count (StaticGraphState::hooks_per_param) and returns, and DDP's _DDPSink queues delay_all_reduce()
//   for the end of the backward, which reduces every bucket at once, records the parameters whose count
//   is 0 as unused for good, and finalizes. Later iterations count down from those numbers and mark a
//   parameter ready when its count reaches 0, so a parameter whose hook fires twice per backward
//   (reentrant checkpointing) is reduced once, after its last hook. The buckets are rebuilt one forward
//   later than without a static graph, since the first iteration records no gradient order.
//
// Note [create_graph under DDP]
//   Under backward(create_graph=True) the gradients require grad, and the hooks run with grad mode on, so
//   PyTorch 1.13's copy of a gradient into its bucket view is an autograd-recorded in-place op
//   (reducer.cpp, Reducer::mark_variable_ready_dense: `bucket_view.copy_(at::mul(grad, 1 / div_factor_))`,
//   after a C10_LOG_EVERY_N log line, not a Python warning). The views are `as_strided` views of the
//   bucket's flat tensor (Reducer::initialize_bucket_views): the first such copy gives that tensor history,
//   and from then on every other view of it that has no history of its own is, to autograd's in-place
//   check, a leaf that requires grad. The next write into any of them (copy_, div_, zero_) raises "a leaf
//   Variable that requires grad is being used in an in-place operation.", and a mul_out into one raises
//   the out= error. So a bucket holding two parameters or more fails at the second write, on every rank,
//   before any collective; a bucket holding one parameter works: allreduce averages the values, and .grad
//   keeps a graph, but through this rank's gradient / world size only (the allreduce is invisible to
//   autograd), so higher-order gradients are not synchronized (golden: tests/golden/
//   ddp_create_graph*.json). tinyddp does not record in-place ops; it keeps these flags per bucket and raises
//   where PyTorch does, and builds .grad with the same value and derivative in finalize.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "dist/bucket_assignment.h"
#include "dist/debug_level.h"
#include "dist/process_group.h"
#include "engine/autograd/node.h"

namespace tinyddp::trace {
class Span;   // base/trace.h
}

namespace tinyddp::dist {

// What to do when a gradient reaches a parameter while no reduction is expected (see the Note above).
enum class UnsyncedGradPolicy { warn, error, ignore };

// Where a reducer warning surfaces in a 1.13 Python script; the Python binding routes on it (a C++ program
// prints them all).
//   python:  a TORCH_WARN raised inside backward() (on the calling thread, under the warning handler of
//            1.13's binding) or a warnings.warn of 1.13's DDP: Python's `warnings` records it.
//   c10_log: a TORCH_WARN raised in the forward's prepare_for_backward, where 1.13's binding installs no
//            handler: printed by c10, never recorded by `warnings`.
//   tinyddp: tinyddp's own diagnosis, which 1.13 does not give: printed, not recorded, so that a script
//            records exactly the warnings it records under 1.13.
enum class WarningOrigin { python, c10_log, tinyddp };
using WarningHandler = std::function<void(const std::string& message, WarningOrigin origin)>;

// A bucket as a comm hook sees it: a flat buffer of gradients (not divided by world size).
struct GradBucket {
  size_t index = 0;
  Tensor buffer;
  std::vector<size_t> parameter_indices;
  bool is_last = false;
};
// A comm hook starts the reduction of bucket.buffer and returns its Work; when the Work completes,
// bucket.buffer must hold the averaged gradients. See comm_hooks.h for the built-in ones.
using CommHook = std::function<std::shared_ptr<Work>(ProcessGroup& pg, GradBucket& bucket)>;

// What the reducer did, in order, for timelines and tests (`tinyddp repro` prints these).
struct ReducerEvent {
  enum class Kind { hook, hook_ignored, marked_ready, marked_unused, bucket_launched, finalized, rebuilt } kind;
  size_t index = 0;        // parameter index (hook, marked_*), bucket index (bucket_launched)
  std::string detail;
};

struct ReducerOptions {
  size_t bucket_bytes_cap = kDefaultBucketBytesCap;
  size_t first_bucket_bytes = kDefaultFirstBucketBytes;
  bool find_unused_parameters = false;
  bool gradient_as_bucket_view = false;
  DebugLevel debug_level = DebugLevel::off;
  UnsyncedGradPolicy unsynced_grads = UnsyncedGradPolicy::warn;
};

class Reducer {
 public:
  // bucket_indices: the initial buckets (see bucket_assignment.h), in launch order.
  Reducer(std::vector<Tensor> params, std::vector<std::string> names, std::vector<std::vector<size_t>> bucket_indices,
          std::shared_ptr<ProcessGroup> process_group, ReducerOptions options);
  ~Reducer();
  Reducer(const Reducer&) = delete;
  Reducer& operator=(const Reducer&) = delete;

  void prepare_for_forward();
  bool rebuild_buckets();
  bool has_rebuilt_buckets() const { return has_rebuilt_bucket_; }
  void prepare_for_backward(const std::vector<Tensor>& outputs);
  void set_static_graph();
  // Static graph, first iteration: reduce everything once the backward is over (Note [Static graph]).
  void delay_all_reduce();
  void register_comm_hook(CommHook hook);

  // ---- Join (join.h): uneven inputs ----
  // The forward's notice of the ranks still running (Join::notify_join_context). Unless use_static_world_size,
  // this iteration's gradients are divided by `count` (the number of non-joined ranks, once `work` completed)
  // instead of the world size. A comm hook does its own division and ignores it, as in 1.13.
  void set_forward_pass_work_handle(std::shared_ptr<Work> work, Tensor count, bool use_static_world_size);
  // A joined rank's shadow of one backward (Note [Why joined ranks shadow every collective]): a zero bucket
  // per bucket, in bucket order, through the comm hook if one is registered; waits for them.
  void match_all_reduce_for_bwd_pass();
  // And of find_unused_parameters' local-used map allreduce: 1.13 allreduces the map's device copy, which
  // still holds the global map of the last allreduce (a joined rank reports the parameters used in the last
  // reduction it took part in as used, not zeros); zeros before the first.
  void match_unused_params_allreduce();
  // A joined rank that has not rebuilt its buckets yet: records every parameter in index order, so that its
  // next rebuild_buckets() takes part in the others' rebuild (whose bucket layout comes from rank 0).
  void push_rebuilt_params_for_all_indices();
  // False inside DDP's no_sync() (PyTorch's require_backward_grad_sync; DDP's forward reads it here).
  void set_sync_enabled(bool enabled) { sync_enabled_ = enabled; }
  bool sync_enabled() const { return sync_enabled_; }
  void set_last_forward_synced(bool synced) { last_forward_synced_ = synced; }

  // Where warnings go (default: stderr). Each PyTorch TORCH_WARN_ONCE warns once per reducer.
  void set_warning_handler(WarningHandler handler) { warn_ = std::move(handler); }
  void set_event_observer(std::function<void(const ReducerEvent&)> observer) { observe_ = std::move(observer); }
  // Sends a warning about this reducer's state through the same handler (used by DDP's step check).
  void warn_external(const std::string& message, WarningOrigin origin) { warn(message, origin); }

  // Which graph mode this iteration runs in; DDP's forward routes its outputs through _DDPSink iff either holds.
  bool dynamic_graph_find_unused() const { return !static_graph_.enabled && options_.find_unused_parameters; }
  bool static_graph_first_iteration() const { return static_graph_.enabled && num_iterations_ == 1; }

  // ---- state, for `tinyddp repro`, tests and the DDP wrapper ----
  bool expect_autograd_hooks() const { return expect_autograd_hooks_; }
  bool require_finalize() const { return require_finalize_; }
  // Gradients accumulated locally (inside no_sync) that no synchronized backward has averaged yet.
  bool has_unreduced_local_grads() const { return unreduced_local_grads_; }
  // A synchronized forward armed the reducer and no parameter has been marked ready since: no backward has
  // reached DDP's hooks (none ran, or autograd::grad, which never runs AccumulateGrad nodes).
  bool armed_without_hooks() const { return expect_autograd_hooks_ && !require_finalize_; }
  std::vector<std::vector<size_t>> bucket_indices() const;
  std::vector<size_t> bucket_pending() const;
  std::vector<size_t> ready_parameters() const { return {iter_.ready.begin(), iter_.ready.end()}; }
  const std::vector<Tensor>& parameters() const { return params_; }   // index order

 private:
  struct Bucket {
    Tensor gradients;                        // flat, (sum of the parameters' numel), their dtype and device
    std::vector<size_t> variable_indices;    // its parameters, in the order of their slices
    // Per parameter, its slice of `gradients` shaped like it: numel elements from an offset that is the sum of
    // the numel before it (element counts, not bytes).
    std::vector<Tensor> views;
    size_t pending = 0;                      // gradients left to be marked ready before it can launch
    std::shared_ptr<Work> work;              // its last launched allreduce (or comm hook); null before the first
    // Note [create_graph under DDP]: what PyTorch's autograd knows about the bucket and its views. Reset only
    // when the buckets are rebuilt, as PyTorch's bucket tensor keeps its history until then.
    bool has_history = false;                // a gradient that requires grad was copied in, under grad mode
    std::vector<bool> view_has_history;      // per view: it was itself the destination of such a copy
    // Per view: the last such gradient, divided as it was copied, with its graph; undefined after a plain write.
    std::vector<Tensor> written_with_history;
  };
  struct Locator {
    size_t bucket = 0, intra = 0;            // parameter i is buckets_[bucket].views[intra]
  };
  // Bookkeeping of one synchronized backward: assigned afresh by prepare_for_backward and nowhere else, so
  // that it still describes the last backward after finalize (repro's record, the next forward's errors).
  struct IterationState {
    size_t next_bucket = 0;                  // buckets [0, next_bucket) are launched (index order)
    bool marked_unused = false;              // the first armed hook has marked the unused parameters ready
    std::set<size_t> ready;                  // parameters marked ready in this backward
    std::vector<size_t> unused;              // dynamic find_unused only: parameters not reached, ascending
    std::vector<int> static_hooks_left;      // static graph: hooks still to come per parameter before it is ready
  };
  // Note [Static graph].
  struct StaticGraphState {
    bool enabled = false;                    // set_static_graph() was called (before the first iteration)
    std::vector<int> hooks_per_param;        // hooks each parameter fired in the first iteration
    // Parameters with no hook in the first iteration, ascending, as delay_all_reduce found them (empty until it
    // ran): not derived from hooks_per_param, because the counts can exist without a delay_all_reduce.
    std::vector<size_t> unused;
  };

  void initialize_buckets(std::vector<std::vector<size_t>> bucket_indices);
  void autograd_hook(size_t index, bool grad_arrived);
  void mark_variable_ready(size_t index);
  void mark_variable_ready_dense(size_t index);
  void mark_bucket_ready(size_t bucket_index);
  // PyTorch's autograd checks on the reducer's writes into view `intra`: in place (copy_, div_, zero_) and
  // out= (mul_out); they throw PyTorch's error texts (Note [create_graph under DDP]).
  void check_bucket_inplace_write(const Bucket& bucket, size_t intra) const;
  void check_bucket_out_write(const Bucket& bucket, size_t intra) const;
  void all_reduce_bucket(size_t bucket_index);
  void all_reduce_local_used_map();
  void finalize_backward();
  void finalize_bucket_dense(Bucket& bucket);
  void search_unused_parameters(const std::vector<Tensor>& outputs);
  void ensure_prior_reduction_finished();
  void set_divide_factor();
  void check_and_raise_marked_twice(size_t index);
  void report_unsynced_grad(size_t index);
  bool should_rebuild_buckets() const {
    return (static_graph_.enabled || !options_.find_unused_parameters) && !has_rebuilt_bucket_;
  }
  bool static_graph_after_first_iteration() const { return static_graph_.enabled && num_iterations_ > 1; }
  // Parameters that get no gradient in this iteration: marked ready at its first hook.
  const std::vector<size_t>& unused_parameters() const {
    return static_graph_.enabled ? static_graph_.unused : iter_.unused;
  }
  // The one channel for what the reducer did: each call tells the observer
  // and the tracer (docs/tracing.md) the same event. A hook is a span around its work, hence its own call.
  void record(ReducerEvent::Kind kind, size_t index, std::string detail = {});
  trace::Span record_hook(size_t index, bool grad_arrived);
  void warn(const std::string& message, WarningOrigin origin);

  std::vector<Tensor> params_;               // leaves that require grad; a parameter's index is its place here
  std::vector<std::string> names_;           // per parameter, its name in messages (".w" at the root module)
  std::shared_ptr<ProcessGroup> pg_;         // its size is the divisor of every average
  ReducerOptions options_;                   // as constructed; never changed
  // Per parameter, its AccumulateGrad node, which carries the hook; kept alive here, parameters hold them weakly.
  std::vector<std::shared_ptr<autograd::Node>> grad_accumulators_;
  std::map<const autograd::Node*, size_t> grad_acc_to_index_;   // grad_accumulators_ inverted

  std::vector<Bucket> buckets_;              // in launch order (Note [Why buckets launch in index order])
  std::vector<Locator> locators_;            // per parameter

  // The handshake of the overview's calls; unlike IterationState, these outlive prepare_for_backward.
  bool expect_autograd_hooks_ = false;       // armed by prepare_for_backward, disarmed by finalize
  bool require_finalize_ = false;            // a parameter was marked ready and finalize has not run yet
  int64_t num_iterations_ = 0;               // DDP forwards with grad sync so far (1 during the first)
  IterationState iter_;                      // the current (or last) synchronized backward
  StaticGraphState static_graph_;            // Note [Static graph]

  // Which parameters got a gradient, on this rank and on any (find_unused or static graph only).
  // int64 (num params), on the host: 1 where .grad was defined at the parameter's hook. Dynamic graph: zeroed by
  // finalize; static graph: filled in the first iteration only and kept.
  Tensor local_used_map_;
  std::shared_ptr<Work> local_used_work_;    // the allreduce of local_used_map_reduced_
  Tensor local_used_map_reduced_;            // the copy being allreduced, where the collectives run
  bool local_used_map_is_reduced_ = false;   // local_used_map_ holds the reduced (global) map

  bool has_rebuilt_bucket_ = false;          // the one rebuild from the gradient order has happened
  std::vector<size_t> rebuilt_param_indices_;   // parameters in the order they became ready, until the rebuild

  CommHook comm_hook_;                       // null: divide while copying into the bucket, then allreduce
  // What this backward's gradients are divided by (without a comm hook): decided at its first marked
  // parameter, kUnsetDivFactor until then and again after finalize (Join can change it between iterations).
  static constexpr int64_t kUnsetDivFactor = -1;
  int64_t div_factor_ = kUnsetDivFactor;
  struct ForwardPassWork {                   // set_forward_pass_work_handle's arguments; kept until replaced
    std::shared_ptr<Work> work;
    Tensor count;
    bool use_static_world_size = true;
  } forward_pass_work_;
  bool sync_enabled_ = true;                 // false inside no_sync()
  bool last_forward_synced_ = false;         // the last DDP forward armed a reduction (grad mode on, sync enabled)
  bool unreduced_local_grads_ = false;       // a hook after an unsynced forward accumulated .grad; cleared by finalize
  std::set<size_t> unsynced_reported_;       // parameters reported since the last synchronized forward
  // TORCH_WARN_ONCE: each warning at most once per reducer.
  bool warned_no_unused_ = false, warned_no_sync_forward_outside_ = false;
  WarningHandler warn_;                              // every warning, after the trace saw it (default: stderr)
  std::function<void(const ReducerEvent&)> observe_;  // every ReducerEvent, in order; may be empty
  // Taken by every entry point that touches the state: the constructor, the calls of the overview, the hooks and
  // the queued callbacks. Not recursive: no path re-enters the reducer while holding it (finalize runs as an
  // engine callback after the hook that queued it returned, and delay_all_reduce calls the unlocked
  // finalize_backward). The warning handler, the observer and a comm hook run under it and must not call the
  // reducer's mutating methods (the accessors above are fine).
  std::mutex mu_;
  // Hooks and queued callbacks outlive nothing: they check this cell, which the destructor clears.
  std::shared_ptr<Reducer*> alive_ = std::make_shared<Reducer*>(this);
};

}  // namespace tinyddp::dist
