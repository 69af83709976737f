#include "dist/mpi_process_group.h"

#include <algorithm>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <string>

#include "dist/comm_trace.h"

#ifdef TINYDDP_HAVE_MPI
#include <mpi.h>

#include <array>
#include <chrono>
#include <thread>

#include "dist/shared_memory_allreduce.h"
#endif

namespace tinyddp::dist {

namespace {
// The first of these variables the launcher set, as an int; -1 when none is set.
int launcher_env(std::initializer_list<const char*> names) {
  for (const char* name : names)
    if (const char* v = std::getenv(name)) return std::atoi(v);
  return -1;
}
}  // namespace

// Open MPI's mpirun sets OMPI_COMM_WORLD_*, a PMIx launcher PMIX_RANK, Hydra (MPICH) PMI_*.
bool launched_by_mpirun() { return launcher_env({"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE"}) >= 0; }

int mpirun_rank() { return std::max(0, launcher_env({"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"})); }

#ifdef TINYDDP_HAVE_MPI

namespace {

#define TINYDDP_MPI_CHECK(call, rank)                                                                       \
  do {                                                                                                      \
    int rc_ = (call);                                                                                       \
    if (rc_ != MPI_SUCCESS) {                                                                               \
      char msg_[MPI_MAX_ERROR_STRING];                                                                      \
      int len_ = 0;                                                                                         \
      MPI_Error_string(rc_, msg_, &len_);                                                                   \
      throw Error(std::string("[Rank ") + std::to_string(rank) + "] " #call " failed at " __FILE__ ":" +   \
                  std::to_string(__LINE__) + ": " + std::string(msg_, len_));                              \
    }                                                                                                       \
  } while (0)

MPI_Datatype mpi_type(DType t) {
  switch (t) {
    case DType::f32: return MPI_FLOAT;
    case DType::f64: return MPI_DOUBLE;
    case DType::i64: return MPI_INT64_T;
    case DType::b8: break;   // refused by check_collective_tensors before any MPI call
  }
  TINYDDP_INTERNAL_ASSERT(false, "mpi_type: no MPI datatype for ", dtype_name(t));
  return MPI_DATATYPE_NULL;
}

MPI_Op mpi_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum: return MPI_SUM;
    case ReduceOp::product: return MPI_PROD;
    case ReduceOp::min: return MPI_MIN;
    case ReduceOp::max: return MPI_MAX;
  }
  return MPI_OP_NULL;
}

// Note [Open MPI's nonblocking allreduce]
// MPI_Iallreduce comes from Open MPI's libnbc, which picks its own algorithm unless told; on 2 ranks that
// sends whole buffers, and its allreduce took 2-2.4x what the blocking MPI_Allreduce takes (measured here with
// 2 ranks over shared memory, best of 15: 4 MiB 3.0 ms against 1.29 ms blocking, 1 MiB 0.40 against 0.21 ms).
// Rabenseifner's algorithm (libnbc's number 3: reduce-scatter, then allgather, the ring's 2(n-1)/n bytes per
// rank) brought 4 MiB to 1.42 ms, the blocking call's time, and small messages lost nothing (4 KiB 5.3 us
// against 7.5). libnbc reads the choice at MPI_Init from its MCA parameter, so it is set in the environment
// before tinyddp initializes MPI, and never over a value the user set (mpirun -x, or the environment).
// libnbc falls back to another algorithm where this one does not apply (fewer elements than ranks).
void prefer_reduce_scatter_allgather() {
  setenv("OMPI_MCA_coll_libnbc_iallreduce_algorithm", "3", /*overwrite=*/0);
}

