// The nccl backend (see the header for the stream and keep-alive rules). Plain C++ on the CUDA runtime API and
// NCCL; compiled only where both were found (TINYDDP_HAVE_NCCL), otherwise the factories explain what is missing.
#include "dist/nccl_process_group.h"

#include <cstdlib>
#include <string>

#include "dist/mpi_process_group.h"

#ifdef TINYDDP_HAVE_NCCL
#include <cuda_runtime_api.h>
#include <nccl.h>

// Non-blocking communicators (ncclConfig_t, ncclCommGetAsyncError polling, ncclCommFinalize) arrived in 2.14.
#if NCCL_VERSION_CODE < NCCL_VERSION(2, 14, 0)
#error "tinyddp's nccl backend needs NCCL 2.14 or newer (non-blocking communicators)"
#endif

#include <algorithm>
#include <cstring>
#include <iostream>
#include <mutex>
#include <thread>

#include "dist/comm_trace.h"
#endif

namespace tinyddp::dist {

#ifdef TINYDDP_HAVE_NCCL

namespace {

using Clock = std::chrono::steady_clock;

std::string rank_prefix(int rank) { return "[Rank " + std::to_string(rank) + "] "; }

// CUDA and NCCL failures name the rank, the call and its place (as llm.c's cudaCheck and nccl-tests' NCCLCHECK).
#define TINYDDP_CUDA_CHECK(call, rank)                                                                        \
  do {                                                                                                        \
    const cudaError_t err_ = (call);                                                                          \
    if (err_ != cudaSuccess)                                                                                  \
      throw Error(rank_prefix(rank) + #call " failed at " __FILE__ ":" + std::to_string(__LINE__) + ": " +   \
                  cudaGetErrorString(err_));                                                                  \
  } while (0)

// ncclInProgress is not a failure: a non-blocking communicator finishes the call in the background
// (wait_until_ready polls for it).
#define TINYDDP_NCCL_CHECK(call, rank, comm)                                                                  \
  do {                                                                                                        \
    const ncclResult_t res_ = (call);                                                                         \
    if (res_ != ncclSuccess && res_ != ncclInProgress)                                                        \
      throw Error(rank_prefix(rank) + #call " failed at " __FILE__ ":" + std::to_string(__LINE__) + ": " +   \
                  ncclGetErrorString(res_) + " (" + ncclGetLastError(comm) + "). Set NCCL_DEBUG=INFO for details."); \
  } while (0)

int64_t total_bytes(const std::vector<Tensor>& tensors) {
  int64_t bytes = 0;
  for (const Tensor& t : tensors) bytes += t.numel() * static_cast<int64_t>(element_size(t.dtype()));
  return bytes;
}

ncclDataType_t nccl_type(DType t) {
  switch (t) {
    case DType::f32: return ncclFloat32;
    case DType::f64: return ncclFloat64;
    case DType::i64: return ncclInt64;
  }
  throw Error("nccl process group: unsupported dtype");
}

// Makes `device` current on this thread for a scope (the backward may call collectives from any thread).
class DeviceGuard {
 public:
  DeviceGuard(int device, int rank) : device_(device) {
    TINYDDP_CUDA_CHECK(cudaGetDevice(&previous_), rank);
    if (previous_ != device_) TINYDDP_CUDA_CHECK(cudaSetDevice(device_), rank);
  }
  ~DeviceGuard() {
    if (previous_ != device_) cudaSetDevice(previous_);
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int device_;
  int previous_ = 0;
};

// One collective on the comm stream: `done` is recorded after it; `tensors` are the buffers NCCL reads or
// writes, kept alive until `done` happened (see the header).
struct Pending {
  std::string what;                   // "allreduce", ... for messages and traces
  int64_t bytes = 0;                  // payload per rank, for messages and traces
  std::chrono::milliseconds timeout;  // the group's timeout when the collective was issued
  cudaEvent_t done = nullptr;
  std::vector<Tensor> tensors;
  bool completed = false;
  ~Pending() {
    if (done) cudaEventDestroy(done);   // safe even if not reached yet: released once it is
  }
};

// The communicator, its stream and the in-flight collectives. Shared by the group and its Works, so that a Work
// may outlive its group. All members are guarded by `mu` (the reducer polls from autograd threads).
struct Comm {
  int rank = 0, size = 1, device = 0;
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;   // the dedicated communication stream (non-blocking)
  cudaEvent_t ready = nullptr;     // re-recorded on the compute stream before each collective
  void* barrier_buf = nullptr;     // 1 float on `device`: what barrier() all-reduces
  std::string aborted;             // why the communicator was aborted; empty while it is usable
  std::vector<std::shared_ptr<Pending>> in_flight;
  std::mutex mu;

