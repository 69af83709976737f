#include "dist/thread_process_group.h"

#include <algorithm>
#include <cstring>
#include <sstream>
#include <thread>

#include "dist/comm_trace.h"

namespace tinyddp::dist {

namespace {

std::string describe(const Tensor& t) {
  std::ostringstream os;
  os << dtype_name(t.dtype()) << "[" << t.numel() << "]";
  return os.str();
}

template <typename T>
void reduce_into(std::vector<T*>& buffers, int64_t n, ReduceOp op) {
  // Rank order, element by element: the same sum on every run.
  T* first = buffers[0];
  std::vector<T> acc(first, first + n);
  for (size_t r = 1; r < buffers.size(); ++r)
    for (int64_t i = 0; i < n; ++i) acc[i] = op == ReduceOp::sum ? acc[i] + buffers[r][i] : std::max(acc[i], buffers[r][i]);
  for (T* b : buffers) std::copy(acc.begin(), acc.end(), b);
}

// Trace: the bytes a rank hands to a collective.
int64_t arrival_bytes(const ThreadWorld::Arrival& a) {
  int64_t bytes = a.input.defined() ? a.input.numel() * static_cast<int64_t>(element_size(a.input.dtype())) : 0;
  for (const Tensor& t : a.tensors) bytes += t.numel() * static_cast<int64_t>(element_size(t.dtype()));
  return bytes;
}

}  // namespace

std::string ThreadWorld::Arrival::signature() const {
  return collective_signature(kind, tensors, input, op, root);
}

class ThreadWork : public Work {
 public:
  ThreadWork(std::shared_ptr<ThreadWorld> world, std::shared_ptr<ThreadWorld::Slot> slot, uint64_t seq, int rank,
             std::string what)
      : world_(std::move(world)), slot_(std::move(slot)), seq_(seq), rank_(rank), what_(std::move(what)) {}

  void wait() override {
    if (completed_) return;
    ThreadWorld& w = *world_;
    std::unique_lock<std::mutex> lock(w.mu_);
    Slot& slot = *slot_;
    // A rank that left this collective is reported before an abort: it is this rank's own cause, whereas
    // an abort may be another waiter failing for that same leave, first by thread timing.
    std::string left;
    w.cv_.wait_for(lock, w.timeout_, [&] {
      if (slot.done || !slot.error.empty()) return true;
      left = w.left_error(seq_, rank_, what_);
      return !left.empty() || !w.abort_reason_.empty();
    });
    if (!slot.error.empty()) throw Error(slot.error);
    if (!slot.done) {
      if (!left.empty()) throw PeerLeftError(left);
      if (!w.abort_reason_.empty())
        throw Error("[Rank " + std::to_string(rank_) + "] " + what_ + " (collective #" + std::to_string(seq_) +
                    ") cannot complete: " + w.abort_reason_);
      std::ostringstream missing;
      for (int r = 0; r < w.size_; ++r)
        if (!slot.arrivals[r]) missing << (missing.tellp() ? ", " : "") << r;
      throw CollectiveFailedError(collective_timeout_message(rank_, what_, seq_, w.timeout_, missing.str()));
    }
    completed_ = true;
  }

  bool is_completed() override {
    if (completed_) return true;
    // A poll must not wait: while the last rank to arrive performs the collective it holds the world's
    // lock, and a poll from the backward (the reducer's per-hook poll) would stall until the sum is done.
    std::unique_lock<std::mutex> lock(world_->mu_, std::try_to_lock);
    return lock.owns_lock() && slot_->done;
  }

 private:
  using Slot = ThreadWorld::Slot;
  std::shared_ptr<ThreadWorld> world_;
  std::shared_ptr<Slot> slot_;
  uint64_t seq_;
  int rank_;
  std::string what_;
  bool completed_ = false;
};

namespace {

class ThreadProcessGroup : public ProcessGroup {
 public:
  ThreadProcessGroup(std::shared_ptr<ThreadWorld> world, int rank, std::chrono::milliseconds timeout)
      : world_(std::move(world)), rank_(rank) {
    timeout_ = timeout;
  }
  int rank() const override { return rank_; }
  int size() const override { return world_->size(); }
  std::string backend() const override { return "thread"; }