// Finalizes MPI at process exit if we initialized it.
struct MpiRuntime {
  MpiRuntime() {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
      int provided = 0;
      prefer_reduce_scatter_allgather();   // Note [Open MPI's nonblocking allreduce]
      // Collectives are issued and waited on from the rank's own thread (the one running the backward).
      MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
      owned = true;
    }
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    MPI_Comm_dup(MPI_COMM_WORLD, &signature_comm);
    MPI_Comm_set_errhandler(signature_comm, MPI_ERRORS_RETURN);
    // The ranks sharing this node's memory (Note [Polling MPI without a busy core]).
    MPI_Comm node = MPI_COMM_NULL;
    int node_ranks = 1, world_ranks = 1;
    MPI_Comm_size(comm, &world_ranks);
    if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
      MPI_Comm_size(node, &node_ranks);
      // Every rank on this node: allreduce through shared memory (Note [The mpi backend's shared-memory
      // allreduce]). The same answer on every rank, or all fall back to MPI_Iallreduce.
      if (node_ranks == world_ranks && world_ranks > 1) map_shared_segments(node);
      MPI_Comm_free(&node);
    }
    // Every CPU of the node, not this process's affinity mask: mpirun binds each rank to its own core, which
    // is the case where spinning costs no one anything (the thread backend counts its mask instead).
    ranks_have_own_cores = static_cast<unsigned>(node_ranks) <= std::thread::hardware_concurrency();
  }
  ~MpiRuntime() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized) return;
    if (shared_window != MPI_WIN_NULL) MPI_Win_free(&shared_window);
    if (owned) {
      MPI_Comm_free(&signature_comm);
      MPI_Comm_free(&comm);
      MPI_Finalize();
    }
  }

  // Collective over `node` (every rank of the job). TINYDDP_MPI_SHARED_MEMORY=0 keeps MPI_Iallreduce, e.g. to
  // compare the two (bench_allreduce under mpirun prints which one ran).
  void map_shared_segments(MPI_Comm node) {
    const char* env = std::getenv("TINYDDP_MPI_SHARED_MEMORY");
    const bool wanted = !(env && std::string(env) == "0");
    const MPI_Aint bytes = SharedMemoryAllreduce::segment_bytes();
    std::byte* mine = nullptr;
    bool ok = false;
    if (wanted) {
      MPI_Info info;
      MPI_Info_create(&info);
      MPI_Info_set(info, "alloc_shared_noncontig", "true");   // each rank's segment page-aligned, its own
      MPI_Comm_set_errhandler(node, MPI_ERRORS_RETURN);
      ok = MPI_Win_allocate_shared(bytes, 1, info, node, &mine, &shared_window) == MPI_SUCCESS;
      MPI_Info_free(&info);
    }
    int everywhere = ok ? 1 : 0;
    MPI_Allreduce(MPI_IN_PLACE, &everywhere, 1, MPI_INT, MPI_MIN, node);
    // MPI_Win_free is collective: only a window every rank has may be freed (one that some ranks failed to
    // create stays, unused, rather than hang the others).
    const bool allocated_everywhere = everywhere != 0;
    int rank = 0, size = 1;
    MPI_Comm_rank(node, &rank);
    MPI_Comm_size(node, &size);
    std::vector<std::byte*> segments(size);
    for (int r = 0; everywhere && r < size; ++r) {
      MPI_Aint got = 0;
      int disp = 0;
      void* base = nullptr;
      everywhere = MPI_Win_shared_query(shared_window, r, &got, &disp, &base) == MPI_SUCCESS && got >= bytes;
      segments[r] = static_cast<std::byte*>(base);
    }
    MPI_Allreduce(MPI_IN_PLACE, &everywhere, 1, MPI_INT, MPI_MIN, node);
    if (!everywhere) {
      if (allocated_everywhere) MPI_Win_free(&shared_window);
      shared_window = MPI_WIN_NULL;
      if (wanted && rank == 0)
        std::fprintf(stderr, "tinyddp: mpi: no shared-memory allreduce (MPI_Win_allocate_shared of %lld MiB per rank "
                     "failed; is /dev/shm full or small?); allreduce goes through MPI_Iallreduce, which is slower "
                     "on one machine.\n", static_cast<long long>(bytes >> 20));
      return;
    }
    std::memset(mine, 0, 64);   // the arrival counter, before any rank looks at it
    MPI_Barrier(node);
    shared_memory = std::make_unique<SharedMemoryAllreduce>(rank, std::move(segments));
  }

  bool owned = false;
  MPI_Comm comm = MPI_COMM_NULL;             // the collectives
  MPI_Comm signature_comm = MPI_COMM_NULL;   // the signatures sent before each (Note [Signatures before every collective])
  // Every MpiProcessGroup of this process shares `comm`, so the numbering and the failure are the process's.
  bool ranks_have_own_cores = false;   // this node runs no more ranks than it has hardware threads
  uint64_t next_seq = 0;   // collective #N, numbered from 0 as the thread backend numbers them
  // The first collective that failed (timed out or did not match). MPI cannot cancel a collective, so after
  // it the ranks no longer agree on what is in flight: no collective may start and no wait may block again.
  std::string failure;
  // Allreduce through shared memory when every rank is on this node; null otherwise (and under
  // TINYDDP_MPI_SHARED_MEMORY=0).
  MPI_Win shared_window = MPI_WIN_NULL;
  std::unique_ptr<SharedMemoryAllreduce> shared_memory;
  bool progressing_shared_memory = false;   // inside shared_memory's progress (no re-entry from a pause)
};

MpiRuntime& runtime() {
  static MpiRuntime rt;
  return rt;
}

// Marks the group failed (the first failure stays the one reported) and returns the error to throw.
CollectiveFailedError fail_group(const std::string& why) {
  if (runtime().failure.empty()) runtime().failure = why;
  return CollectiveFailedError(why);
}

CollectiveFailedError failed_earlier(int rank, const std::string& what) {
  return CollectiveFailedError("[Rank " + std::to_string(rank) + "] " + what + " cannot run: the process group failed "
                               "earlier: " + runtime().failure + " (MPI cannot cancel a collective; the job must end)");
}

