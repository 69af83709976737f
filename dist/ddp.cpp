#include "dist/ddp.h"

#include <algorithm>
#include <cstring>
#include <iostream>
#include <mutex>
#include <sstream>

#include "engine/autograd/engine.h"
#include "engine/autograd/grad_mode.h"
#include "engine/ops/ops.h"

namespace tinyddp::dist {

namespace {

// PyTorch's _DDPSink: an identity over all the forward's outputs, put in the graph when unused parameters
// are searched for (or on the first static-graph iteration). Because all outputs share this one node,
// a backward from any of them reaches every parameter used by any output: the hooks of parameters whose
// output was not used fire with an undefined gradient (that is how find_unused_parameters avoids the
// "Expected to have finished reduction" error when not all outputs are in the loss).
class DDPSink : public autograd::Node {
 public:
  DDPSink(Reducer* reducer, bool delay_all_reduce, size_t n) : reducer_(reducer), delay_all_reduce_(delay_all_reduce) {
    set_num_inputs(static_cast<uint32_t>(n));
  }
  std::string name() const override { return "_DDPSinkBackward"; }
  autograd::TensorList apply(autograd::TensorList&& grads) override {
    // Static graph, first iteration: reduce everything once this backward is over.
    if (delay_all_reduce_) autograd::Engine::queue_callback([r = reducer_] { r->delay_all_reduce(); });
    return std::move(grads);   // undefined gradients stay undefined (materialize_grads=False)
  }

