// DistributedDataParallel: the wrapper a training loop talks to, with PyTorch 1.13's semantics.
//
//   DistributedDataParallel ddp(model.named_parameters(), pg, {.find_unused_parameters = false});
//   auto out = ddp.forward([&] { return std::vector<Tensor>{model.forward(x)}; });   // DDP's forward
//   loss_fn(out[0], y).backward();        // gradients are averaged across ranks during this backward
//   optimizer.step();                     // every rank applies the same averaged gradients
//   { auto guard = ddp.no_sync(); ... }   // forward + backward in scope accumulate locally, unsynced
//   { Join join = ddp.join(); for (batch : mine) { ... }; join.finish(); }   // uneven inputs (join.h)
//
// Construction checks that every rank has the same parameter shapes and broadcasts rank 0's values of the
// parameters and buffers; with broadcast_buffers, forwards copy rank 0's buffers again (see ddp.cpp's Note
// [Buffers in 1.13's DDP]). The module itself stays the user's: DDP only needs its named parameters (and
// buffers) and a way to run its forward. Several DDP instances may share one process group (a GAN's G and D):
// each has its own reducer, and their collectives match across ranks by the order the ranks issue them.
//
//   DistributedDataParallel ddp(model.named_parameters(), pg, {}, model.named_buffers());
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dist/join.h"
#include "dist/process_group.h"
#include "dist/reducer.h"

namespace tinyddp::dist {

struct DDPOptions {
  double bucket_cap_mb = 25.0;                 // kDefaultBucketBytesCap
  bool find_unused_parameters = false;
  bool static_graph = false;
  bool gradient_as_bucket_view = false;
  bool broadcast_parameters = true;            // copy rank 0's parameters and buffers to every rank at construction
  // Compare every rank's parameter count and shapes at construction (1.13's _verify_param_shape_across_processes).
  // A copy of a DDP (1.13's __setstate__, under copy.deepcopy or unpickling) does neither this nor the broadcast:
  // it is local to the rank that copies.
  bool verify_parameters = true;
  bool broadcast_buffers = true;               // copy rank 0's buffers in place at forwards (1.13's rule)
  std::optional<DebugLevel> debug_level;       // default: TORCH_DISTRIBUTED_DEBUG
  UnsyncedGradPolicy unsynced_grads = UnsyncedGradPolicy::warn;   // tinyddp: see reducer.h
  bool print_warnings = true;                  // to stderr; warnings() keeps them either way
};

using NamedParameters = std::vector<std::pair<std::string, Tensor>>;
using NamedBuffers = std::vector<std::pair<std::string, Tensor>>;

class DistributedDataParallel : public Joinable {
 public:
  // `parameters` are all of the module's named parameters, frozen ones included (those are broadcast at
  // construction but not reduced); `buffers` its named buffers (nn::Module::named_buffers()).
  DistributedDataParallel(const NamedParameters& parameters, std::shared_ptr<ProcessGroup> process_group,
                          DDPOptions options = {}, const NamedBuffers& buffers = {});

  // DDP's forward around `module_forward`: finishes the bookkeeping of the previous iteration (raising
  // "Expected to have finished reduction ..." if it never finished), rebuilds buckets once, copies rank 0's
  // buffers when will_sync_module_buffers(), runs the module, and arms the reducer for the backward of the
  // returned outputs.
  std::vector<Tensor> forward(const std::function<std::vector<Tensor>()>& module_forward);
  // PyTorch's will_sync_module_buffers: whether the next forward broadcasts the buffers.
  bool will_sync_module_buffers() const {
    return require_forward_param_sync_ && options_.broadcast_buffers && !buffers_.empty();
  }

  // While alive, forwards and backwards do not synchronize: gradients accumulate locally and are averaged
  // by the first synchronized backward after it.
  class NoSyncGuard {
   public:
    explicit NoSyncGuard(DistributedDataParallel& ddp);
    ~NoSyncGuard();
    NoSyncGuard(const NoSyncGuard&) = delete;
    NoSyncGuard& operator=(const NoSyncGuard&) = delete;

   private:
    DistributedDataParallel& ddp_;
    bool previous_;
  };
  NoSyncGuard no_sync() { return NoSyncGuard(*this); }