// Note [Polling MPI without a busy core]
// Open MPI progresses a nonblocking collective only inside MPI calls (libnbc has no progress thread by
// default), so a wait must keep calling MPI_Test. Back-to-back tests with a yield in between kept a core busy
// for the whole wait, the core the peer rank (and its reduction) needed on a 2-core machine. A wait now backs
// off: tests back to back (with a yield) for a while, then a sleep between tests that doubles from
// kMinPollSleep up to kMaxPollSleep and never reaches past the deadline, so the timeout fires when it did.
// kMaxPollSleep bounds what a wait adds after the collective finished: 0.25 ms against the milliseconds of
// a bucket's allreduce. (Linux rounds a sleep up by the thread's timer slack, 50 us by default.)
// How long the back-to-back phase lasts depends on whether the core is wanted. When this node runs no more
// ranks than it has hardware threads, no peer waits for our core, and every sleep only delays the next round
// of libnbc's schedule: bench_allreduce under mpirun -np 2 on 2 cores took 425 us for 1 MiB and 918 us for
// 4 MiB with a 0.1 ms spin, 159 and 546 us with 2 ms (a standalone MPI_Wait loop: 190 and 716 us). The same
// holds for the wait on the peers' signatures, which is where a rank that is ahead waits for the others. So
// such a rank tests back to back for kSpinOwnCore; on an oversubscribed node (ctest -j, mpirun
// --oversubscribe with more ranks than cores) only for kSpinSharedCore, as a small collective needs.
constexpr std::chrono::microseconds kSpinOwnCore{2000};
constexpr std::chrono::microseconds kSpinSharedCore{100};
constexpr std::chrono::microseconds kMinPollSleep{20};
constexpr std::chrono::microseconds kMaxPollSleep{250};

class PollBackoff {
 public:
  explicit PollBackoff(std::chrono::steady_clock::time_point deadline)
      : deadline_(deadline),
        spin_until_(std::chrono::steady_clock::now() +
                    (runtime().ranks_have_own_cores ? kSpinOwnCore : kSpinSharedCore)) {}
  // Between two polls.
  void pause() {
    const auto now = std::chrono::steady_clock::now();
    if (now < spin_until_) {
      std::this_thread::yield();
      return;
    }
    if (now >= deadline_) return;
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(sleep_, deadline_ - now));
    sleep_ = std::min(2 * sleep_, kMaxPollSleep);
  }

 private:
  std::chrono::steady_clock::time_point deadline_, spin_until_;
  std::chrono::microseconds sleep_ = kMinPollSleep;
};

// "1" or "1, 2, 3": every rank but `rank`.
std::string other_ranks(int rank, int size) {
  std::string out;
  for (int r = 0; r < size; ++r)
    if (r != rank) out += (out.empty() ? "" : ", ") + std::to_string(r);
  return out;
}

// Note [Two progress engines]
// With the shared-memory allreduce a rank has two kinds of collectives in flight: MPI's, which move only inside
// MPI calls, and the shared-memory allreduces, which move only when this rank runs their steps. A rank blocked
// on one kind keeps the other kind moving, or a peer blocked on the other kind could wait for it forever (rank 0
// waits for a broadcast that needs rank 1's MPI calls while rank 1 waits for a step of an allreduce that rank 0
// launched before the broadcast). So every MPI wait loop runs the shared-memory steps that need no waiting, and
// every shared-memory wait pokes MPI's progress engine.
// While alive, this process is inside shared_memory's progress: a pause must not enter it again.
class InSharedMemoryProgress {
 public:
  InSharedMemoryProgress() { runtime().progressing_shared_memory = true; }
  ~InSharedMemoryProgress() { runtime().progressing_shared_memory = false; }
  InSharedMemoryProgress(const InSharedMemoryProgress&) = delete;
  InSharedMemoryProgress& operator=(const InSharedMemoryProgress&) = delete;
};

void progress_shared_memory() {
  MpiRuntime& rt = runtime();
  if (!rt.shared_memory || rt.shared_memory->idle() || rt.progressing_shared_memory) return;
  InSharedMemoryProgress inside;
  rt.shared_memory->progress_all(/*block=*/false, {}, {});
}

void poke_mpi() {
  int flag = 0;
  MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, runtime().comm, &flag, MPI_STATUS_IGNORE);
}

class MpiWork : public Work {
 public:
  MpiWork(MPI_Request request, int rank, uint64_t seq, std::string what, std::chrono::milliseconds timeout,
          std::vector<Tensor> keep_alive)
      : request_(request), rank_(rank), seq_(seq), what_(std::move(what)), timeout_(timeout),
        keep_alive_(std::move(keep_alive)) {
    // Trace: MPI progresses a nonblocking collective only inside MPI calls, so completion is seen at a test or wait.
    if (trace::on())
      trace::comm_begin(rank_, this, 0, what_.c_str(),
                        keep_alive_.empty() ? 0 : keep_alive_[0].numel() * element_size(keep_alive_[0].dtype()));
  }

  // A collective still in flight keeps writing into its buffers: they stay alive for the life of the process
  // rather than let MPI write into freed memory (a rank unwinding from an error with a bucket's allreduce
  // launched, or a failed group). No waiting here: unwinding must not hold a rank (issue 14 saw 2.4-5x the
  // timeout spent in such waits).
  ~MpiWork() override {
    try {
      if (!done_) is_completed();
    } catch (...) {
    }
    if (!done_) {
      static std::vector<std::vector<Tensor>> orphaned;
      orphaned.push_back(std::move(keep_alive_));
    }
  }