  std::shared_ptr<Work> allreduce(std::vector<Tensor> tensors, ReduceOp op) override {
    check_collective_tensors(tensors, "allreduce");
    check_host_tensors(tensors, "allreduce", "thread");
    return world_->arrive(rank_, {"allreduce", std::move(tensors), {}, op, 0});
  }
  std::shared_ptr<Work> broadcast(std::vector<Tensor> tensors, int root) override {
    check_collective_tensors(tensors, "broadcast");
    check_host_tensors(tensors, "broadcast", "thread");
    TINYDDP_CHECK(root >= 0 && root < size(), "broadcast: root ", root, " is not a rank of a group of size ", size(), ".");
    return world_->arrive(rank_, {"broadcast", std::move(tensors), {}, ReduceOp::sum, root});
  }
  std::shared_ptr<Work> allgather(std::vector<Tensor> outputs, Tensor input) override {
    check_collective_tensors(outputs, "allgather");
    check_host_tensors(outputs, "allgather", "thread");
    check_collective_tensors({input}, "allgather");
    check_host_tensors({input}, "allgather", "thread");
    TINYDDP_CHECK(static_cast<int>(outputs.size()) == size(), "allgather: expected one output tensor per rank (",
                  size(), ") but got ", outputs.size(), ".");
    for (const Tensor& o : outputs)
      TINYDDP_CHECK(o.numel() == input.numel() && o.dtype() == input.dtype(), "allgather: output ", describe(o),
                    " does not match the input ", describe(input), ".");
    return world_->arrive(rank_, {"allgather", std::move(outputs), std::move(input), ReduceOp::sum, 0});
  }
  std::shared_ptr<Work> barrier() override { return world_->arrive(rank_, {"barrier", {}, {}, ReduceOp::sum, 0}); }

 private:
  std::shared_ptr<ThreadWorld> world_;
  int rank_;
};

}  // namespace

ThreadWorld::ThreadWorld(int size, std::chrono::milliseconds timeout)
    : size_(size), timeout_(timeout), next_seq_(static_cast<size_t>(std::max(size, 0)), 0),
      left_(static_cast<size_t>(std::max(size, 0))) {
  TINYDDP_CHECK(size >= 1, "ThreadWorld: the number of ranks must be at least 1, got ", size, ".");
}

std::shared_ptr<ProcessGroup> ThreadWorld::group(int rank) {
  TINYDDP_CHECK(rank >= 0 && rank < size_, "ThreadWorld: rank ", rank, " is out of range for ", size_, " ranks.");
  return std::make_shared<ThreadProcessGroup>(shared_from_this(), rank, timeout_);
}

void ThreadWorld::leave(int rank, const std::string& why) {
  TINYDDP_CHECK(rank >= 0 && rank < size_, "ThreadWorld::leave: rank ", rank, " is out of range for ", size_, " ranks.");
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!left_[rank]) left_[rank] = Left{next_seq_[rank], why};
  }
  cv_.notify_all();
}

std::string ThreadWorld::left_error(uint64_t seq, int rank, const std::string& kind) const {
  // A rank that left after n collectives arrived at #0 .. #n-1 and at nothing later.
  for (int r = 0; r < size_; ++r) {
    if (!left_[r] || left_[r]->collectives > seq) continue;
    const uint64_t n = left_[r]->collectives;
    const std::string after = n == 0 ? "before its first collective"
                              : n == 1 ? "after its only collective (#0)"
                                       : "after its " + std::to_string(n) + " collectives (#0 to #" +
                                             std::to_string(n - 1) + ")";
    return "thread process group: rank " + std::to_string(rank) + " waited in " + kind + " (its collective #" +
           std::to_string(seq) + ") for rank " + std::to_string(r) + ", which left the process group " + after +
           ": " + left_[r]->why + ". Collective #" + std::to_string(seq) +
           " needs every rank, so it can never complete; a multi-process run (gloo, MPI) would fail here too, "
           "with a transport error or at the timeout. Every rank must issue the same collectives in the same "
           "order.";
  }
  return "";
}

void ThreadWorld::abort(int rank, const std::string& reason) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (abort_reason_.empty()) abort_reason_ = "rank " + std::to_string(rank) + " failed: " + reason;
  }
  cv_.notify_all();
}