 private:
  Reducer* reducer_;
  bool delay_all_reduce_;
};

std::string sizes_str(const Shape& s) { return shape_str(s); }

// Note [Buffers in 1.13's DDP]
// Facts from PyTorch 1.13.1 (torch/nn/parallel/distributed.py, torch/distributed/utils.py, and measured with
// tests/golden/gen_ddp_buffers.py -> ddp_buffers.json; tests/dist/ddp_buffers_test.cpp checks each):
//  - Construction (_sync_module_states) broadcasts from rank 0, in one _broadcast_coalesced, every named
//    parameter (frozen ones too: the requires_grad filter is only the reducer's) and then every buffer,
//    whatever broadcast_buffers says. _broadcast_coalesced copies the result back into each tensor on every
//    rank, rank 0 included, so each one's version goes up by exactly 1 (a 0-element buffer's too).
//  - A forward broadcasts the buffers from rank 0 (the authoritative rank; under join, the one the ranks
//    agree on) when will_sync_module_buffers(): require_forward_param_sync && broadcast_buffers && there are
//    buffers. require_forward_param_sync starts true and is set after every forward to (grad mode on && not
//    in no_sync): so the first forward syncs even inside no_sync or under no_grad, a forward after a
//    no_sync/no_grad forward does not, and the forward after a synchronized one does. static_graph and
//    find_unused_parameters play no part. The broadcast comes after _rebuild_buckets (so a forward that
//    raises "Expected to have finished reduction" broadcasts nothing) and before the module runs; the copy
//    back bumps every buffer's version by 1 on every rank.
//  - Hence the GAN idiom D(real), D(fake), one backward of both losses, with a buffer read in the forward:
//    construction leaves the buffer at version 1, the first forward's broadcast makes it 2 and the forward
//    saves it at 2, the second forward's makes it 3, and the backward raises on both ranks "one of the
//    variables needed for gradient computation has been modified by an inplace operation: [torch.FloatTensor
//    [8]] is at version 3; expected version 2 instead. Hint: ...". broadcast_buffers=false runs cleanly.

// Copies rank `root`'s values into `tensors` on every rank and bumps each one's version, as 1.13's
// _broadcast_coalesced's copy back does. One broadcast per dtype, in the order the dtypes first appear (a
// module may hold float64 parameters or an int64 step counter next to float32 weights); bool tensors travel
// as int64 copies, since collectives reduce numbers.
void broadcast_in_place(ProcessGroup& pg, const std::vector<Tensor>& tensors, int root) {
  NoGradGuard no_grad;
  std::vector<DType> dtypes;
  for (const Tensor& t : tensors)
    if (std::find(dtypes.begin(), dtypes.end(), t.dtype()) == dtypes.end()) dtypes.push_back(t.dtype());
  for (DType dtype : dtypes) {
    std::vector<Tensor> group;
    for (const Tensor& t : tensors)
      if (t.dtype() == dtype) group.push_back(dtype == DType::b8 ? t.to(DType::i64) : t.detach());
    pg.broadcast(group, root)->wait();
    if (dtype == DType::b8)
      for (size_t i = 0, k = 0; i < tensors.size(); ++i)
        if (tensors[i].dtype() == dtype) {   // back in place (contiguous, as the broadcast checked)
          const Tensor values = group[k++].to(DType::b8);
          std::memcpy(tensors[i].raw_data(), values.raw_data(), values.numel() * element_size(DType::b8));
        }
  }
  for (const Tensor& t : tensors) t.bump_version();
}

// Appends each tensor of `named` that is not yet in `out`.
void append_unique(std::vector<Tensor>& out, const std::vector<std::pair<std::string, Tensor>>& named) {
  for (const auto& [_, t] : named) {
    bool seen = false;
    for (const Tensor& u : out) seen |= u.is_same(t);
    if (!seen) out.push_back(t);
  }
}

}  // namespace

void verify_params_across_processes(ProcessGroup& pg, const std::vector<Tensor>& params) {
  // The control tensors live where the parameters do: a device backend (nccl) takes device tensors only.
  const Device device = params.empty() ? Device::cpu() : params[0].device();
  // 1. Parameter counts.
  std::vector<Tensor> counts;
  for (int r = 0; r < pg.size(); ++r) counts.push_back(zeros({1}, DType::i64, device));
  pg.allgather(counts, full({1}, static_cast<double>(params.size()), DType::i64, device))->wait();
  for (int r = 0; r < pg.size(); ++r) {
    const int64_t n = counts[r].item<int64_t>();
    TINYDDP_CHECK(n == static_cast<int64_t>(params.size()), "DDP expects same model across all ranks, but Rank ",
                  pg.rank(), " has ", params.size(), " params, while rank ", r, " has inconsistent ", n, " params.");
  }
  // 2. Shapes: rank 0's metadata is broadcast and compared.
  std::vector<int64_t> meta;
  for (const Tensor& p : params) {
    meta.push_back(p.dim());
    for (int64_t d : p.shape()) meta.push_back(d);
  }
  std::vector<Tensor> lens;
  for (int r = 0; r < pg.size(); ++r) lens.push_back(zeros({1}, DType::i64, device));
  pg.allgather(lens, full({1}, static_cast<double>(meta.size()), DType::i64, device))->wait();
  Tensor control = from_vector(meta, {static_cast<int64_t>(meta.size())}).to(device);
  const int64_t len0 = lens[0].item<int64_t>();
  Tensor received = len0 == static_cast<int64_t>(meta.size()) ? control : zeros({len0}, DType::i64, device);
  pg.broadcast({received}, 0)->wait();
  const auto ref = received.to_vector<int64_t>();
  size_t pos = 0;
  for (size_t p = 0; p < params.size(); ++p) {
    Shape theirs;
    if (pos < ref.size()) {
      const int64_t nd = ref[pos++];
      for (int64_t d = 0; d < nd && pos < ref.size(); ++d) theirs.push_back(ref[pos++]);
    }
    TINYDDP_CHECK(theirs == params[p].shape(), "[", pg.rank(), "]: params[", p, "] in this process with sizes ",
                  sizes_str(params[p].shape()), " appears not to match sizes of the same param in process 0.");
  }
}

DistributedDataParallel::DistributedDataParallel(const NamedParameters& parameters,
                                                 std::shared_ptr<ProcessGroup> process_group, DDPOptions options,
                                                 const NamedBuffers& buffers)
    : pg_(std::move(process_group)), options_(options) {
  TINYDDP_CHECK(pg_ != nullptr, "DistributedDataParallel: the process group is null.");
  std::vector<Tensor> params;
  std::vector<std::string> names;
  for (const auto& [dotted, p] : parameters) {
    // Names as PyTorch's DDP builds them for its messages: module name + "." + parameter name, so a
    // parameter of the root module reads ".unused_scale".
    const std::string name = dotted.find('.') == std::string::npos ? "." + dotted : dotted;
    if (!p.requires_grad()) continue;
    bool duplicate = false;   // a shared parameter is reduced once
    for (const Tensor& q : params) duplicate |= q.is_same(p);
    if (duplicate) continue;
    params.push_back(p);
    names.push_back(name);
  }
  TINYDDP_CHECK(!params.empty(), "DistributedDataParallel is not needed when a module doesn't have any parameter that "
                                 "requires a gradient.");
  // 1.13 takes 0 (every bucket after the first holds one parameter); a negative cap it refuses or ignores
  // depending on find_unused_parameters, so tinyddp refuses it.
  TINYDDP_CHECK(options_.bucket_cap_mb >= 0, "DistributedDataParallel: bucket_cap_mb must be 0 or more, got ",
                options_.bucket_cap_mb, ".");
  if (options_.verify_parameters) verify_params_across_processes(*pg_, params);
  for (const auto& [name, b] : buffers)
    TINYDDP_CHECK(b.defined(), "DistributedDataParallel: buffer '", name, "' is an undefined tensor.");
  append_unique(buffers_, buffers);
  append_unique(module_states_, parameters);
  append_unique(module_states_, buffers);
  // 1.13's _sync_module_states (Note [Buffers in 1.13's DDP])
  if (options_.broadcast_parameters) broadcast_in_place(*pg_, module_states_, 0);
  // 1.13: without unused-parameter search (or with a static graph) the first iteration is one bucket;
  // the buckets are rebuilt from the observed gradient order afterwards.
  const size_t cap_bytes = static_cast<size_t>(options_.bucket_cap_mb * 1024 * 1024);
  std::vector<size_t> limits;
  if (options_.static_graph || !options_.find_unused_parameters) limits = {kNoBucketSizeLimit};
  else limits = {kDefaultFirstBucketBytes, cap_bytes};
  auto assignment = compute_bucket_assignment_by_size(params, limits);
  std::reverse(assignment.buckets.begin(), assignment.buckets.end());
  ReducerOptions ro;
  ro.bucket_bytes_cap = cap_bytes;
  ro.find_unused_parameters = options_.find_unused_parameters;
  ro.gradient_as_bucket_view = options_.gradient_as_bucket_view;
  // Not value_or: its argument is evaluated always, so an invalid TORCH_DISTRIBUTED_DEBUG would raise even when
  // the option says which level to use.
  ro.debug_level = options_.debug_level ? *options_.debug_level : debug_level_from_env();
  ro.unsynced_grads = options_.unsynced_grads;
  reducer_ = std::make_unique<Reducer>(params, names, assignment.buckets, pg_, ro);
  reducer_->set_warning_handler([this](const std::string& m, WarningOrigin origin) {
    warnings_.push_back(m);
    warning_origins_.push_back(origin);
    if (options_.print_warnings) {
      // One write per warning so that ranks running as threads don't interleave their lines.
      static std::mutex print_mu;
      std::lock_guard<std::mutex> lock(print_mu);
      std::cerr << "[W reducer rank " + std::to_string(pg_->rank()) + "] " + m + "\n";
    }
  });
  if (options_.static_graph) set_static_graph();
}

void DistributedDataParallel::set_static_graph() {
  // 1.13's texts (Python UserWarnings there)
  if (static_graph_) {
    reducer_->warn_external("You've set static_graph to be True, no need to set it again.", WarningOrigin::python);
    return;
  }
  static_graph_ = true;            // first, as 1.13's (a refused call leaves DDP marked)
  reducer_->set_static_graph();   // refuses once an iteration has run
  if (options_.find_unused_parameters)
    reducer_->warn_external(
        "You passed find_unused_parameters=true to DistributedDataParallel, `_set_static_graph` will detect unused "
        "parameters automatically, so you do not need to set find_unused_parameters=true, just be sure these "
        "unused parameters will not change during training loop while calling `_set_static_graph`.",
        WarningOrigin::python);
}

std::vector<Tensor> DistributedDataParallel::forward(const std::function<std::vector<Tensor>()>& module_forward) {
  const bool grad_enabled = GradMode::is_enabled();
  const bool sync = grad_enabled && reducer_->sync_enabled();
  if (sync) reducer_->prepare_for_forward();
  reducer_->set_last_forward_synced(sync);
  for (auto& work : join_works_) work->wait();   // the previous forward's (every rank has issued them by now)
  join_works_.clear();
  if (std::optional<JoinNotice> notice = Join::notify_join_context(*this)) {
    join_works_.push_back(notice->work);
    reducer_->set_forward_pass_work_handle(notice->work, notice->count, divide_by_initial_world_size_);
  }
  if (grad_enabled) reducer_->rebuild_buckets();   // raises if the prior reduction never finished
  // Note [Buffers in 1.13's DDP]; under a Join the root is agreed on, as rank 0 may have joined with stale
  // buffers (a joined rank shadows this in shadow_buffer_broadcast).
  if (will_sync_module_buffers()) sync_module_buffers(join_config().enable ? find_common_rank(true) : 0);
  if (join_config().enable) join_works_.push_back(check_global_requires_backward_grad_sync(false).first);
  std::vector<Tensor> outputs = module_forward();
  require_forward_param_sync_ = sync;
  if (sync) reducer_->prepare_for_backward(outputs);   // walks them only with dynamic_graph_find_unused()
  const bool delay_all_reduce = reducer_->static_graph_first_iteration();
  if ((reducer_->dynamic_graph_find_unused() || delay_all_reduce) && grad_enabled) {
    // Route every output that has a grad_fn through one shared node (see DDPSink).
    std::vector<size_t> routed;
    for (size_t i = 0; i < outputs.size(); ++i)
      if (outputs[i].defined() && outputs[i].grad_fn()) routed.push_back(i);
    if (!routed.empty()) {
      auto node = std::make_shared<DDPSink>(reducer_.get(), delay_all_reduce, routed.size());
      for (size_t k = 0; k < routed.size(); ++k) {
        Tensor& out = outputs[routed[k]];
        node->mutable_next_edges().push_back(autograd::gradient_edge(out));
        Tensor passthrough = out.detach().clone();   // PyTorch's sink clones its inputs
        autograd::set_history(passthrough, node, static_cast<uint32_t>(k));
        out = passthrough;
      }
    }
  }
  return outputs;
}

void DistributedDataParallel::sync_module_buffers(int authoritative_rank) {
  broadcast_in_place(*pg_, buffers_, authoritative_rank);
}

void DistributedDataParallel::shadow_buffer_broadcast() {
  if (will_sync_module_buffers()) sync_module_buffers(find_common_rank(false));
}

// 1.13's _DDPJoinHook: a joined rank's shadow of one DDP iteration (Note [Why joined ranks shadow every
// collective], join.h), in the order a non-joined rank issues them: forward (rebuild, buffers, the sync flag),
// then backward (the buckets in order, then the local-used map).
class DDPJoinHook : public JoinHook {
 public:
  DDPJoinHook(DistributedDataParallel& ddp, bool divide_by_initial_world_size) : ddp_(ddp) {
    ddp_.divide_by_initial_world_size_ = divide_by_initial_world_size;
  }
  void main_hook() override {
    Reducer& reducer = *ddp_.reducer_;
    reducer.rebuild_buckets();   // once in a run, with the others' rebuild
    ddp_.shadow_buffer_broadcast();
    auto [work, syncing_ranks] = ddp_.check_global_requires_backward_grad_sync(true);
    work->wait();
    // The others run this iteration inside no_sync(): then their next forward does not broadcast buffers.
    ddp_.require_forward_param_sync_ = syncing_ranks.item<float>() != 0;
    if (!ddp_.require_forward_param_sync_) return;
    reducer.match_all_reduce_for_bwd_pass();
    if (ddp_.options_.find_unused_parameters) reducer.match_unused_params_allreduce();
    reducer.push_rebuilt_params_for_all_indices();
  }
  void post_hook(bool is_last_joiner) override { ddp_.sync_final_model(is_last_joiner); }