  void wait() override {
    if (done_ || is_completed()) return;
    if (!runtime().failure.empty()) throw failed_earlier(rank_, what_);
    const auto deadline = std::chrono::steady_clock::now() + timeout_;
    PollBackoff backoff(deadline);   // Note [Polling MPI without a busy core]
    while (!is_completed()) {
      if (std::chrono::steady_clock::now() > deadline) {
        int size = 1;
        MPI_Comm_size(runtime().comm, &size);
        // Every rank sent its signature, so all reached it (Note [Signatures before every collective]).
        const std::string others = other_ranks(rank_, size);
        throw fail_group("[Rank " + std::to_string(rank_) + "] MPI " + what_ + " (collective #" + std::to_string(seq_) +
                         ") did not complete within " + std::to_string(timeout_.count()) + " ms although every rank "
                         "had reached it: " + (size == 2 ? "rank " : "one of ranks ") + others +
                         " stopped or failed inside it. The job cannot continue (MPI cannot cancel a collective).");
      }
      progress_shared_memory();   // Note [Two progress engines]
      backoff.pause();
    }
  }
  bool is_completed() override {
    if (done_) return true;
    int flag = 0;
    TINYDDP_MPI_CHECK(MPI_Test(&request_, &flag, MPI_STATUS_IGNORE), rank_);
    done_ = flag != 0;
    if (done_ && trace::on()) trace::comm_end(rank_, this, 0);
    if (done_) keep_alive_.clear();
    return done_;
  }

 private:
  MPI_Request request_;
  int rank_;
  uint64_t seq_;
  std::string what_;
  std::chrono::milliseconds timeout_;
  std::vector<Tensor> keep_alive_;   // the buffers MPI reads/writes until completion
  bool done_ = false;
};

// Several tensors in one collective: packed into one flat buffer, unpacked on completion.
class PackedWork : public Work {
 public:
  PackedWork(std::shared_ptr<Work> inner, Tensor flat, std::vector<Tensor> targets)
      : inner_(std::move(inner)), flat_(std::move(flat)), targets_(std::move(targets)) {}
  void wait() override {
    inner_->wait();
    unpack();
  }
  bool is_completed() override {
    if (!inner_->is_completed()) return false;
    unpack();
    return true;
  }

 private:
  void unpack() {
    if (unpacked_) return;
    int64_t offset = 0;
    for (Tensor& t : targets_) {
      std::memcpy(t.raw_data(), static_cast<char*>(flat_.raw_data()) + offset * element_size(t.dtype()),
                  t.numel() * element_size(t.dtype()));
      offset += t.numel();
    }
    unpacked_ = true;
  }
  std::shared_ptr<Work> inner_;
  Tensor flat_;
  std::vector<Tensor> targets_;
  bool unpacked_ = false;
};

// A recv into its staging buffer, copied into the caller's tensor once complete.
class RecvCopyWork : public Work {
 public:
  RecvCopyWork(std::shared_ptr<Work> inner, Tensor buffer, Tensor target)
      : inner_(std::move(inner)), buffer_(std::move(buffer)), target_(std::move(target)) {}
  void wait() override {
    inner_->wait();
    copy();
  }
  bool is_completed() override {
    if (!inner_->is_completed()) return false;
    copy();
    return true;
  }
  int source_rank() override { return inner_->source_rank(); }

 private:
  void copy() {
    if (copied_) return;
    std::memcpy(target_.raw_data(), buffer_.raw_data(), target_.numel() * element_size(target_.dtype()));
    copied_ = true;
  }
  std::shared_ptr<Work> inner_;
  Tensor buffer_, target_;
  bool copied_ = false;
};

// A send or recv: only two ranks take part, so it is outside the collective numbering and the signatures, and a
// timeout fails this call only (a pending receive is cancelled; an unmatched send's copy is kept alive).
class MpiPointToPointWork : public Work {
 public:
  MpiPointToPointWork(MPI_Request request, int rank, std::string what, std::chrono::milliseconds timeout,
                      Tensor buffer, Tensor target, bool is_recv)
      : request_(request), rank_(rank), what_(std::move(what)), timeout_(timeout), buffer_(std::move(buffer)),
        target_(std::move(target)), is_recv_(is_recv) {}

  ~MpiPointToPointWork() override {
    if (done_) return;
    if (is_recv_) {
      MPI_Cancel(&request_);
      MPI_Wait(&request_, MPI_STATUS_IGNORE);   // a cancelled receive completes at once
    } else {
      static std::vector<Tensor> orphaned;   // MPI may still read it
      orphaned.push_back(buffer_);
    }
  }

  void wait() override {
    if (done_ || is_completed()) return;
    const auto deadline = std::chrono::steady_clock::now() + timeout_;
    PollBackoff backoff(deadline);   // Note [Polling MPI without a busy core]
    while (!is_completed()) {
      if (std::chrono::steady_clock::now() > deadline)
        throw CollectiveFailedError("[Rank " + std::to_string(rank_) + "] MPI " + what_ + " timed out after " +
                                    std::to_string(timeout_.count()) + " ms: the peer never " +
                                    (is_recv_ ? "sent" : "received") + " it. It may have died, hung, or used another "
                                    "tag.");
      progress_shared_memory();   // Note [Two progress engines]
      backoff.pause();
    }
  }