  // Uneven inputs (join.h): a Join over this DDP alone. A rank whose inputs are exhausted calls finish() and
  // shadows the others' iterations (DDPJoinHook in ddp.cpp, 1.13's _DDPJoinHook): its gradients count as
  // zeros, divided by the world size (divide_by_initial_world_size) or by the number of ranks still running.
  // Once all have joined, every rank gets the parameters of the highest-ranked of the last to join.
  Join join(JoinOptions options = {}) { return Join({this}, options); }
  std::unique_ptr<JoinHook> join_hook(const JoinOptions& options) override;
  Device join_device() const override;
  std::shared_ptr<ProcessGroup> join_process_group() const override { return pg_; }

  // 1.13's DDP._set_static_graph(): static_graph=True after construction, before the first iteration (the
  // constructor calls it for DDPOptions::static_graph). A second call only warns.
  void set_static_graph();
  bool static_graph() const { return static_graph_; }

  void register_comm_hook(CommHook hook) { reducer_->register_comm_hook(std::move(hook)); }
  // Call before optimizer.step(): warns (or throws, per DDPOptions::unsynced_grads) when this step would make
  // the replicas drift because DDP averaged nothing: gradients accumulated inside no_sync() that no
  // synchronized backward reduced (the last micro-batch of an accumulation window inside no_sync()), or a
  // synchronized forward whose backward never reached DDP's hooks (autograd::grad with .grad set by hand).
  void check_before_step();
  // The reducer holds the iteration state (iterations, no_sync, graph mode); DDP keeps none of its own.
  Reducer& reducer() { return *reducer_; }
  const std::vector<std::string>& warnings() const { return warnings_; }
  const std::vector<WarningOrigin>& warning_origins() const { return warning_origins_; }   // one per warning

 private:
  // Copies `authoritative_rank`'s buffers into every rank's, in place (each buffer's version bumps).
  void sync_module_buffers(int authoritative_rank);

  std::shared_ptr<ProcessGroup> pg_;
  DDPOptions options_;
  std::unique_ptr<Reducer> reducer_;
  std::vector<Tensor> buffers_;   // the module's buffers, each once, in named_buffers() order
  // Every named parameter (frozen ones too), then every buffer, each once: what construction and the end of a
  // Join broadcast (1.13's module states).
  std::vector<Tensor> module_states_;
  // 1.13's require_forward_param_sync: true until a forward runs unsynchronized (no_sync or grad mode off);
  // the forward after a synchronized one is the one that broadcasts buffers.
  bool require_forward_param_sync_ = true;
  bool static_graph_ = false;   // set_static_graph() was called
  std::vector<std::string> warnings_;   // every warning of the reducer, in order, whether printed or not
  std::vector<WarningOrigin> warning_origins_;

  // ---- Join (join.h) ----
  friend class DDPJoinHook;
  // 1.13's _find_common_rank: the highest rank among those passing candidate=true (an allreduce of max, -1
  // for the others); every rank calls it. Under a Join the buffer broadcast takes its root from here too
  // (1.13: candidate=true in the forward, false in a joined rank's shadow of it), not from rank 0.
  int find_common_rank(bool candidate);
  // The allreduce that tells joined ranks whether this iteration's backward synchronizes: its work, and the
  // flag (f32, 1 element) that holds, once the work completed, the number of ranks that sync (0: none).
  std::pair<std::shared_ptr<Work>, Tensor> check_global_requires_backward_grad_sync(bool is_joined_rank);
  // The joined rank's shadow of the forward's buffer broadcast (1.13's _check_and_sync_module_buffers:
  // find_common_rank(false), then the broadcast from that rank): issues what DDP's forward issues between
  // rebuild_buckets() and check_global_requires_backward_grad_sync().
  void shadow_buffer_broadcast();
  // The post hook: every rank takes the parameters of the highest-ranked last joiner (1.13's _sync_final_model).
  void sync_final_model(bool is_last_joiner);
  bool divide_by_initial_world_size_ = true;           // set by join_hook, read at each forward
  // The forward's join collectives, waited at the next forward: their results are read (or not) elsewhere,
  // and a backend may not drop a collective in flight.
  std::vector<std::shared_ptr<Work>> join_works_;
};

// Checks that every rank passes the same number of parameters with the same shapes (PyTorch's texts).
void verify_params_across_processes(ProcessGroup& pg, const std::vector<Tensor>& params);

}  // namespace tinyddp::dist