  std::string describe(const Pending& p) const {
    return "NCCL " + p.what + " (" + std::to_string(p.bytes) + " bytes, world size " + std::to_string(size) +
           ", cuda:" + std::to_string(device) + ")";
  }

  // Throws if an earlier failure aborted the communicator.
  void check_usable(const char* what) const {
    TINYDDP_CHECK(aborted.empty(), rank_prefix(rank), "nccl process group: cannot run ", what, ": the communicator "
                  "was aborted after an earlier failure (", aborted, "). Create a new process group on every rank.");
  }

  // Aborts the communicator (NCCL's kernels stop waiting for peers) and throws `message`. Buffers of collectives
  // still in flight are kept for the life of the process: the GPU may still touch them until the abort lands.
  [[noreturn]] void fail(const std::string& message) {
    if (comm) ncclCommAbort(comm);
    comm = nullptr;
    aborted = message;
    orphan_in_flight();
    throw Error(message);
  }

  void orphan_in_flight() {
    static auto* orphaned = new std::vector<std::shared_ptr<Pending>>();   // never freed, on purpose
    for (auto& p : in_flight)
      if (!p->completed) orphaned->push_back(p);
    in_flight.clear();
  }

  // Non-blocking communicators finish init, group launches and finalize in the background: polls until the
  // state leaves ncclInProgress, failing on an error or after `timeout`.
  void wait_until_ready(const std::string& what, std::chrono::milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    for (;;) {
      ncclResult_t state = ncclSuccess;
      TINYDDP_NCCL_CHECK(ncclCommGetAsyncError(comm, &state), rank, comm);
      if (state == ncclSuccess) return;
      if (state != ncclInProgress)
        fail(rank_prefix(rank) + what + " failed: " + ncclGetErrorString(state) + " (" + ncclGetLastError(comm) +
             "). Another rank may have died or called a different collective; set NCCL_DEBUG=INFO for details.");
      if (Clock::now() > deadline)
        fail(rank_prefix(rank) + what + " did not finish within " + std::to_string(timeout.count()) +
             " ms. Check that every rank created the nccl group with the same world size and reached the same "
             "collective, and that the ranks can reach each other (NCCL_DEBUG=INFO tells more).");
      std::this_thread::yield();
    }
  }

  // True once `p` finished on the GPU. An NCCL async error or a CUDA fault aborts and throws.
  bool test(Pending& p) {
    if (p.completed) return true;
    check_usable(p.what.c_str());
    const cudaError_t q = cudaEventQuery(p.done);
    if (q == cudaSuccess) {
      p.completed = true;
      p.tensors.clear();
      if (trace::on()) trace::comm_end(rank, &p, 0);
      return true;
    }
    if (q != cudaErrorNotReady)
      fail(rank_prefix(rank) + describe(p) + " failed on the GPU: " + cudaGetErrorString(q) +
           ". A kernel before it or NCCL itself faulted; run with CUDA_LAUNCH_BLOCKING=1 and NCCL_DEBUG=INFO.");
    ncclResult_t async = ncclSuccess;
    TINYDDP_NCCL_CHECK(ncclCommGetAsyncError(comm, &async), rank, comm);
    if (async != ncclSuccess && async != ncclInProgress)
      fail(rank_prefix(rank) + describe(p) + " failed: " + ncclGetErrorString(async) + " (" + ncclGetLastError(comm) +
           "). A peer rank may have died or called a different collective; the communicator was aborted.");
    return false;
  }

  // Drops the collectives that finished (called before each new one): their buffers go back to the allocator.
  void reap() {
    std::erase_if(in_flight, [&](const std::shared_ptr<Pending>& p) { return test(*p); });
  }