  bool is_completed() override {
    if (done_) return true;
    int flag = 0;
    MPI_Status status;
    TINYDDP_MPI_CHECK(MPI_Test(&request_, &flag, &status), rank_);
    if (!flag) return false;
    done_ = true;
    if (is_recv_) {
      source_ = status.MPI_SOURCE;
      int count = 0;
      MPI_Get_count(&status, MPI_BYTE, &count);
      const int64_t want = target_.numel() * static_cast<int64_t>(element_size(target_.dtype()));
      TINYDDP_CHECK(count == want, "[Rank ", rank_, "] ", what_, ": the message from rank ", source_, " has ", count,
                    " bytes but the receiving tensor has ", want, "; send and recv need the same numel and dtype.");
    }
    return true;
  }

  int source_rank() override { return source_; }

 private:
  MPI_Request request_;
  int rank_;
  std::string what_;
  std::chrono::milliseconds timeout_;
  Tensor buffer_, target_;
  bool is_recv_;
  bool done_ = false;
  int source_ = -1;
};

// Note [Signatures before every collective]
// Before it starts an MPI collective, each rank sends the collective's signature (kind, sizes, dtype, op or
// root: collective_signature, the thread backend's text) to every other rank and waits for theirs. Ranks
// that called different collectives then get the thread backend's mismatch error instead of a crash inside
// Open MPI (MPI_ERR_TRUNCATE, a corrupted heap, SIGSEGV), and a rank that never arrives is named, since a
// receive that does not complete says whose. Point-to-point rather than an allgather for that reason.
// Cost per collective: 2(N-1) messages of kSignatureBytes and a wait for the last rank to start it.
constexpr int kSignatureBytes = 256;
constexpr int kSignatureTag = 14;
// The text, and for a shared-memory allreduce where its buffer starts in the sender's arena (-1: not there), so
// that every rank can tell whether all of them can reduce in place.
struct SignatureBuffer {
  std::array<char, kSignatureBytes> text;
  int64_t arena_offset = -1;
};

// A signature longer than the buffer (a bucket of many tensors) is cut and keeps a hash of the whole text,
// so that two different long signatures still differ.
SignatureBuffer pack_signature(const std::string& text) {
  std::string s = text;
  if (s.size() >= kSignatureBytes) {
    uint64_t h = 1469598103934665603ull;   // FNV-1a 64
    for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
    s = s.substr(0, kSignatureBytes - 32) + "... #" + std::to_string(h);
  }
  SignatureBuffer b{};
  std::memcpy(b.text.data(), s.data(), std::min(s.size(), b.text.size() - 1));
  return b;
}

// One collective's signature exchange (Note [Signatures before every collective]): posted at construction,
// completed by test() or wait().
class SignatureExchange {
 public:
  SignatureExchange(int rank, int size, uint64_t seq, const char* what, const std::string& signature,
                    std::chrono::milliseconds timeout, int64_t arena_offset = -1)
      : rank_(rank), size_(size), seq_(seq), what_(what), timeout_(timeout), buffers_(std::make_unique<Buffers>()) {
    MpiRuntime& rt = runtime();
    Buffers& b = *buffers_;
    b.mine = pack_signature(signature);
    b.mine.arena_offset = arena_offset;
    b.theirs.resize(size_);
    b.sends.assign(size_, MPI_REQUEST_NULL);
    b.receives.assign(size_, MPI_REQUEST_NULL);
    for (int r = 0; r < size_; ++r) {
      if (r == rank_) continue;
      TINYDDP_MPI_CHECK(MPI_Irecv(&b.theirs[r], sizeof(SignatureBuffer), MPI_BYTE, r, kSignatureTag, rt.signature_comm,
                                  &b.receives[r]),
                        rank_);
      TINYDDP_MPI_CHECK(MPI_Isend(&b.mine, sizeof(SignatureBuffer), MPI_BYTE, r, kSignatureTag, rt.signature_comm,
                                  &b.sends[r]),
                        rank_);
    }
  }
  // Incomplete: MPI may still write into the buffers, which then stay allocated for the life of the process.
  ~SignatureExchange() {
    if (!checked_) (void)buffers_.release();
  }
  SignatureExchange(const SignatureExchange&) = delete;
  SignatureExchange& operator=(const SignatureExchange&) = delete;

  // Whether every signature arrived and ours left. The first time they have, compares them: a mismatch throws,
  // failing the group.
  bool test() {
    if (checked_) return true;
    Buffers& b = *buffers_;
    bool pending = false;
    for (int r = 0; r < size_; ++r)
      for (MPI_Request* req : {&b.receives[r], &b.sends[r]}) {
        if (*req == MPI_REQUEST_NULL) continue;
        int flag = 0;
        TINYDDP_MPI_CHECK(MPI_Test(req, &flag, MPI_STATUS_IGNORE), rank_);
        pending |= flag == 0;
      }
    if (pending) return false;
    const std::string mine(b.mine.text.data());
    for (int r = 0; r < size_; ++r) {
      if (r == rank_) continue;
      const std::string theirs(b.theirs[r].text.data(), strnlen(b.theirs[r].text.data(), kSignatureBytes));
      if (theirs != mine)
        throw fail_group("[Rank " + std::to_string(rank_) + "] " +
                         collective_mismatch_message(seq_, r, theirs, rank_, mine));
    }
    checked_ = true;
    return true;
  }

