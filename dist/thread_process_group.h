// The `thread` backend: N ranks as threads of one process, meeting in a shared ThreadWorld.
//
//   ThreadWorld::run(2, [](ProcessGroup& pg) { ... one rank's program ... });
//
// A collective is matched across ranks by its per-rank sequence number (the k-th collective a rank
// calls meets the k-th of every other rank). The last rank to arrive performs it, summing in rank order,
// so results are bitwise deterministic whatever the thread timing. If a rank throws, run() aborts the
// world: every rank waiting on a collective gets an Error naming that rank instead of waiting out the
// timeout. If a rank's program ends (it returned, or caught its error and stopped), run() or the program
// itself calls leave(): the collectives that rank never reached fail at once on the others, naming it, as
// a multi-process run fails with a transport error when a peer exits.
#pragma once

#include <condition_variable>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <optional>

#include "dist/process_group.h"

namespace tinyddp::dist {

class ThreadWorld : public std::enable_shared_from_this<ThreadWorld> {
 public:
  ThreadWorld(int size, std::chrono::milliseconds timeout = kDefaultTimeout);
  int size() const { return size_; }
  std::shared_ptr<ProcessGroup> group(int rank);

  // Marks the world as failed because `rank` stopped with `reason`; wakes every waiter.
  void abort(int rank, const std::string& reason);

  // `rank`'s program has ended; `why` says how, with the rank as "it" and no final period ("it finished
  // its 2 iterations"). Every collective it has not arrived at can never complete: its waiters, present
  // and future, get an Error naming both ranks at wait(). Collectives it already arrived at still
  // complete. A left rank may not start collectives; a second leave() of one rank keeps the first reason
  // (so a program can leave with a precise reason before run() leaves it with a generic one).
  void leave(int rank, const std::string& why);

  // Runs fn on `size` threads, one per rank, and joins them. Returns each rank's exception (null if it
  // finished normally); a rank that throws aborts the world so that the others stop too, and a rank that
  // returns leaves it, so that the others stop at the first collective it will never join.
  static std::vector<std::exception_ptr> run(int size, const std::function<void(ProcessGroup&)>& fn,
                                             std::chrono::milliseconds timeout = kDefaultTimeout);

  // Internal: one rank's arrival at its next collective.
  struct Arrival;
  std::shared_ptr<Work> arrive(int rank, Arrival arrival);

  struct Arrival {
    std::string kind;              // "allreduce", "broadcast", "allgather", "barrier"
    std::vector<Tensor> tensors;   // allreduce/broadcast: in-out; allgather: outputs
    Tensor input;                  // allgather
    ReduceOp op = ReduceOp::sum;
    int root = 0;
    std::string signature() const;   // what must agree across ranks, for the mismatch error
  };

 private:
  struct Slot {
    std::vector<std::optional<Arrival>> arrivals;
    int arrived = 0;
    bool done = false;
    std::string error;   // set when the collective failed (mismatch)
  };
  friend class ThreadWork;
  void perform(uint64_t seq, Slot& slot);   // called with mu_ held by the last arrival
  // With mu_ held: the error for `rank` waiting in collective `seq` (a `kind`) when a rank that left will
  // never join it; empty while every missing rank may still come.
  std::string left_error(uint64_t seq, int rank, const std::string& kind) const;

  const int size_;
  const std::chrono::milliseconds timeout_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<uint64_t, std::shared_ptr<Slot>> slots_;   // collectives some rank has not reached yet
  // (a finished slot leaves the map; the Works of its ranks keep it alive for their wait())
  std::vector<uint64_t> next_seq_;     // per rank: the sequence number of its next collective
  std::string abort_reason_;           // non-empty once a rank failed
  struct Left {
    uint64_t collectives;   // how many it arrived at (#0 .. collectives-1); it never reaches the others
    std::string why;
  };
  std::vector<std::optional<Left>> left_;   // per rank: set once its program ended
};

}  // namespace tinyddp::dist
