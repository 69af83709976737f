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
//                             copies grad / world_size into its bucket; a bucket whose parameters are
//                             all ready is allreduced, strictly in bucket index order
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
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "dist/bucket_assignment.h"
#include "dist/process_group.h"
#include "engine/autograd/node.h"

namespace tinyddp::dist {

// TORCH_DISTRIBUTED_DEBUG: OFF, INFO or DETAIL. Names of parameters appear in errors at INFO and DETAIL.
enum class DebugLevel { off, info, detail };
DebugLevel debug_level_from_env();   // reads TORCH_DISTRIBUTED_DEBUG; unset means off
const char* debug_level_name(DebugLevel level);

// What to do when a gradient reaches a parameter while no reduction is expected (see the Note above).
enum class UnsyncedGradPolicy { warn, error, ignore };

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
  void prepare_for_backward(const std::vector<Tensor>& outputs);
  void set_static_graph();
  // Static graph, first iteration: reduce everything once the backward is over.
  void delay_all_reduce();
  void register_comm_hook(CommHook hook);
  // Whether the current code runs inside DDP's no_sync() (for the warning about a forward outside it).
  void set_sync_enabled(bool enabled) { sync_enabled_ = enabled; }
  void set_last_forward_synced(bool synced) { last_forward_synced_ = synced; }

  // Where warnings go (default: stderr). Each PyTorch TORCH_WARN_ONCE warns once per reducer.
  void set_warning_handler(std::function<void(const std::string&)> handler) { warn_ = std::move(handler); }
  void set_event_observer(std::function<void(const ReducerEvent&)> observer) { observe_ = std::move(observer); }
  // Sends a warning about this reducer's state through the same handler (used by DDP's step check).
  void warn_external(const std::string& message) { warn(message); }

  // ---- state, for timelines, tests and the DDP wrapper ----
  bool static_graph() const { return static_graph_; }
  bool find_unused_parameters() const { return options_.find_unused_parameters; }
  int64_t num_iterations() const { return num_iterations_; }
  bool expect_autograd_hooks() const { return expect_autograd_hooks_; }
  bool require_finalize() const { return require_finalize_; }
  size_t next_bucket() const { return next_bucket_; }
  bool has_rebuilt_buckets() const { return has_rebuilt_bucket_; }
  // Gradients accumulated locally (inside no_sync) that no synchronized backward has averaged yet.
  bool has_unreduced_local_grads() const { return unreduced_local_grads_; }
  std::vector<std::vector<size_t>> bucket_indices() const;
  std::vector<size_t> bucket_pending() const;
  std::vector<size_t> ready_parameters() const { return {per_iteration_ready_.begin(), per_iteration_ready_.end()}; }
  const std::vector<size_t>& unused_parameters() const { return unused_parameters_; }
  const std::vector<std::string>& names() const { return names_; }
  const std::vector<Tensor>& parameters() const { return params_; }

 private:
  struct Bucket {
    Tensor gradients;                 // flat buffer, (sum of numel), the parameters' dtype
    std::vector<size_t> variable_indices;
    std::vector<int64_t> offsets, lengths;
    std::vector<Tensor> views;        // per parameter, its slice of `gradients` shaped like it
    size_t pending = 0;               // gradients left to be marked ready before the bucket can launch
    std::shared_ptr<Work> work;       // the bucket's allreduce (or comm hook), once launched
  };
  struct Locator {
    size_t bucket = 0, intra = 0;
  };

  void initialize_buckets(std::vector<std::vector<size_t>> bucket_indices);
  void autograd_hook(size_t index, bool grad_arrived);
  void mark_variable_ready(size_t index);
  void mark_variable_ready_dense(size_t index);
  void mark_bucket_ready(size_t bucket_index);
  void all_reduce_bucket(size_t bucket_index);
  void all_reduce_local_used_map();
  void finalize_backward();
  void finalize_bucket_dense(Bucket& bucket);
  void reset_bucket_counting();
  void search_unused_parameters(const std::vector<Tensor>& outputs);
  void ensure_prior_reduction_finished();
  void check_and_raise_marked_twice(size_t index);
  void report_unsynced_grad(size_t index);
  bool should_rebuild_buckets() const {
    return (static_graph_ || !options_.find_unused_parameters) && !has_rebuilt_bucket_;
  }
  bool dynamic_graph_find_unused() const { return !static_graph_ && options_.find_unused_parameters; }
  bool static_graph_first_iteration() const { return static_graph_ && num_iterations_ == 1; }
  bool static_graph_after_first_iteration() const { return static_graph_ && num_iterations_ > 1; }
  void emit(ReducerEvent::Kind kind, size_t index, std::string detail = {});
  void warn(const std::string& message);
  std::string name_of(size_t index) const { return names_[index]; }

  std::vector<Tensor> params_;
  std::vector<std::string> names_;
  std::shared_ptr<ProcessGroup> pg_;
  ReducerOptions options_;
  std::vector<std::shared_ptr<autograd::Node>> grad_accumulators_;   // kept alive: params hold them weakly
  std::map<const autograd::Node*, size_t> grad_acc_to_index_;

  std::vector<Bucket> buckets_;
  std::vector<Locator> locators_;
  size_t next_bucket_ = 0;

  bool expect_autograd_hooks_ = false;   // armed by prepare_for_backward, disarmed by finalize
  bool require_finalize_ = false;        // a parameter was marked ready and finalize has not run yet
  bool has_marked_unused_parameters_ = false;
  int64_t num_iterations_ = 0;           // DDP forwards with grad sync
  double div_factor_ = 0;                // world size, set at the first mark of an iteration
  std::set<size_t> per_iteration_ready_;
  std::vector<size_t> unused_parameters_;
  Tensor local_used_map_;                // int64 (num params): 1 where this rank produced a gradient
  std::shared_ptr<Work> local_used_work_;
  Tensor local_used_map_reduced_;        // the copy being allreduced
  bool local_used_map_is_reduced_ = false;

  bool has_rebuilt_bucket_ = false;
  std::vector<size_t> rebuilt_param_indices_;

  bool static_graph_ = false;
  std::vector<int> hooks_triggered_;                 // static graph: hooks per parameter in iteration 1
  std::vector<int> hooks_triggered_this_iteration_;  // ... counted down in later iterations

  CommHook comm_hook_;
  bool sync_enabled_ = true;
  bool last_forward_synced_ = false;
  bool unreduced_local_grads_ = false;
  std::set<size_t> unsynced_reported_;   // parameters reported since the last DDP forward
  bool warned_no_unused_ = false, warned_create_graph_ = false, warned_no_sync_forward_outside_ = false;
  std::function<void(const std::string&)> warn_;
  std::function<void(const ReducerEvent&)> observe_;
  std::recursive_mutex mu_;
  // Hooks and queued callbacks outlive nothing: they check this cell, which the destructor clears.
  std::shared_ptr<Reducer*> alive_ = std::make_shared<Reducer*>(this);
};

}  // namespace tinyddp::dist
