// What the distributed layer adds to the rank-free trace recorder (base/trace.h): ranks and collectives.
//
//   trace::RankScope rank(pg.rank());               // this thread's events belong to rank r (a trace process)
//   trace::CommLabel label([&] { return trace::What{"reducer", "bucket 0", {{"params", ...}}}; });
//   trace::comm_begin(rank, this, seq, "allreduce", bytes);  ...  trace::comm_end(rank, this, seq);
//
// Tracks of a rank: kComputeTrack (base/trace.h: forward, backward, autograd nodes, AccumulateGrad, reducer
// hooks, finalize, optimizer step) and kCommTrack: collectives in flight, from launch to completion, as async
// spans recorded by the process-group backends.
#pragma once

#include <cstdint>

#include "base/trace.h"

namespace tinyddp::trace {

constexpr int kCommTrack = 2;   // collectives in flight, one async span each

// A rank is a trace process: under the thread backend every rank's events land in one file, one pid each.
using RankScope = ProcessScope;
inline int current_rank() { return current_process(); }

// A collective of rank `rank` started; `key` identifies it until comm_end (owner: the backend object that
// tracks it, id: a sequence number or 0). The span is drawn on the comm track of that rank, named after the
// innermost CommLabel of the launching thread if there is one ("allreduce bucket 0"), else after `kind`.
void comm_begin(int rank, const void* owner, uint64_t id, const char* kind, int64_t bytes);
// The collective completed on rank `rank` (recorded by whichever thread saw it complete).
void comm_end(int rank, const void* owner, uint64_t id);

// While alive, collectives launched by this thread are named and annotated by `what` (the reducer labels a
// bucket's allreduce with its index and parameters). Nests; cheap when tracing is off.
class CommLabel {
 public:
  template <typename Describe>
  explicit CommLabel(Describe&& describe) {
    if (on()) push(describe());
  }
  ~CommLabel() {
    if (pushed_) pop();
  }
  CommLabel(const CommLabel&) = delete;
  CommLabel& operator=(const CommLabel&) = delete;

 private:
  void push(What&& what);
  void pop();
  bool pushed_ = false;
};

}  // namespace tinyddp::trace
