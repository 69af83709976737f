// Uneven inputs: PyTorch 1.13's generic join context (torch.distributed.algorithms.join).
//
//   {
//     Join join = ddp.join();                      // or Join({&ddp, &other}, {...})
//     for (const Batch& b : my_batches) { ... ddp.forward(...); loss.backward(); step(); }
//     join.finish();                               // this rank's inputs are exhausted: shadow the others
//   }                                              // every rank gets here; the replicas are in sync
//
// finish() is what Python's `with` does at __exit__ without an exception. A Join destroyed without
// finish() (an exception unwinding through the loop) does nothing, as __exit__ with an exception does.
//
// Note [Why joined ranks shadow every collective]
//   Collectives are matched across ranks by position: the thread backend pairs the k-th collective of
//   every rank (its sequence number), MPI and NCCL by the order each communicator issues them. A rank that
//   stops calling collectives leaves its peers waiting in their next one (a hang, or the backend's error),
//   and one that calls a different collective mixes unrelated tensors. So a joined rank keeps calling,
//   once per iteration of the others, exactly the collectives a non-joined rank issues in one iteration
//   (Joinable::main_hook), in the same order and with the same sizes, contributing values that change
//   nothing: zeros to every sum (the count of non-joined ranks, the gradient buckets; hence "joined ranks
//   contribute zero gradient"), and -1 to a max where a rank is chosen. Each iteration starts with one
//   allreduce that every rank joins: a non-joined rank adds 1 (notify_join_context, at its forward), a
//   joined rank 0; the sum is the number of ranks still running, and 0 ends the loop. Then every rank runs
//   the post hooks (post_hook), e.g. DDP's broadcast of the final model from the last rank to join.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dist/process_group.h"

namespace tinyddp::dist {

struct JoinOptions {
  bool enable = true;                        // false: the context does nothing (inputs known to be even)
  bool throw_on_early_termination = false;   // every rank raises once one rank has exhausted its inputs
  // A keyword argument the context forwards to every joinable's join_hook (Python's **kwargs); only DDP
  // reads it: divide gradients by the initial world size (true) or by the number of non-joined ranks.
  bool divide_by_initial_world_size = true;
};

// What a Join sets on each of its joinables (Python's _JoinConfig); it stays set after the context ends,
// as in 1.13, so every rank keeps issuing the same collectives afterwards.
struct JoinConfig {
  bool enable = false;
  bool throw_on_early_termination = false;
  bool is_first_joinable = false;   // only the first joinable of a context issues notify_join_context's collectives
};

// Called by Join::finish() on a joined rank (Note [Why joined ranks shadow every collective]).
class JoinHook {
 public:
  virtual ~JoinHook() = default;
  // Once per iteration that some rank still runs: shadows that iteration's collectives of this joinable.
  virtual void main_hook() {}
  // Once all ranks have joined. is_last_joiner: no rank was still running when this rank joined.
  virtual void post_hook(bool /*is_last_joiner*/) {}
};

class Joinable {
 public:
  virtual ~Joinable() = default;
  virtual std::unique_ptr<JoinHook> join_hook(const JoinOptions& options) = 0;
  // Where the context's own collectives live (a device backend takes device tensors only), and on which group.
  virtual Device join_device() const = 0;
  virtual std::shared_ptr<ProcessGroup> join_process_group() const = 0;
  const JoinConfig& join_config() const { return join_config_; }

 private:
  friend class Join;
  JoinConfig join_config_;   // disabled until a Join is constructed over this joinable
};

// The non-joined side's notice (see notify_join_context): once `work` completes, `count` (f32, 1 element,
// on the join device) holds the number of ranks that have not joined.
struct JoinNotice {
  std::shared_ptr<Work> work;
  Tensor count;
};

class Join {
 public:
  // The joinables' hooks run in the given order; all must share one process group. The first one's device
  // carries the context's collectives. Joinables must outlive the Join.
  explicit Join(std::vector<Joinable*> joinables, JoinOptions options = {});
  // Non-copyable and non-movable: return it by value (guaranteed elision), as DistributedDataParallel::join does.
  Join(const Join&) = delete;
  Join& operator=(const Join&) = delete;
  ~Join();

  // This rank's inputs are exhausted: runs every main hook once per iteration the other ranks still run,
  // then every post hook. With throw_on_early_termination, raises "Rank {r} exhausted all inputs." as soon
  // as another rank still runs (after telling the others, which then raise too). Call it once.
  void finish();

  // Called by a joinable before its per-iteration collectives (DDP: at the start of its forward): tells the
  // joined ranks this rank still runs (an asynchronous allreduce of ones), and with throw_on_early_termination
  // raises PyTorch's "Detected at least one rank that exhausted inputs. ..." if some rank has joined.
  // Returns nullopt (and issues nothing) unless the joinable is the first of an enabled context.
  static std::optional<JoinNotice> notify_join_context(Joinable& joinable);

  // Warnings finish() printed to stderr (the uneven input skew warning), in order.
  const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  float count_nonjoined_ranks();   // the joined side of notify_join_context's allreduce
  [[noreturn]] void notify_ranks_to_terminate();

  std::vector<Joinable*> joinables_;
  std::vector<std::unique_ptr<JoinHook>> hooks_;
  JoinOptions options_;
  std::shared_ptr<ProcessGroup> pg_;
  Device device_;
  bool finished_ = false;
  int uncaught_at_construction_ = 0;   // std::uncaught_exceptions(): tells unwinding from a missing finish()
  std::vector<std::string> warnings_;
};

}  // namespace tinyddp::dist
