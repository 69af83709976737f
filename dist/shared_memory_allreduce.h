// An allreduce through memory that every rank maps: the mpi backend's path when all of its ranks run on one
// machine (Note [The mpi backend's shared-memory allreduce]). Plain C++ over mapped segments and atomics, no
// MPI: the mpi backend hands it segments from an MPI-3 shared window, and tests hand it heap memory shared by
// threads.
//
//   SharedMemoryAllreduce shm(rank, segments);              // segments[r]: rank r's, as this process maps it
//   auto op = shm.start({bucket}, ReduceOp::sum, ready);    // queued; nothing moves yet
//   shm.progress(*op, /*block=*/false, deadline, pause);    // a poll: moves what it can without waiting
//   shm.progress(*op, /*block=*/true, deadline, pause);     // a wait: `bucket` holds the sum over ranks
//
// Every rank starts the same allreduces in the same order (the mpi backend checks their signatures first).
// They complete in that order: progressing one progresses every one started before it.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "dist/process_group.h"

namespace tinyddp::dist {

class SharedMemoryAllreduce {
 public:
  using Clock = std::chrono::steady_clock;
  // 4 MiB: a bucket of the default first cap (1 MiB) or of a model like bench_ddp's (1.2-2.4 MiB) goes through
  // in one round when it must be copied; a 25 MiB bucket takes 7. Two slots per rank.
  static constexpr int64_t kDefaultSlotBytes = int64_t{4} << 20;
  // 64 MiB per rank for buffers reduced in place (allocate()): the buckets of a model of 16M float parameters.
  static constexpr int64_t kDefaultArenaBytes = int64_t{64} << 20;
  // What each rank's segment must hold (both multiples of 64).
  static int64_t segment_bytes(int64_t slot_bytes = kDefaultSlotBytes, int64_t arena_bytes = kDefaultArenaBytes);

  // A peer did not reach a step of allreduce `seq` (the number start() was given) before the deadline.
  class PeersMissing : public Error {
   public:
    PeersMissing(uint64_t seq, std::string missing)
        : Error("shared-memory allreduce #" + std::to_string(seq) + ": rank(s) " + missing + " did not arrive"),
          seq(seq), missing(std::move(missing)) {}
    uint64_t seq;
    std::string missing;   // "1" or "1, 3"
  };

  // Says whether the peers called the same allreduce (`block`: waits for their answer until `deadline`);
  // throws when they did not. Once they did, sets *in_place: whether every rank's tensors are one buffer of its
  // arena at the same arena_offset(). Asked once per allreduce, before its first byte moves.
  using Ready = std::function<bool(bool block, Clock::time_point deadline, bool* in_place)>;
  // Between two looks at the peers' progress in a blocking progress().
  using Pause = std::function<void()>;

  struct Op;

  // `segments[r]`: rank r's segment of segment_bytes(slot_bytes, arena_bytes) bytes, 64-byte aligned, its first
  // cache line zeroed before any rank starts an allreduce (the caller's barrier).
  SharedMemoryAllreduce(int rank, std::vector<std::byte*> segments, int64_t slot_bytes = kDefaultSlotBytes,
                        int64_t arena_bytes = kDefaultArenaBytes);

  // A zero-filled buffer in this rank's arena, which allreduce reduces in place when every rank passes its
  // buffer from the same offset; undefined when the arena has no room. First fit, so ranks that allocate and
  // free the same sizes in the same order get the same offsets. May outlive this object.
  Tensor allocate(int64_t numel, DType dtype);
  // Where `tensors` start in this rank's arena when they are one contiguous tensor inside it; -1 otherwise.
  int64_t arena_offset(const std::vector<Tensor>& tensors) const;

  // Queues an allreduce of `tensors` (contiguous, one dtype, on the CPU, the same sizes on every rank): each
  // ends up holding `op` over all ranks' tensors, summed in rank order. `seq` names it in errors.
  std::shared_ptr<Op> start(std::vector<Tensor> tensors, ReduceOp op, uint64_t seq, Ready ready);
  // Advances the queue, oldest first, up to `op`. Without `block` it returns as soon as a peer would have to
  // be waited for; with it, it waits (calling `pause` between looks) and throws PeersMissing at `deadline`.
  // Returns whether `op` is complete.
  bool progress(const Op& op, bool block, Clock::time_point deadline, const Pause& pause);
  // Completes every queued allreduce (block), or moves them on as far as no peer must be waited for.
  bool progress_all(bool block, Clock::time_point deadline, const Pause& pause);
  bool idle() const { return queue_.empty(); }

  int rank() const { return rank_; }
  int size() const { return static_cast<int>(segments_.size()); }

 private:
  struct Arena;
  bool advance(Op& op, bool block, Clock::time_point deadline, const Pause& pause);
  static void finish(Op& op);
  void arrive();
  bool all_arrived() const;
  void wait_all(const Op& op, Clock::time_point deadline, const Pause& pause) const;
  std::byte* slot(int r, uint64_t round) const;
  std::byte* arena(int r) const;

  int rank_;
  std::vector<std::byte*> segments_;
  int64_t slot_bytes_, arena_bytes_;
  std::shared_ptr<Arena> arena_;   // this rank's free list; shared with the buffers it handed out
  uint64_t arrivals_ = 0;          // this rank's arrivals so far; what its counter holds
  uint64_t rounds_ = 0;            // copied rounds completed by this rank over every allreduce: the next slot
  std::deque<std::shared_ptr<Op>> queue_;
};

}  // namespace tinyddp::dist