  ~Comm() {
    try {
      DeviceGuard guard(device, rank);
      if (comm) {
        // Let what is in flight finish (bounded: a dead peer would make it wait forever), then close cleanly.
        const auto deadline = Clock::now() + std::chrono::milliseconds(5000);
        bool finished = false;
        while (!finished && Clock::now() < deadline) {
          finished = true;
          for (auto& p : in_flight) finished &= cudaEventQuery(p->done) != cudaErrorNotReady;
          if (!finished) std::this_thread::yield();
        }
        if (finished) {
          for (auto& p : in_flight) p->completed = true;
          in_flight.clear();
          // Finalize flushes NCCL's own pending work; on a non-blocking communicator it completes in the background.
          ncclResult_t state = ncclCommFinalize(comm);
          while (state == ncclInProgress && Clock::now() < deadline) {
            std::this_thread::yield();
            if (ncclCommGetAsyncError(comm, &state) != ncclSuccess) break;
          }
          finished = state == ncclSuccess;
        }
        if (finished) {
          ncclCommDestroy(comm);
        } else {
          std::cerr << rank_prefix(rank) << "nccl process group: collectives still in flight at destruction; "
                    << "aborting the communicator.\n";
          ncclCommAbort(comm);
          orphan_in_flight();
        }
      }
      if (barrier_buf) cudaFree(barrier_buf);
      if (ready) cudaEventDestroy(ready);
      if (stream) cudaStreamDestroy(stream);   // returns at once; released when its work is done
    } catch (...) {
      // A destructor reports nothing more: the process may be exiting after the CUDA runtime shut down.
    }
  }
};

class NcclWork : public Work {
 public:
  NcclWork(std::shared_ptr<Comm> comm, std::shared_ptr<Pending> pending)
      : comm_(std::move(comm)), pending_(std::move(pending)) {}

  bool is_completed() override {
    std::lock_guard<std::mutex> lock(comm_->mu);
    DeviceGuard guard(comm_->device, comm_->rank);
    return comm_->test(*pending_);
  }

  // Blocks the host until the collective finished or timeout() passed (polling keeps the deadline and sees
  // NCCL's async errors; a plain cudaEventSynchronize could hang forever on a dead peer). Then orders the compute
  // stream after it, as PyTorch's ncclWork::wait: later kernels and copies see the result.
  void wait() override {
    const auto deadline = Clock::now() + pending_->timeout;
    for (;;) {
      {
        std::lock_guard<std::mutex> lock(comm_->mu);
        DeviceGuard guard(comm_->device, comm_->rank);
        if (comm_->test(*pending_)) {
          if (!synced_) TINYDDP_CUDA_CHECK(cudaStreamWaitEvent(cudaStreamLegacy, pending_->done, 0), comm_->rank);
          synced_ = true;
          return;
        }
        if (Clock::now() > deadline)
          comm_->fail(rank_prefix(comm_->rank) + comm_->describe(*pending_) + " did not complete within " +
                      std::to_string(pending_->timeout.count()) +
                      " ms. A peer rank may have died, hung, or called a different collective (every rank must call "
                      "the same collectives in the same order); NCCL_DEBUG=INFO shows what each rank did. The "
                      "communicator was aborted; this process group cannot be used any more.");
      }
      std::this_thread::yield();
    }
  }

