// Process groups: how ranks talk. One interface, several backends side by side:
//   thread  N ranks as threads of one process; deterministic (sums in rank order); tests and `repro`
//   mpi     Open MPI, one rank per process, launched with `mpirun -np N` on one or several machines
//   nccl    NCCL, one GPU per rank, device tensors only (nccl_process_group.h; built where NCCL is found)
//
//   auto work = pg->allreduce({bucket});   // starts the collective; returns at once
//   ...                                     // the backward goes on; `bucket` must not be touched
//   work->wait();                          // bucket now holds the sum over ranks
//
// Every wait has a deadline (ProcessGroup::timeout()): a rank that died, never arrived or called a
// different collective turns into an Error on the others that names the collective and the ranks, never
// a hang.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "engine/core/tensor.h"

namespace tinyddp::dist {

// A collective that can never complete because a peer's program has ended (the thread backend's
// ThreadWorld::leave): what a multi-process run reports as a transport error when the peer process exits.
class PeerLeftError : public Error {
 public:
  using Error::Error;
};

// A collective that cannot complete: a rank did not arrive within the timeout, the ranks called different
// collectives, or the group already failed so (MPI cannot cancel a collective) no new one may start.
// `tinyddp` ends with exit code 3 on it.
class CollectiveFailedError : public Error {
 public:
  using Error::Error;
};

// Elementwise reductions of allreduce, as torch.distributed.ReduceOp's SUM, PRODUCT, MIN, MAX.
enum class ReduceOp { sum, product, min, max };
const char* reduce_op_name(ReduceOp op);   // "sum", "product", "min", "max"

// 60 s: far above any collective of this project on a shared 2-core machine, short enough that a
// stuck test fails well inside CI's budget. Override per group.
constexpr std::chrono::milliseconds kDefaultTimeout{60'000};

// An in-flight collective.
class Work {
 public:
  virtual ~Work() = default;
  // Blocks until the collective completed on this rank; throws on timeout or failure.
  virtual void wait() = 0;
  virtual bool is_completed() = 0;
  // A completed recv: the rank its message came from (what recv from any source needs); -1 for the others.
  virtual int source_rank() { return -1; }
};

class ProcessGroup {
 public:
  virtual ~ProcessGroup() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual std::string backend() const = 0;
  std::chrono::milliseconds timeout() const { return timeout_; }
  void set_timeout(std::chrono::milliseconds t) { timeout_ = t; }
  // TORCH_DISTRIBUTED_DEBUG=DETAIL: 1.13 wraps the group in its ProcessGroupWrapper, which checks every
  // collective's fingerprint across ranks first; a mismatch is then reported in its words (the thread backend).
  bool detail_fingerprints() const { return detail_fingerprints_; }
  void set_detail_fingerprints(bool on) { detail_fingerprints_ = on; }

  // In place: each tensor ends up holding op over all ranks' tensors. Tensors must be contiguous and of
  // one dtype, and every rank must pass the same number and sizes.
  virtual std::shared_ptr<Work> allreduce(std::vector<Tensor> tensors, ReduceOp op = ReduceOp::sum) = 0;
  // In place: every rank's tensors get root's values.
  virtual std::shared_ptr<Work> broadcast(std::vector<Tensor> tensors, int root = 0) = 0;
  // outputs[r] gets rank r's input; outputs must have size() tensors shaped like input.
  virtual std::shared_ptr<Work> allgather(std::vector<Tensor> outputs, Tensor input) = 0;
  virtual std::shared_ptr<Work> barrier() = 0;

  // A zero-filled buffer that this group will allreduce again and again: the reducer's buckets. A backend that
  // reduces its own memory in place, without a copy in or out, hands that out (mpi: shared memory, Note [The mpi
  // backend's shared-memory allreduce]); the rest, and that one when it runs out, give zeros(). Not a
  // collective, but ranks that ask for the same sizes in the same order get matching buffers, which the
  // in-place path needs (otherwise the allreduce copies).
  virtual Tensor allocate_bucket(int64_t numel, DType dtype, Device device);

  // Point to point: `tensor` goes to rank `dst`'s recv with the same tag. Messages between two ranks with one
  // tag arrive in the order they were sent. A backend without them throws (they are not collectives: only the
  // two ranks take part, so they are outside the collective sequence numbers).
  virtual std::shared_ptr<Work> send(Tensor tensor, int dst, int tag = 0);
  // Fills `tensor` (contiguous, the sent numel and dtype) from rank `src`'s send with `tag`; src = -1 takes the
  // first message with that tag from any rank (Work::source_rank says whose).
  virtual std::shared_ptr<Work> recv(Tensor tensor, int src, int tag = 0);

  // A group of some of this group's ranks (`ranks`: this group's ranks, each once, in the order that numbers the
  // new group's ranks). Every rank of this group calls it, members or not, in the same order (as
  // torch.distributed.new_group requires); returns this rank's group, or null when this rank is not in `ranks`.
  // A backend without subgroups throws.
  virtual std::shared_ptr<ProcessGroup> subgroup(const std::vector<int>& ranks);

 protected:
  std::chrono::milliseconds timeout_ = kDefaultTimeout;
  bool detail_fingerprints_ = false;
};

// Checks shared by backends: defined, contiguous, same dtype etc. Throws naming the collective.
void check_collective_tensors(const std::vector<Tensor>& tensors, const char* collective);
// The host backends (thread, mpi): every tensor on the CPU. Throws naming the backend and the way out.
void check_host_tensors(const std::vector<Tensor>& tensors, const char* collective, const char* backend);

// Every rank's string, in rank order, on every rank (two allgathers: the lengths, then the padded bytes).
std::vector<std::string> allgather_strings(ProcessGroup& pg, const std::string& mine);

// What must agree across ranks for one collective, as the mismatch error shows it:
// "allreduce(f32[3], f32[5], sum)", "allgather(i64[1], i64[1], input i64[1])", "broadcast(f64[4], root 0)".
std::string collective_signature(const std::string& kind, const std::vector<Tensor>& tensors, const Tensor& input,
                                 ReduceOp op, int root);
// The error when rank `rank` called `mine` as collective #seq and rank `other` called `theirs`.
std::string collective_mismatch_message(uint64_t seq, int other, const std::string& theirs, int rank,
                                        const std::string& mine);
// The error when ranks `missing` ("1" or "1, 3") never arrived at collective #seq within `timeout`.
std::string collective_timeout_message(int rank, const std::string& kind, uint64_t seq,
                                       std::chrono::milliseconds timeout, const std::string& missing);

// A Work that is already complete (used by backends for trivial cases, e.g. one rank).
class CompletedWork : public Work {
 public:
  void wait() override {}
  bool is_completed() override { return true; }
};

}  // namespace tinyddp::dist
