#include "dist/mpi_process_group.h"

#include <cstdlib>
#include <cstring>
#include <string>

#include "dist/comm_trace.h"

#ifdef TINYDDP_HAVE_MPI
#include <mpi.h>

#include <chrono>
#include <thread>
#endif

namespace tinyddp::dist {

bool launched_by_mpirun() { return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMI_SIZE") != nullptr; }

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
  }
  return MPI_DATATYPE_NULL;
}

// Finalizes MPI at process exit if we initialized it.
struct MpiRuntime {
  MpiRuntime() {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
      int provided = 0;
      // Collectives are issued and waited on from the rank's own thread (the one running the backward).
      MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
      owned = true;
    }
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  }
  ~MpiRuntime() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (owned && !finalized) {
      MPI_Comm_free(&comm);
      MPI_Finalize();
    }
  }
  bool owned = false;
  MPI_Comm comm = MPI_COMM_NULL;
};

MpiRuntime& runtime() {
  static MpiRuntime rt;
  return rt;
}

class MpiWork : public Work {
 public:
  MpiWork(MPI_Request request, int rank, std::string what, std::chrono::milliseconds timeout,
          std::vector<Tensor> keep_alive)
      : request_(request), rank_(rank), what_(std::move(what)), timeout_(timeout), keep_alive_(std::move(keep_alive)) {
    // Trace: MPI progresses a nonblocking collective only inside MPI calls, so completion is seen at a test or wait.
    if (trace::on())
      trace::comm_begin(rank_, this, 0, what_.c_str(),
                        keep_alive_.empty() ? 0 : keep_alive_[0].numel() * element_size(keep_alive_[0].dtype()));
  }

  // A collective still in flight keeps writing into its buffers: give it a bounded chance to finish, and
  // if it cannot, keep the buffers alive for the life of the process rather than let MPI write into freed
  // memory (this happens when a rank stops on an error with a bucket's allreduce launched).
  ~MpiWork() override {
    if (done_) return;
    try {
      const auto deadline = std::chrono::steady_clock::now() + std::min(timeout_, std::chrono::milliseconds(5000));
      while (!is_completed() && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
    } catch (...) {
    }
    if (!done_) {
      static std::vector<std::vector<Tensor>> orphaned;
      orphaned.push_back(std::move(keep_alive_));
    }
  }

  void wait() override {
    if (done_) return;
    const auto deadline = std::chrono::steady_clock::now() + timeout_;
    while (!is_completed()) {
      if (std::chrono::steady_clock::now() > deadline)
        throw Error("[Rank " + std::to_string(rank_) + "] MPI " + what_ + " did not complete within " +
                    std::to_string(timeout_.count()) + " ms. Another rank may have died, hung, or issued a different "
                    "collective; the job cannot continue (MPI cannot cancel a collective).");
      std::this_thread::yield();
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
    return packed(tensors, "allreduce", [&](Tensor& buf) {
      MPI_Request req;
      TINYDDP_MPI_CHECK(MPI_Iallreduce(MPI_IN_PLACE, buf.raw_data(), static_cast<int>(buf.numel()), mpi_type(buf.dtype()),
                                       op == ReduceOp::sum ? MPI_SUM : MPI_MAX, runtime().comm, &req),
                        rank_);
      return req;
    });
  }
  std::shared_ptr<Work> broadcast(std::vector<Tensor> tensors, int root) override {
    check_collective_tensors(tensors, "broadcast");
    check_host_tensors(tensors, "broadcast", "mpi");
    return packed(tensors, "broadcast", [&](Tensor& buf) {
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
    Tensor flat = empty({input.numel() * size_}, input.dtype());
    Tensor in = input.contiguous();
    MPI_Request req;
    TINYDDP_MPI_CHECK(MPI_Iallgather(in.raw_data(), static_cast<int>(in.numel()), mpi_type(in.dtype()), flat.raw_data(),
                                     static_cast<int>(in.numel()), mpi_type(in.dtype()), runtime().comm, &req),
                      rank_);
    auto inner = std::make_shared<MpiWork>(req, rank_, "allgather", timeout_, std::vector<Tensor>{flat, in});
    return std::make_shared<PackedWork>(inner, flat, outputs);
  }
  std::shared_ptr<Work> barrier() override {
    MPI_Request req;
    TINYDDP_MPI_CHECK(MPI_Ibarrier(runtime().comm, &req), rank_);
    return std::make_shared<MpiWork>(req, rank_, "barrier", timeout_, std::vector<Tensor>{});
  }

 private:
  template <typename Start>
  std::shared_ptr<Work> packed(std::vector<Tensor>& tensors, const char* what, Start start) {
    if (tensors.size() == 1) {
      MPI_Request req = start(tensors[0]);
      return std::make_shared<MpiWork>(req, rank_, what, timeout_, tensors);
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
    MPI_Request req = start(flat);
    auto inner = std::make_shared<MpiWork>(req, rank_, what, timeout_, std::vector<Tensor>{flat});
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

void mpi_abort(int code) {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::abort();
}

#else

bool mpi_available() { return false; }

std::shared_ptr<ProcessGroup> mpi_world() {
  throw Error("the mpi backend is not built: install Open MPI (apt-get install libopenmpi-dev openmpi-bin) and "
              "re-run CMake, or use --backend thread.");
}

void mpi_abort(int code) { std::exit(code); }

#endif

}  // namespace tinyddp::dist