  // After test() held: whether every rank's buffer starts at the same offset of its arena.
  bool same_arena_offsets() const {
    const Buffers& b = *buffers_;
    if (b.mine.arena_offset < 0) return false;
    for (int r = 0; r < size_; ++r)
      if (r != rank_ && b.theirs[r].arena_offset != b.mine.arena_offset) return false;
    return true;
  }

  // Blocks until test() holds; at `deadline` throws, failing the group, naming the ranks whose signature never
  // came. `progress_shared_memory`: whether the pauses run shared-memory steps (Note [Two progress engines]).
  void wait(std::chrono::steady_clock::time_point deadline, bool progress_shared_memory) {
    PollBackoff backoff(deadline);   // Note [Polling MPI without a busy core]
    while (!test()) {
      if (std::chrono::steady_clock::now() > deadline) {
        std::string missing;
        for (int r = 0; r < size_; ++r)
          if (buffers_->receives[r] != MPI_REQUEST_NULL) missing += (missing.empty() ? "" : ", ") + std::to_string(r);
        if (missing.empty()) missing = other_ranks(rank_, size_);   // only our sends are stuck: no rank received
        throw fail_group(collective_timeout_message(rank_, what_, seq_, timeout_, missing));
      }
      if (progress_shared_memory) dist::progress_shared_memory();
      backoff.pause();
    }
  }

 private:
  struct Buffers {
    SignatureBuffer mine;
    std::vector<SignatureBuffer> theirs;
    std::vector<MPI_Request> sends, receives;   // per rank; MPI_REQUEST_NULL once complete (and for this rank)
  };
  int rank_, size_;
  uint64_t seq_;
  const char* what_;
  std::chrono::milliseconds timeout_;
  std::unique_ptr<Buffers> buffers_;
  bool checked_ = false;
};

// An allreduce through the node's shared memory (Note [The mpi backend's shared-memory allreduce]). Dropped
// before completion, it stays queued and completes when a later collective of this rank is waited on.
class SharedMemoryWork : public Work {
 public:
  SharedMemoryWork(std::shared_ptr<SharedMemoryAllreduce::Op> op, int rank, std::chrono::milliseconds timeout,
                   int64_t bytes)
      : op_(std::move(op)), rank_(rank), timeout_(timeout) {
    if (trace::on()) trace::comm_begin(rank_, this, 0, "allreduce", bytes);
  }
  ~SharedMemoryWork() override {
    if (!done_ && trace::on()) trace::comm_end(rank_, this, 0);
  }

  void wait() override {
    if (done_) return;
    if (!runtime().failure.empty()) throw failed_earlier(rank_, "allreduce");
    const auto deadline = std::chrono::steady_clock::now() + timeout_;
    PollBackoff backoff(deadline);   // Note [Polling MPI without a busy core]
    step(/*block=*/true, deadline, [&] {
      poke_mpi();   // Note [Two progress engines]
      backoff.pause();
    });
  }
  bool is_completed() override {
    if (done_) return true;
    if (!runtime().failure.empty()) return false;
    step(/*block=*/false, std::chrono::steady_clock::now() + timeout_, {});
    return done_;
  }

 private:
  void step(bool block, std::chrono::steady_clock::time_point deadline, const SharedMemoryAllreduce::Pause& pause) {
    MpiRuntime& rt = runtime();
    if (rt.progressing_shared_memory) {   // a poll from inside a shared-memory wait's pause: it moves nothing
      TINYDDP_INTERNAL_ASSERT(!block, "a shared-memory wait inside another's pause");
      return;
    }
    InSharedMemoryProgress inside;
    try {
      done_ = rt.shared_memory->progress(*op_, block, deadline, pause);
    } catch (const SharedMemoryAllreduce::PeersMissing& e) {
      // Its signature exchange completed, so every rank had reached it.
      const bool several = e.missing.find(',') != std::string::npos;
      throw fail_group("[Rank " + std::to_string(rank_) + "] MPI allreduce (collective #" + std::to_string(e.seq) +
                       ", through shared memory) did not complete within " + std::to_string(timeout_.count()) +
                       " ms although every rank had reached it: " + (several ? "ranks " : "rank ") + e.missing +
                       " stopped or failed inside it. The job cannot continue.");
    }
    if (done_) {
      if (trace::on()) trace::comm_end(rank_, this, 0);
      op_.reset();
    }
  }

  std::shared_ptr<SharedMemoryAllreduce::Op> op_;
  int rank_;
  std::chrono::milliseconds timeout_;
  bool done_ = false;
};

