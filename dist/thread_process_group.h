// The `thread` backend: N ranks as threads of one process, meeting in a shared ThreadWorld.
//
//   ThreadWorld::run(2, [](ProcessGroup& pg) { ... one rank's program ... });
//
// A collective is matched across ranks by its per-rank sequence number (the k-th collective a rank
// calls meets the k-th of every other rank). An allreduce is a reduce-scatter then an allgather over
// fixed chunks, every rank reducing its own chunk in parallel, in place (Note [The thread backend's
// allreduce] in thread_process_group.cpp); every element is still summed in rank order, so results are
// bitwise deterministic whatever the thread timing and equal to a left-to-right sum over ranks 0..n-1.
// The work is done by the ranks that wait on (or poll) it, so it completes even when a rank never waits;
// a rank's collectives complete in the order it issued them. Broadcast, allgather and barrier are
// performed by the last rank to arrive. If a rank throws, run() aborts the
// world: every rank waiting on a collective gets an Error naming that rank instead of waiting out the
// timeout. If a rank's program ends (it returned, or caught its error and stopped), run() or the program
// itself calls leave(): the collectives that rank never reached fail at once on the others, naming it, as
// a multi-process run fails with a transport error when a peer exits.
// Point to point (send/recv) goes through per-rank mailboxes outside the collective numbering; a subgroup
// (subgroup()) is a ThreadWorld of its own that follows its parent's leaves and aborts.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
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

  // Point to point (ProcessGroup::send/recv). A send copies its tensor into dst's mailbox and is complete at
  // once (a buffered send: nothing waits on the receiver); a recv takes the first message in that mailbox from
  // `src` (-1: any rank) with `tag`, in the order they were sent, waiting up to the timeout. A recv whose sender
  // left (or, from any rank, whose every peer left) with no message waiting fails at once, naming it.
  std::shared_ptr<Work> send(int src, int dst, int tag, const Tensor& tensor);
  std::shared_ptr<Work> recv(int dst, int src, int tag, Tensor tensor);

  // `rank`'s group in a subgroup of `ranks` (ProcessGroup::subgroup): the k-th subgroup call of every rank makes
  // the k-th subgroup, a world of its own whose rank i is ranks[i]; null for a rank not in it. A rank that leaves
  // or aborts this world leaves or aborts its subgroups too, so their collectives fail as this world's do.
  std::shared_ptr<ProcessGroup> subgroup(int rank, const std::vector<int>& ranks);

  // Internal: one rank's arrival at its next collective.
  struct Arrival;
  std::shared_ptr<Work> arrive(int rank, Arrival arrival);

  struct Arrival {
    std::string kind;              // "allreduce", "broadcast", "allgather", "barrier"
    std::vector<Tensor> tensors;   // allreduce/broadcast: in-out; allgather: outputs
    Tensor input;                  // allgather
    ReduceOp op = ReduceOp::sum;
    int root = 0;
    bool detail = false;             // the arriving rank's group reports a mismatch as 1.13's DETAIL wrapper
    std::string signature() const;   // what must agree across ranks, for the mismatch error
    std::string fingerprint() const;   // 1.13's CollectiveFingerPrint of it (DETAIL)
    // Whether the two signatures are equal, without formatting them (every arrival checks this).
    bool same_signature(const Arrival& other) const;
  };

 private:
  // One piece of an allreduce: elements [begin, end) of tensor `tensor`, reduced over every rank.
  struct Piece {
    size_t tensor;
    int64_t begin, end;
  };
  struct Slot {
    explicit Slot(int size) : arrivals(size) {}
    std::vector<std::optional<Arrival>> arrivals;
    int arrived = 0;
    uint64_t seq = 0;
    std::atomic<bool> done{false};   // written under mu_; read without it by polls
    std::string error;               // set when the collective failed (mismatch)
    int mismatch_first = -1, mismatch_second = -1;   // the two ranks whose arrivals disagreed
    // An allreduce once every rank arrived (Note [The thread backend's allreduce]); fixed from then on.
    std::atomic<bool> ready{false};
    std::vector<std::vector<Piece>> pieces;          // per owner rank: its chunk, cut into pieces
    std::vector<std::vector<void*>> data;            // per tensor, per rank: the buffer
    std::vector<DType> dtypes;                       // per tensor
    ReduceOp op = ReduceOp::sum;
    std::unique_ptr<std::atomic<size_t>[]> claimed;  // per owner: pieces handed out so far (may overshoot)
    std::atomic<size_t> pieces_left{0};              // pieces not yet reduced; the one who reduces the last completes
  };
  friend class ThreadWork;
  friend class ThreadRecvWork;
  struct Message {
    int src, tag;
    Tensor data;   // a copy of the sent tensor
  };
  void perform(Slot& slot);         // broadcast, allgather, barrier: called with mu_ held by the last arrival
  void prepare_allreduce(Slot& slot);   // with mu_ held, at the last arrival: the pieces, then ready
  // Reduces unclaimed pieces of `slot`, rank's own chunk first; only its own when `own_only`. Without mu_.
  void reduce_pieces(Slot& slot, int rank, bool own_only);
  void complete(Slot& slot);        // with mu_ held: done, for every rank
  std::unique_lock<std::mutex> lock_world();   // mu_, polled before sleeping (Note [Spinning before sleeping])
  // With `lock` (on mu_) held: reduces and waits until every allreduce up to and including `seq` is done.
  void finish_through(uint64_t seq, int rank, std::unique_lock<std::mutex>& lock);
  // With mu_ held: the error for `rank` waiting in collective `seq` (a `kind`) when a rank that left will
  // never join it; empty while every missing rank may still come.
  std::string left_error(uint64_t seq, int rank, const std::string& kind) const;

  const int size_;
  const std::chrono::milliseconds timeout_;
  // Waiters poll before they block: every rank has a hardware thread (Note [Spinning before sleeping]).
  const bool spin_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<uint64_t, std::shared_ptr<Slot>> slots_;   // collectives some rank has not reached yet
  // (a finished slot leaves the map; the Works of its ranks keep it alive for their wait())
  std::map<uint64_t, std::shared_ptr<Slot>> running_;   // allreduces every rank reached, not yet done
  std::vector<uint64_t> next_seq_;     // per rank: the sequence number of its next collective
  std::string abort_reason_;           // non-empty once a rank failed
  struct Left {
    uint64_t collectives;   // how many it arrived at (#0 .. collectives-1); it never reaches the others
    std::string why;
  };
  std::vector<std::optional<Left>> left_;   // per rank: set once its program ended
  std::vector<std::deque<Message>> mailboxes_;   // per destination rank, oldest first; under mu_
  struct Subworld {
    std::vector<int> ranks;   // this world's rank of each of its ranks
    std::shared_ptr<ThreadWorld> world;
  };
  std::map<uint64_t, Subworld> subworlds_;   // by creation number; under mu_
  std::vector<uint64_t> next_subgroup_;      // per rank: the number of its next subgroup call
};

}  // namespace tinyddp::dist