 private:
  std::shared_ptr<Comm> comm_;
  std::shared_ptr<Pending> pending_;
  bool synced_ = false;
};

class NcclProcessGroup : public ProcessGroup {
 public:
  NcclProcessGroup(int rank, int size, int device, ProcessGroup* bootstrap, std::chrono::milliseconds timeout) {
    timeout_ = timeout;
    TINYDDP_CHECK(size >= 1 && rank >= 0 && rank < size, "nccl process group: rank ", rank, " is not in [0, ", size,
                  ").");
    TINYDDP_CHECK(bootstrap != nullptr || size == 1, rank_prefix(rank), "nccl process group of ", size,
                  " ranks needs a bootstrap group to share the ncclUniqueId (e.g. mpi_world()); only a 1-rank group "
                  "can do without.");
    if (bootstrap)
      TINYDDP_CHECK(bootstrap->rank() == rank && bootstrap->size() == size, rank_prefix(rank),
                    "nccl process group: the bootstrap group is rank ", bootstrap->rank(), " of ", bootstrap->size(),
                    ", expected rank ", rank, " of ", size, ".");
    int count = 0;
    const cudaError_t err = cudaGetDeviceCount(&count);
    TINYDDP_CHECK(err == cudaSuccess && count > 0, rank_prefix(rank), "nccl process group: no CUDA device (",
                  err == cudaSuccess ? "0 devices" : cudaGetErrorString(err),
                  "); the nccl backend needs one GPU per rank. Use --backend mpi or thread on this machine.");
    TINYDDP_CHECK(device >= 0 && device < count, rank_prefix(rank), "nccl process group: device cuda:", device,
                  " does not exist; this machine has ", count, " CUDA device(s) (cuda:0 .. cuda:", count - 1,
                  "). Give each rank its own device, e.g. its local rank.");

    comm_ = std::make_shared<Comm>();
    Comm& c = *comm_;
    c.rank = rank;
    c.size = size;
    c.device = device;
    DeviceGuard guard(device, rank);

    // Rank 0 makes the id; the bootstrap group carries it to the others as 16 int64 (it is 128 opaque bytes).
    ncclUniqueId id{};
    if (rank == 0) TINYDDP_NCCL_CHECK(ncclGetUniqueId(&id), rank, nullptr);
    if (bootstrap) {
      static_assert(sizeof(ncclUniqueId) % sizeof(int64_t) == 0);
      Tensor packed = zeros({static_cast<int64_t>(sizeof(ncclUniqueId) / sizeof(int64_t))}, DType::i64);
      if (rank == 0) std::memcpy(packed.raw_data(), &id, sizeof(id));
      bootstrap->broadcast({packed}, 0)->wait();
      std::memcpy(&id, packed.raw_data(), sizeof(id));
    }

    // Non-blocking: ncclCommInitRankConfig returns at once and wait_until_ready can give up on a rank that never
    // joins (a blocking init would hang with no way out).
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    const std::string init = "NCCL communicator init (rank " + std::to_string(rank) + " of " + std::to_string(size) +
                             ", cuda:" + std::to_string(device) + ")";
    const ncclResult_t started = ncclCommInitRankConfig(&c.comm, size, id, rank, &config);
    if (started != ncclSuccess && started != ncclInProgress)
      c.fail(rank_prefix(rank) + init + " failed: " + ncclGetErrorString(started) + " (" + ncclGetLastError(c.comm) +
             "). Set NCCL_DEBUG=INFO for details.");
    c.wait_until_ready(init, timeout_);

    TINYDDP_CUDA_CHECK(cudaStreamCreateWithFlags(&c.stream, cudaStreamNonBlocking), rank);
    TINYDDP_CUDA_CHECK(cudaEventCreateWithFlags(&c.ready, cudaEventDisableTiming), rank);
    TINYDDP_CUDA_CHECK(cudaMalloc(&c.barrier_buf, sizeof(float)), rank);
    TINYDDP_CUDA_CHECK(cudaMemset(c.barrier_buf, 0, sizeof(float)), rank);
  }

  int rank() const override { return comm_->rank; }
  int size() const override { return comm_->size; }
  std::string backend() const override { return "nccl"; }

  std::shared_ptr<Work> allreduce(std::vector<Tensor> tensors, ReduceOp op) override {
    check_device_tensors(tensors, "allreduce");
    const ncclRedOp_t nccl_op = op == ReduceOp::sum       ? ncclSum
                                : op == ReduceOp::product ? ncclProd
                                : op == ReduceOp::min     ? ncclMin
                                                          : ncclMax;
    return launch("allreduce", tensors, total_bytes(tensors), [&](Comm& c) {
      for (const Tensor& t : tensors)
        TINYDDP_NCCL_CHECK(ncclAllReduce(t.raw_data(), t.raw_data(), static_cast<size_t>(t.numel()),
                                         nccl_type(t.dtype()), nccl_op, c.comm, c.stream),
                           c.rank, c.comm);
    });
  }

  std::shared_ptr<Work> broadcast(std::vector<Tensor> tensors, int root) override {
    check_device_tensors(tensors, "broadcast");
    TINYDDP_CHECK(root >= 0 && root < size(), rank_prefix(rank()), "broadcast: root ", root, " is not a rank of this ",
                  size(), "-rank group.");
    return launch("broadcast", tensors, total_bytes(tensors), [&](Comm& c) {
      for (const Tensor& t : tensors)
        TINYDDP_NCCL_CHECK(ncclBroadcast(t.raw_data(), t.raw_data(), static_cast<size_t>(t.numel()),
                                         nccl_type(t.dtype()), root, c.comm, c.stream),
                           c.rank, c.comm);
    });
  }