std::shared_ptr<Work> ThreadWorld::arrive(int rank, Arrival arrival) {
  const std::string what = arrival.kind;
  uint64_t seq;
  std::shared_ptr<Slot> slot_ptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    TINYDDP_CHECK(!left_[rank], "thread process group: rank ", rank, " called ", arrival.kind,
                  " after it left the process group (", left_[rank] ? left_[rank]->why : "", "). A rank leaves "
                  "when its program has ended; issue every collective before leave().");
    seq = next_seq_[rank]++;
    if (trace::on()) trace::comm_begin(rank, this, seq, arrival.kind.c_str(), arrival_bytes(arrival));
    auto& entry = slots_[seq];
    if (!entry) {
      entry = std::make_shared<Slot>();
      entry->arrivals.resize(size_);
    }
    slot_ptr = entry;
    Slot& slot = *entry;
    // All ranks must agree on what this collective is; the first arrival sets the expectation.
    for (int r = 0; r < size_ && slot.error.empty(); ++r) {
      if (!slot.arrivals[r]) continue;
      const std::string mine = arrival.signature(), theirs = slot.arrivals[r]->signature();
      if (mine != theirs) slot.error = collective_mismatch_message(seq, r, theirs, rank, mine);
    }
    slot.arrivals[rank] = std::move(arrival);
    if (++slot.arrived == size_) {
      if (slot.error.empty()) perform(seq, slot);
      slots_.erase(seq);
    }
  }
  cv_.notify_all();
  return std::make_shared<ThreadWork>(shared_from_this(), std::move(slot_ptr), seq, rank, what);
}

void ThreadWorld::perform(uint64_t seq, Slot& slot) {
  const Arrival& first = *slot.arrivals[0];
  if (first.kind == "allreduce") {
    for (size_t i = 0; i < first.tensors.size(); ++i) {
      dispatch_numeric(first.tensors[i].dtype(), "allreduce", [&]<typename T>() {   // bool was refused at the call
        std::vector<T*> buffers;
        for (int r = 0; r < size_; ++r) buffers.push_back(slot.arrivals[r]->tensors[i].template data_ptr<T>());
        reduce_into(buffers, first.tensors[i].numel(), first.op);
      });
    }
  } else if (first.kind == "broadcast") {
    const Arrival& root = *slot.arrivals[first.root];
    for (int r = 0; r < size_; ++r)
      for (size_t i = 0; i < root.tensors.size(); ++i)
        if (r != first.root)
          std::memcpy(slot.arrivals[r]->tensors[i].raw_data(), root.tensors[i].raw_data(),
                      root.tensors[i].numel() * element_size(root.tensors[i].dtype()));
  } else if (first.kind == "allgather") {
    for (int r = 0; r < size_; ++r)
      for (int src = 0; src < size_; ++src) {
        const Tensor& in = slot.arrivals[src]->input;
        std::memcpy(slot.arrivals[r]->tensors[src].raw_data(), in.raw_data(), in.numel() * element_size(in.dtype()));
      }
  }
  slot.done = true;
  if (trace::on())   // the last arrival completes it for every rank
    for (int r = 0; r < size_; ++r) trace::comm_end(r, this, seq);
  // Drop the tensors now: a finished slot keeps only its status for the waiters.
  for (auto& a : slot.arrivals) a.reset();
  slot.arrivals.assign(size_, std::nullopt);
  (void)seq;
}

std::vector<std::exception_ptr> ThreadWorld::run(int size, const std::function<void(ProcessGroup&)>& fn,
                                                 std::chrono::milliseconds timeout) {
  auto world = std::make_shared<ThreadWorld>(size, timeout);
  std::vector<std::exception_ptr> errors(size);
  std::vector<std::thread> threads;
  for (int r = 0; r < size; ++r) {
    threads.emplace_back([&, r] {
      auto pg = world->group(r);
      try {
        fn(*pg);
        world->leave(r, "its program returned");
      } catch (const std::exception& e) {
        errors[r] = std::current_exception();
        world->abort(r, e.what());
      } catch (...) {
        errors[r] = std::current_exception();
        world->abort(r, "unknown exception");
      }
    });
  }
  for (auto& t : threads) t.join();
  return errors;
}

}  // namespace tinyddp::dist