 private:
  DistributedDataParallel& ddp_;
};

std::unique_ptr<JoinHook> DistributedDataParallel::join_hook(const JoinOptions& options) {
  return std::make_unique<DDPJoinHook>(*this, options.divide_by_initial_world_size);
}

Device DistributedDataParallel::join_device() const { return reducer_->parameters()[0].device(); }

std::pair<std::shared_ptr<Work>, Tensor> DistributedDataParallel::check_global_requires_backward_grad_sync(
    bool is_joined_rank) {
  Tensor flag = full({1}, !is_joined_rank && reducer_->sync_enabled() ? 1.0 : 0.0, DType::f32, join_device());
  return {pg_->allreduce({flag}), flag};
}

int DistributedDataParallel::find_common_rank(bool candidate) {
  Tensor rank = full({1}, candidate ? pg_->rank() : -1, DType::i64, join_device());
  pg_->allreduce({rank}, ReduceOp::max)->wait();
  const int64_t common = rank.item<int64_t>();
  TINYDDP_CHECK(common != -1, "BUG! Expected rank_cond to be true for at least one process. This indicates a bug in "
                              "PyTorch, please report an issue.");
  return static_cast<int>(common);
}

void DistributedDataParallel::sync_final_model(bool is_last_joiner) {
  // 1.13's _sync_params_and_buffers: every parameter (frozen ones too) and buffer, as at construction.
  broadcast_in_place(*pg_, module_states_, find_common_rank(is_last_joiner));
}

void DistributedDataParallel::check_before_step() {
  if (options_.unsynced_grads == UnsyncedGradPolicy::ignore) return;
  const std::string rank = std::to_string(pg_->rank());
  std::string msg;
  if (reducer_->has_unreduced_local_grads()) {
    msg = "tinyddp: optimizer step on rank " + rank + " with gradients accumulated inside no_sync() that no "
          "synchronized backward has averaged: they are not averaged across ranks and the replicas drift apart "
          "(PyTorch 1.13 does this silently). Run the last micro-batch of the accumulation window (forward and "
          "backward) outside no_sync().";
  } else if (reducer_->armed_without_hooks()) {
    bool has_grads = false;
    for (const Tensor& p : reducer_->parameters()) has_grads |= p.grad().defined();
    if (has_grads)
      msg = "tinyddp: optimizer step on rank " + rank + " after a DDP forward whose backward never reached DDP's "
            "hooks: no parameter's AccumulateGrad ran (e.g. gradients from autograd.grad assigned to .grad by hand), "
            "so the gradients are not averaged across ranks and the replicas drift apart (PyTorch 1.13 does this "
            "silently). Use loss.backward() (backward(inputs=...) to restrict it), or allreduce the gradients "
            "yourself before the step.";
  }
  if (msg.empty()) return;
  if (options_.unsynced_grads == UnsyncedGradPolicy::error) throw Error(msg);
  reducer_->warn_external(msg, WarningOrigin::tinyddp);
}

DistributedDataParallel::NoSyncGuard::NoSyncGuard(DistributedDataParallel& ddp)
    : ddp_(ddp), previous_(ddp.reducer_->sync_enabled()) {
  ddp_.reducer_->set_sync_enabled(false);
}

DistributedDataParallel::NoSyncGuard::~NoSyncGuard() { ddp_.reducer_->set_sync_enabled(previous_); }

}  // namespace tinyddp::dist