  // outputs[r] = rank r's input: one broadcast per rank, rooted there, fused by the NCCL group into one launch,
  // so every output is written in place (no flat buffer to copy out of).
  std::shared_ptr<Work> allgather(std::vector<Tensor> outputs, Tensor input) override {
    check_device_tensors(outputs, "allgather");
    check_device_tensors({input}, "allgather");
    TINYDDP_CHECK(static_cast<int>(outputs.size()) == size(), rank_prefix(rank()), "allgather: expected one output per rank (",
                  size(), "), got ", outputs.size(), ".");
    for (size_t r = 0; r < outputs.size(); ++r)
      TINYDDP_CHECK(outputs[r].numel() == input.numel() && outputs[r].dtype() == input.dtype(), rank_prefix(rank()),
                    "allgather: output ", r, " is ", dtype_name(outputs[r].dtype()), " of ", outputs[r].numel(),
                    " elements; expected ", dtype_name(input.dtype()), " of ", input.numel(), " like the input.");
    std::vector<Tensor> keep = outputs;
    keep.push_back(input);
    return launch("allgather", keep, total_bytes({input}), [&](Comm& c) {
      for (int r = 0; r < c.size; ++r)
        TINYDDP_NCCL_CHECK(ncclBroadcast(input.raw_data(), outputs[r].raw_data(), static_cast<size_t>(input.numel()),
                                         nccl_type(input.dtype()), r, c.comm, c.stream),
                           c.rank, c.comm);
    });
  }

  // An allreduce of one device float: done on this rank once every rank reached it.
  std::shared_ptr<Work> barrier() override {
    return launch("barrier", {}, sizeof(float), [&](Comm& c) {
      TINYDDP_NCCL_CHECK(ncclAllReduce(c.barrier_buf, c.barrier_buf, 1, ncclFloat32, ncclSum, c.comm, c.stream), c.rank,
                         c.comm);
    });
  }

  // NCCL has no tags and no receive from any rank: messages between two ranks match in the order they were
  // issued, so a tag other than 0 or src -1 is refused rather than matched wrongly.
  std::shared_ptr<Work> send(Tensor tensor, int dst, int tag) override {
    check_point_to_point(tensor, "send", "dst", dst, tag);
    return launch("send", {tensor}, total_bytes({tensor}), [&](Comm& c) {
      TINYDDP_NCCL_CHECK(ncclSend(tensor.raw_data(), static_cast<size_t>(tensor.numel()), nccl_type(tensor.dtype()), dst,
                                  c.comm, c.stream),
                         c.rank, c.comm);
    });
  }

  std::shared_ptr<Work> recv(Tensor tensor, int src, int tag) override {
    check_point_to_point(tensor, "recv", "src", src, tag);
    return launch("recv", {tensor}, total_bytes({tensor}), [&](Comm& c) {
      TINYDDP_NCCL_CHECK(ncclRecv(tensor.raw_data(), static_cast<size_t>(tensor.numel()), nccl_type(tensor.dtype()), src,
                                  c.comm, c.stream),
                         c.rank, c.comm);
    });
  }

 private:
  void check_point_to_point(const Tensor& tensor, const char* what, const char* name, int peer, int tag) const {
    check_device_tensors({tensor}, what);
    TINYDDP_CHECK(peer >= 0 && peer < size() && peer != rank(), rank_prefix(rank()), what, ": ", name, " ", peer,
                  " must be another rank of this ", size(), "-rank group (NCCL has no receive from any rank).");
    TINYDDP_CHECK(tag == 0, rank_prefix(rank()), what, ": tag ", tag, " is not supported by the nccl backend, which "
                  "has no tags (messages between two ranks match in issue order); pass tag 0.");
  }