class MpiProcessGroup : public ProcessGroup {
 public:
  MpiProcessGroup() {
    MPI_Comm_rank(runtime().comm, &rank_);
    MPI_Comm_size(runtime().comm, &size_);
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string backend() const override { return "mpi"; }

  std::shared_ptr<Work> allreduce(std::vector<Tensor> tensors, ReduceOp op) override {
    check_collective_tensors(tensors, "allreduce");
    check_host_tensors(tensors, "allreduce", "mpi");
    if (runtime().shared_memory) return shared_memory_allreduce(std::move(tensors), op);
    const uint64_t seq = start("allreduce", collective_signature("allreduce", tensors, {}, op, 0));
    return packed(tensors, seq, "allreduce", [&](Tensor& buf) {
      MPI_Request req;
      TINYDDP_MPI_CHECK(MPI_Iallreduce(MPI_IN_PLACE, buf.raw_data(), static_cast<int>(buf.numel()), mpi_type(buf.dtype()),
                                       mpi_op(op), runtime().comm, &req),
                        rank_);
      return req;
    });
  }
  std::shared_ptr<Work> broadcast(std::vector<Tensor> tensors, int root) override {
    check_collective_tensors(tensors, "broadcast");
    check_host_tensors(tensors, "broadcast", "mpi");
    TINYDDP_CHECK(root >= 0 && root < size_, "broadcast: root ", root, " is not a rank of a group of size ", size_, ".");
    const uint64_t seq = start("broadcast", collective_signature("broadcast", tensors, {}, ReduceOp::sum, root));
    return packed(tensors, seq, "broadcast", [&](Tensor& buf) {
      MPI_Request req;
      TINYDDP_MPI_CHECK(MPI_Ibcast(buf.raw_data(), static_cast<int>(buf.numel()), mpi_type(buf.dtype()), root,
                                   runtime().comm, &req),
                        rank_);
      return req;
    });
  }
  std::shared_ptr<Work> allgather(std::vector<Tensor> outputs, Tensor input) override {
    check_collective_tensors(outputs, "allgather");
    check_host_tensors(outputs, "allgather", "mpi");
    check_host_tensors({input}, "allgather", "mpi");
    TINYDDP_CHECK(static_cast<int>(outputs.size()) == size_, "allgather: expected one output per rank (", size_,
                  "), got ", outputs.size(), ".");
    const uint64_t seq = start("allgather", collective_signature("allgather", outputs, input, ReduceOp::sum, 0));
    Tensor flat = empty({input.numel() * size_}, input.dtype());
    Tensor in = input.contiguous();
    MPI_Request req;
    TINYDDP_MPI_CHECK(MPI_Iallgather(in.raw_data(), static_cast<int>(in.numel()), mpi_type(in.dtype()), flat.raw_data(),
                                     static_cast<int>(in.numel()), mpi_type(in.dtype()), runtime().comm, &req),
                      rank_);
    auto inner = std::make_shared<MpiWork>(req, rank_, seq, "allgather", timeout_, std::vector<Tensor>{flat, in});
    return std::make_shared<PackedWork>(inner, flat, outputs);
  }
  // Note [The mpi backend's shared-memory allreduce]: buckets in this rank's arena are reduced in place.
  Tensor allocate_bucket(int64_t numel, DType dtype, Device device) override {
    if (runtime().shared_memory && device.is_cpu())
      if (Tensor t = runtime().shared_memory->allocate(numel, dtype); t.defined()) return t;
    return ProcessGroup::allocate_bucket(numel, dtype, device);
  }
  std::shared_ptr<Work> barrier() override {
    const uint64_t seq = start("barrier", collective_signature("barrier", {}, {}, ReduceOp::sum, 0));
    MPI_Request req;
    TINYDDP_MPI_CHECK(MPI_Ibarrier(runtime().comm, &req), rank_);
    return std::make_shared<MpiWork>(req, rank_, seq, "barrier", timeout_, std::vector<Tensor>{});
  }
  std::shared_ptr<Work> send(Tensor tensor, int dst, int tag) override {
    check_collective_tensors({tensor}, "send");
    check_host_tensors({tensor}, "send", "mpi");
    TINYDDP_CHECK(dst >= 0 && dst < size_ && dst != rank_, "send: dst ", dst, " must be another rank of a group of "
                  "size ", size_, " (this is rank ", rank_, ").");
    Tensor copy = tensor.clone();   // the caller may reuse its tensor at once, as with gloo's send
    MPI_Request req;
    TINYDDP_MPI_CHECK(MPI_Isend(copy.raw_data(), static_cast<int>(copy.numel() * element_size(copy.dtype())), MPI_BYTE,
                                dst, tag, runtime().comm, &req),
                      rank_);
    return std::make_shared<MpiPointToPointWork>(req, rank_, "send to rank " + std::to_string(dst) + " (tag " +
                                                 std::to_string(tag) + ")", timeout_, copy, Tensor(), false);
  }
  std::shared_ptr<Work> recv(Tensor tensor, int src, int tag) override {
    check_collective_tensors({tensor}, "recv");
    check_host_tensors({tensor}, "recv", "mpi");
    TINYDDP_CHECK(src == -1 || (src >= 0 && src < size_ && src != rank_), "recv: src ", src, " must be another rank "
                  "of a group of size ", size_, " (this is rank ", rank_, "), or -1 for any rank.");
    // One byte more than expected: a longer message then shows as a wrong count instead of MPI_ERR_TRUNCATE.
    const int64_t bytes = tensor.numel() * static_cast<int64_t>(element_size(tensor.dtype()));
    Tensor buffer = empty({bytes + 1}, DType::b8);
    MPI_Request req;
    TINYDDP_MPI_CHECK(MPI_Irecv(buffer.raw_data(), static_cast<int>(bytes + 1), MPI_BYTE, src == -1 ? MPI_ANY_SOURCE : src,
                                tag, runtime().comm, &req),
                      rank_);
    auto inner = std::make_shared<MpiPointToPointWork>(
        req, rank_, "recv from " + (src == -1 ? std::string("any rank") : "rank " + std::to_string(src)) + " (tag " +
                        std::to_string(tag) + ")", timeout_, buffer, tensor, true);
    return std::make_shared<RecvCopyWork>(inner, buffer, tensor);
  }

 private:
  // Numbers the next collective and exchanges its signature with every rank (Note [Signatures before every
  // collective]); throws CollectiveFailedError, and fails the group, on a mismatch or a rank that does not
  // start it within the timeout. Returns the collective's number.
  uint64_t start(const char* what, const std::string& signature) {
    uint64_t seq = 0;
    auto exchange = post_signature(what, signature, &seq);
    if (exchange) exchange->wait(std::chrono::steady_clock::now() + timeout_, /*progress_shared_memory=*/true);
    return seq;
  }

  // Numbers the next collective (*seq) and sends its signature; null on a group of one. The caller completes it.
  std::shared_ptr<SignatureExchange> post_signature(const char* what, const std::string& signature, uint64_t* seq,
                                                    int64_t arena_offset = -1) {
    MpiRuntime& rt = runtime();
    if (!rt.failure.empty()) throw failed_earlier(rank_, what);
    *seq = rt.next_seq++;
    if (size_ == 1) return nullptr;
    return std::make_shared<SignatureExchange>(rank_, size_, *seq, what, signature, timeout_, arena_offset);
  }

  // Note [The mpi backend's shared-memory allreduce]: the signature goes out now and is checked before the
  // first byte moves, so that the launch does not wait for the peers (the reducer launches a bucket's allreduce
  // from inside the backward).
  std::shared_ptr<Work> shared_memory_allreduce(std::vector<Tensor> tensors, ReduceOp op) {
    SharedMemoryAllreduce& shm = *runtime().shared_memory;
    uint64_t seq = 0;
    std::shared_ptr<SignatureExchange> exchange = post_signature(
        "allreduce", collective_signature("allreduce", tensors, {}, op, 0), &seq, shm.arena_offset(tensors));
    auto ready = [exchange](bool block, std::chrono::steady_clock::time_point deadline, bool* in_place) {
      if (!block && !exchange->test()) return false;
      // Within a shared-memory wait: no shared-memory steps from its pauses (Note [Two progress engines]).
      if (block) exchange->wait(deadline, /*progress_shared_memory=*/false);
      *in_place = exchange->same_arena_offsets();
      return true;
    };
    int64_t bytes = 0;
    for (const Tensor& t : tensors) bytes += t.numel() * static_cast<int64_t>(element_size(t.dtype()));
    auto shm_op = shm.start(std::move(tensors), op, seq, std::move(ready));
    auto work = std::make_shared<SharedMemoryWork>(std::move(shm_op), rank_, timeout_, bytes);
    work->is_completed();   // the steps that need no peer: the copy in, while the bucket is in cache
    return work;
  }

  template <typename Start>
  std::shared_ptr<Work> packed(std::vector<Tensor>& tensors, uint64_t seq, const char* what, Start start_mpi) {
    if (tensors.size() == 1) {
      MPI_Request req = start_mpi(tensors[0]);
      return std::make_shared<MpiWork>(req, rank_, seq, what, timeout_, tensors);
    }
    int64_t total = 0;
    for (const Tensor& t : tensors) {
      TINYDDP_CHECK(t.dtype() == tensors[0].dtype(), what, ": all tensors of one call must share a dtype.");
      total += t.numel();
    }
    Tensor flat = empty({total}, tensors.empty() ? DType::f32 : tensors[0].dtype());
    int64_t offset = 0;
    for (const Tensor& t : tensors) {
      std::memcpy(static_cast<char*>(flat.raw_data()) + offset * element_size(t.dtype()), t.raw_data(),
                  t.numel() * element_size(t.dtype()));
      offset += t.numel();
    }
    MPI_Request req = start_mpi(flat);
    auto inner = std::make_shared<MpiWork>(req, rank_, seq, what, timeout_, std::vector<Tensor>{flat});
    return std::make_shared<PackedWork>(inner, flat, tensors);
  }

  int rank_ = 0, size_ = 1;
};

}  // namespace

bool mpi_available() { return true; }

std::shared_ptr<ProcessGroup> mpi_world() {
  runtime();
  return std::make_shared<MpiProcessGroup>();
}

bool mpi_shared_memory_allreduce() { return runtime().shared_memory != nullptr; }

void mpi_abort(int code) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized) std::exit(code);   // no MPI job to end: the launcher sees this exit code
  MPI_Abort(MPI_COMM_WORLD, code);
  std::abort();
}

#else

bool mpi_available() { return false; }

std::shared_ptr<ProcessGroup> mpi_world() {
  throw Error("the mpi backend is not built: install Open MPI (apt-get install libopenmpi-dev openmpi-bin) and "
              "re-run CMake, or use --backend thread.");
}

bool mpi_shared_memory_allreduce() { return false; }

void mpi_abort(int code) { std::exit(code); }

#endif

}  // namespace tinyddp::dist