  // What NCCL needs: defined, contiguous, one dtype (check_collective_tensors), and on this group's GPU.
  void check_device_tensors(const std::vector<Tensor>& tensors, const char* what) const {
    check_collective_tensors(tensors, what);
    const Device expected = Device::cuda(comm_->device);
    for (size_t i = 0; i < tensors.size(); ++i)
      TINYDDP_CHECK(tensors[i].device() == expected, rank_prefix(rank()), "nccl process group: ", what,
                    " expected tensors on ", expected.str(), ", got ", tensors[i].device().str(), " for tensor ", i,
                    "; move them with .to(Device::cuda(", comm_->device, ")) (each rank's nccl group owns one GPU; "
                    "CPU tensors need the mpi or thread backend).");
  }

  // Note [NCCL streams and events] (header): ready on the compute stream -> comm stream waits -> NCCL -> done.
  // `tensors`: every buffer NCCL touches (kept alive until done); `bytes`: the payload per rank, for messages.
  template <typename Issue>
  std::shared_ptr<Work> launch(const char* what, std::vector<Tensor> tensors, int64_t bytes, Issue issue) {
    Comm& c = *comm_;
    std::lock_guard<std::mutex> lock(c.mu);
    DeviceGuard guard(c.device, c.rank);
    c.check_usable(what);
    c.reap();
    auto p = std::make_shared<Pending>();
    p->what = what;
    p->bytes = bytes;
    p->timeout = timeout_;
    p->tensors = std::move(tensors);
    TINYDDP_CUDA_CHECK(cudaEventCreateWithFlags(&p->done, cudaEventDisableTiming), c.rank);
    TINYDDP_CUDA_CHECK(cudaEventRecord(c.ready, cudaStreamLegacy), c.rank);
    TINYDDP_CUDA_CHECK(cudaStreamWaitEvent(c.stream, c.ready, 0), c.rank);
    TINYDDP_NCCL_CHECK(ncclGroupStart(), c.rank, c.comm);
    issue(c);
    const ncclResult_t end = ncclGroupEnd();
    TINYDDP_NCCL_CHECK(end, c.rank, c.comm);
    // A non-blocking communicator may still be enqueueing: the stream is not ours to touch until it has.
    if (end == ncclInProgress) c.wait_until_ready(c.describe(*p) + " launch", p->timeout);
    TINYDDP_CUDA_CHECK(cudaEventRecord(p->done, c.stream), c.rank);
    if (trace::on()) trace::comm_begin(c.rank, p.get(), 0, what, p->bytes);
    c.in_flight.push_back(p);
    return std::make_shared<NcclWork>(comm_, p);
  }

  std::shared_ptr<Comm> comm_;
};

// The GPU of a rank started by mpirun: its rank among the processes on this machine.
int local_rank_device(int world_rank) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) return 0;   // the group's constructor explains
  for (const char* var : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"})
    if (const char* v = std::getenv(var)) return std::atoi(v) % count;
  return world_rank % count;
}

}  // namespace

bool nccl_available() { return true; }

std::shared_ptr<ProcessGroup> make_nccl_process_group(int rank, int size, int device, ProcessGroup* bootstrap,
                                                      std::chrono::milliseconds timeout) {
  return std::make_shared<NcclProcessGroup>(rank, size, device, bootstrap, timeout);
}

std::shared_ptr<ProcessGroup> nccl_world(int device) {
  if (launched_by_mpirun()) {
    auto mpi = mpi_world();   // "ncclUniqueId broadcast over MPI"; throws if the mpi backend is not built
    return make_nccl_process_group(mpi->rank(), mpi->size(), device >= 0 ? device : local_rank_device(mpi->rank()),
                                   mpi.get());
  }
  return make_nccl_process_group(0, 1, device >= 0 ? device : 0, nullptr);
}

#else

namespace {
[[noreturn]] void not_built() {
  throw Error("the nccl backend is not built: it needs the CUDA toolkit (nvcc) and NCCL (nccl.h, libnccl) at "
              "configure time; install them (e.g. under /usr/local/cuda) and re-run CMake, or use --backend mpi or "
              "thread.");
}
}  // namespace

bool nccl_available() { return false; }

std::shared_ptr<ProcessGroup> make_nccl_process_group(int, int, int, ProcessGroup*, std::chrono::milliseconds) {
  not_built();
}

std::shared_ptr<ProcessGroup> nccl_world(int) { not_built(); }

#endif

}  // namespace tinyddp::dist
