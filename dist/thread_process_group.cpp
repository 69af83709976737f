#include "dist/thread_process_group.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <sstream>
#include <thread>

#if defined(__linux__)
#include <sched.h>
#endif

#include "dist/combine.h"
#include "dist/comm_trace.h"
#include "engine/core/promotion.h"

namespace tinyddp::dist {

namespace {

std::string describe(const Tensor& t) {
  std::ostringstream os;
  os << dtype_name(t.dtype()) << "[" << t.numel() << "]";
  return os.str();
}

// Note [The thread backend's allreduce]
// The ring allreduce as nccl-tests' docs describe it (doc/PERFORMANCE.md, "Bus bandwidth"): n ranks, every
// buffer of S bytes cut into n chunks.
//   reduce-scatter, n-1 steps: at step s, rank r sends chunk (r - s) mod n to rank r+1, which adds it to its
//                  own copy of that chunk; after the last step rank r holds chunk (r+1) mod n summed over all.
//   allgather,     n-1 steps: rank r sends the last summed chunk it holds to rank r+1, which stores it; after
//                  the last step every rank holds every summed chunk.
// Each phase moves (n-1)/n * S bytes in and out of every rank: 2(n-1)/n * S per rank whatever n, all ranks at
// once. The naive reduction (one rank reads all n buffers and writes all n, the others wait) puts 2n * S on one
// rank. bench_allreduce's busbw = algbw * 2(n-1)/n is that factor; bench_allreduce keeps the naive version.
//
// Threads share memory, so a chunk need not travel the ring hop by hop: its owner reads it from every buffer.
// Rank k owns chunk k and, piece by piece:
//   reduce-scatter: sums chunk k of buffers 0, 1, ..., n-1, left to right, into buffer 0's chunk k (in place);
//   allgather:      copies that sum into chunk k of every other buffer (at once, while the piece is in cache).
// The bytes per rank are the ring's, 2(n-1)/n * S from peers' buffers, in one pass with no scratch buffer and no
// handoff between steps.
// Deterministic: element i is b0[i] + b1[i] + ... + b(n-1)[i] in that order whoever computes it, the expression
// the naive reduction used, so results are bitwise what they were for every n (a real ring starts chunk k's sum
// at rank k+1, which changes the rounding for n >= 3). The chunk boundaries (below) decide who works, never the
// bits.
// Who works: every rank that waits on or polls its Work reduces pieces, its own chunk first; a waiting rank then
// takes the pieces nobody claimed, so a rank that is late, never waits, threw or left after arriving holds no one.
// Whoever reduces the last piece completes the collective for every rank.

// A chunk is ceil(count / n) elements rounded up to a multiple of 16 (64 bytes of f32, one cache line), so two
// owners never write one line; with count < 16 n the first ranks own everything and the others own nothing.
constexpr int64_t kChunkAlign = 16;
// Pieces: the unit a rank claims. 256 KiB: small enough that a late rank's chunk is shared out between waiters,
// large enough that claiming (one atomic add) costs nothing next to the reduction.
constexpr int64_t kPieceBytes = 256 << 10;
// Within a piece, 8 KiB blocks: the block of buffer 0 that accumulates stays in L1 while every peer's block is
// added into it and then copied out.
constexpr int64_t kBlockBytes = 8 << 10;

// Note [Spinning before sleeping]
// A condition variable's wake-up is a futex call on each side and a trip through the scheduler: about 30 us on
// these VMs, more than the whole allreduce of 256 KiB (bench_allreduce: 16 KiB took 32 us, 1 MiB 88 us of which
// the copies are 27). So when every rank has a hardware thread of its own, a waiter first polls the slot's
// atomic flags for up to kSpinBudget, as NCCL's proxy polls its network, and only then blocks on cv_. With more
// ranks than hardware threads (usable_cpus) a spinning waiter would take the core from the very rank it waits
// for, so it blocks at once. Spinning decides only how a waiter learns the news: every predicate is checked
// again under mu_ afterwards, so errors, aborts, timeouts and the order of completion are what they were. mu_
// itself is taken the same way (lock_world): its holders hold it for microseconds, and a waiter that sleeps on
// a held futex pays the same wake-up (perf showed __lll_lock_wait and try_to_wake_up at 23% of a 16 KiB
// allreduce).
constexpr auto kSpinBudget = std::chrono::microseconds(50);

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#else
  std::this_thread::yield();
#endif
}

// The hardware threads this process may run on: its affinity mask (taskset, cgroup cpusets), which the rank
// threads share, else every online CPU.
unsigned usable_cpus() {
#if defined(__linux__)
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return static_cast<unsigned>(CPU_COUNT(&set));
#endif
  return std::thread::hardware_concurrency();
}

// Polls `done` until it holds or the budget is spent; says whether it held.
template <typename Done>
bool spin_until(bool may_spin, const Done& done) {
  if (!may_spin) return done();
  const auto deadline = std::chrono::steady_clock::now() + kSpinBudget;
  for (unsigned i = 1;; ++i) {
    if (done()) return true;
    if (i % 64 == 0 && std::chrono::steady_clock::now() > deadline) return false;   // a clock read is ~20 ns
    cpu_relax();
  }
}

int64_t round_up(int64_t x, int64_t multiple) { return (x + multiple - 1) / multiple * multiple; }

template <typename T>
void reduce_piece(const std::vector<void*>& data, int64_t begin, int64_t end, ReduceOp op) {
  const size_t n = data.size();
  T* acc = static_cast<T*>(data[0]);
  constexpr int64_t block = kBlockBytes / sizeof(T);
  for (int64_t b = begin; b < end; b += block) {
    const int64_t e = std::min(end, b + block);
    for (size_t r = 1; r < n; ++r)   // rank order (Note [The thread backend's allreduce])
      combine_into(acc + b, static_cast<const T*>(data[r]) + b, e - b, op);
    for (size_t r = 1; r < n; ++r) std::memcpy(static_cast<T*>(data[r]) + b, acc + b, (e - b) * sizeof(T));
  }
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

// 1.13's CollectiveFingerPrint as its ProcessGroupWrapper prints it: the op, the first tensor's shape and dtype,
// and (its printing's quirk) the tensor options where the device types would be.
std::string ThreadWorld::Arrival::fingerprint() const {
  std::string op = kind;
  for (char& c : op) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  const Tensor& t = input.defined() ? input : tensors.empty() ? Tensor() : tensors.front();
  std::ostringstream os;
  os << "CollectiveFingerPrint(OpType=" << op << ", TensorShape=[";
  if (t.defined())
    for (int64_t d = 0; d < t.dim(); ++d) os << (d ? ", " : "") << t.shape()[d];
  os << "], TensorDtypes=";
  if (t.defined()) os << scalar_type_name(t.dtype());
  os << ", TensorDeviceTypes=TensorOptions(dtype=float (default), device=cpu, layout=Strided (default), "
        "requires_grad=false (default), pinned_memory=false (default), memory_format=(nullopt)))";
  return os.str();
}

// The fields collective_signature prints (keep the two in step), compared directly: formatting both texts
// under the world lock at every arrival was about a quarter of a 4 KiB allreduce (2 ranks: 11.4-12.7 us,
// 8.3-9.8 without). A mismatch still reports the two texts.
bool ThreadWorld::Arrival::same_signature(const Arrival& other) const {
  const auto same_tensor = [](const Tensor& a, const Tensor& b) {
    return a.defined() == b.defined() && (!a.defined() || (a.dtype() == b.dtype() && a.numel() == b.numel()));
  };
  if (kind != other.kind || tensors.size() != other.tensors.size() || !same_tensor(input, other.input)) return false;
  for (size_t i = 0; i < tensors.size(); ++i)
    if (!same_tensor(tensors[i], other.tensors[i])) return false;
  if (kind == "broadcast" && root != other.root) return false;
  if (kind == "allreduce" && op != other.op) return false;
  return true;
}

class ThreadWork : public Work {
 public:
  ThreadWork(std::shared_ptr<ThreadWorld> world, std::shared_ptr<ThreadWorld::Slot> slot, uint64_t seq, int rank,
             std::string what)
      : world_(std::move(world)), slot_(std::move(slot)), seq_(seq), rank_(rank), what_(std::move(what)) {}

  // The mismatch as this rank reports it: tinyddp's text, or 1.13's DETAIL one from this rank's side.
  std::string mismatch_text(const ThreadWorld::Slot& slot) const {
    const auto& mine = slot.arrivals[rank_];
    if (!mine || !mine->detail) return slot.error;
    const int other = rank_ == slot.mismatch_second ? slot.mismatch_first : slot.mismatch_second;
    return "Detected mismatch between collectives on ranks. Rank " + std::to_string(rank_) +
           " is running collective: " + mine->fingerprint() + ", but Rank " + std::to_string(other) +
           " is running collective: " + slot.arrivals[other]->fingerprint() + ".";
  }

  void wait() override {
    if (completed_) return;
    ThreadWorld& w = *world_;
    Slot& slot = *slot_;
    spin_until(w.spin_, [&] { return slot.done.load() || slot.ready.load(); });   // Note [Spinning before sleeping]
    std::unique_lock<std::mutex> lock = w.lock_world();
    // A rank that left this collective is reported before an abort: it is this rank's own cause, whereas
    // an abort may be another waiter failing for that same leave, first by thread timing. An allreduce every
    // rank reached completes whatever happens to them afterwards (its buffers live in the slot).
    std::string left;
    w.cv_.wait_for(lock, w.timeout_, [&] {
      if (slot.done || slot.ready || !slot.error.empty()) return true;
      left = w.left_error(seq_, rank_, what_);
      return !left.empty() || !w.abort_reason_.empty();
    });
    if (!slot.error.empty()) throw Error(mismatch_text(slot));
    if (!slot.done && !slot.ready) {
      if (!left.empty()) throw PeerLeftError(left);
      if (!w.abort_reason_.empty())
        throw Error("[Rank " + std::to_string(rank_) + "] " + what_ + " (collective #" + std::to_string(seq_) +
                    ") cannot complete: " + w.abort_reason_);
      std::ostringstream missing;
      for (int r = 0; r < w.size_; ++r)
        if (!slot.arrivals[r]) missing << (missing.tellp() ? ", " : "") << r;
      throw CollectiveFailedError(collective_timeout_message(rank_, what_, seq_, w.timeout_, missing.str()));
    }
    w.finish_through(seq_, rank_, lock);
    completed_ = true;
  }

  bool is_completed() override {
    if (completed_) return true;
    // A poll must not wait: it reduces this rank's own pieces of its allreduces that every rank reached (up to
    // this one: a rank's collectives complete in order), and answers whether all of them are done.
    if (!slot_->done && !slot_->ready) return false;
    std::vector<std::shared_ptr<Slot>> mine;
    {
      std::unique_lock<std::mutex> lock(world_->mu_, std::try_to_lock);
      if (!lock.owns_lock()) return false;
      for (auto& [seq, slot] : world_->running_) {
        if (seq > seq_) break;
        mine.push_back(slot);
      }
    }
    for (auto& slot : mine) world_->reduce_pieces(*slot, rank_, /*own_only=*/true);
    for (auto& slot : mine)
      if (!slot->done) return false;
    // Sticky: a later poll may find mu_ held and could not check the earlier collectives again, yet it must
    // not take back a completion it reported.
    completed_ = slot_->done;
    return completed_;
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

// A recv: done once it took its message (at wait or at a poll that finds one).
class ThreadRecvWork : public Work {
 public:
  ThreadRecvWork(std::shared_ptr<ThreadWorld> world, int rank, int src, int tag, Tensor tensor)
      : world_(std::move(world)), rank_(rank), src_(src), tag_(tag), tensor_(std::move(tensor)) {}

  void wait() override {
    if (source_ >= 0) return;
    ThreadWorld& w = *world_;
    std::unique_lock<std::mutex> lock = w.lock_world();
    std::string left;
    bool taken = false;
    w.cv_.wait_for(lock, w.timeout_, [&] {
      if ((taken = take(lock))) return true;
      left = left_error();
      return !left.empty() || !w.abort_reason_.empty();
    });
    if (taken) return;
    const std::string what = "[Rank " + std::to_string(rank_) + "] recv from " + from() + " (tag " +
                             std::to_string(tag_) + ")";
    if (!left.empty()) throw PeerLeftError(what + " can never complete: " + left);
    if (!w.abort_reason_.empty()) throw Error(what + " cannot complete: " + w.abort_reason_);
    throw CollectiveFailedError(what + " timed out after " + std::to_string(w.timeout_.count()) +
                                " ms: no message arrived. The sender may have died, hung, or sent with another tag.");
  }

  bool is_completed() override {
    if (source_ >= 0) return true;
    std::unique_lock<std::mutex> lock(world_->mu_, std::try_to_lock);
    return lock.owns_lock() && take(lock);
  }

  int source_rank() override { return source_; }

 private:
  std::string from() const { return src_ < 0 ? std::string("any rank") : "rank " + std::to_string(src_); }

  // With mu_ held: takes the first matching message into tensor_, if there is one.
  bool take(std::unique_lock<std::mutex>&) {
    std::deque<ThreadWorld::Message>& box = world_->mailboxes_[rank_];
    for (auto it = box.begin(); it != box.end(); ++it) {
      if (it->tag != tag_ || (src_ >= 0 && it->src != src_)) continue;
      const Tensor& data = it->data;
      // The message stays queued on a mismatch, as a receive of the wrong size cannot consume it.
      TINYDDP_CHECK(data.numel() == tensor_.numel() && data.dtype() == tensor_.dtype(), "[Rank ", rank_,
                    "] recv from rank ", it->src, " (tag ", tag_, "): the message is ", describe(data),
                    " but the receiving tensor is ", describe(tensor_), "; send and recv need the same numel and dtype.");
      std::memcpy(tensor_.raw_data(), data.raw_data(), data.numel() * element_size(data.dtype()));
      source_ = it->src;
      box.erase(it);
      return true;
    }
    return false;
  }

  // With mu_ held: why no message can come any more, or "".
  std::string left_error() const {
    const ThreadWorld& w = *world_;
    if (src_ >= 0)
      return w.left_[src_] ? "rank " + std::to_string(src_) + " left the process group (" + w.left_[src_]->why + ")"
                           : "";
    for (int r = 0; r < w.size_; ++r)
      if (r != rank_ && !w.left_[r]) return "";
    return "every other rank left the process group";
  }

  std::shared_ptr<ThreadWorld> world_;
  int rank_, src_, tag_;
  Tensor tensor_;
  int source_ = -1;   // set once the message was taken
};

std::shared_ptr<Work> ThreadWorld::send(int src, int dst, int tag, const Tensor& tensor) {
  Tensor copy = tensor.clone();
  {
    const std::unique_lock<std::mutex> lock = lock_world();
    TINYDDP_CHECK(!left_[src], "thread process group: rank ", src, " called send after it left the process group.");
    mailboxes_[dst].push_back({src, tag, std::move(copy)});
  }
  cv_.notify_all();
  return std::make_shared<CompletedWork>();
}

std::shared_ptr<Work> ThreadWorld::recv(int dst, int src, int tag, Tensor tensor) {
  return std::make_shared<ThreadRecvWork>(shared_from_this(), dst, src, tag, std::move(tensor));
}

namespace {

// "send: dst", "recv: src": a peer must be another rank of the group.
void check_peer(const char* call, const char* name, int peer, int rank, int size, bool any_allowed) {
  if (any_allowed && peer == -1) return;
  TINYDDP_CHECK(peer >= 0 && peer < size, call, ": ", name, " ", peer, " is not a rank of a group of size ", size, ".");
  TINYDDP_CHECK(peer != rank, call, ": ", name, " ", peer, " is this rank; a rank cannot ", call,
                " to itself (copy the tensor instead).");
}

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
    return world_->arrive(rank_, {"allreduce", std::move(tensors), {}, op, 0, detail_fingerprints()});
  }
  std::shared_ptr<Work> broadcast(std::vector<Tensor> tensors, int root) override {
    check_collective_tensors(tensors, "broadcast");
    check_host_tensors(tensors, "broadcast", "thread");
    TINYDDP_CHECK(root >= 0 && root < size(), "broadcast: root ", root, " is not a rank of a group of size ", size(), ".");
    return world_->arrive(rank_, {"broadcast", std::move(tensors), {}, ReduceOp::sum, root, detail_fingerprints()});
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
    return world_->arrive(rank_, {"allgather", std::move(outputs), std::move(input), ReduceOp::sum, 0,
                                  detail_fingerprints()});
  }
  std::shared_ptr<Work> barrier() override {
    return world_->arrive(rank_, {"barrier", {}, {}, ReduceOp::sum, 0, detail_fingerprints()});
  }
  std::shared_ptr<ProcessGroup> subgroup(const std::vector<int>& ranks) override {
    return world_->subgroup(rank_, ranks);
  }
  std::shared_ptr<Work> send(Tensor tensor, int dst, int tag) override {
    check_collective_tensors({tensor}, "send");
    check_host_tensors({tensor}, "send", "thread");
    check_peer("send", "dst", dst, rank_, size(), false);
    return world_->send(rank_, dst, tag, tensor);
  }
  std::shared_ptr<Work> recv(Tensor tensor, int src, int tag) override {
    check_collective_tensors({tensor}, "recv");
    check_host_tensors({tensor}, "recv", "thread");
    check_peer("recv", "src", src, rank_, size(), true);
    return world_->recv(rank_, src, tag, std::move(tensor));
  }

 private:
  std::shared_ptr<ThreadWorld> world_;
  int rank_;
};

}  // namespace

ThreadWorld::ThreadWorld(int size, std::chrono::milliseconds timeout)
    : size_(size), timeout_(timeout),
      spin_(static_cast<unsigned>(std::max(size, 0)) <= usable_cpus()),
      next_seq_(static_cast<size_t>(std::max(size, 0)), 0),
      left_(static_cast<size_t>(std::max(size, 0))),
      mailboxes_(static_cast<size_t>(std::max(size, 0))),
      next_subgroup_(static_cast<size_t>(std::max(size, 0)), 0) {
  TINYDDP_CHECK(size >= 1, "ThreadWorld: the number of ranks must be at least 1, got ", size, ".");
}

std::shared_ptr<ProcessGroup> ThreadWorld::group(int rank) {
  TINYDDP_CHECK(rank >= 0 && rank < size_, "ThreadWorld: rank ", rank, " is out of range for ", size_, " ranks.");
  return std::make_shared<ThreadProcessGroup>(shared_from_this(), rank, timeout_);
}

std::unique_lock<std::mutex> ThreadWorld::lock_world() {
  std::unique_lock<std::mutex> lock(mu_, std::defer_lock);
  if (!spin_until(spin_, [&] { return lock.try_lock(); })) lock.lock();   // Note [Spinning before sleeping]
  return lock;
}

void ThreadWorld::leave(int rank, const std::string& why) {
  TINYDDP_CHECK(rank >= 0 && rank < size_, "ThreadWorld::leave: rank ", rank, " is out of range for ", size_, " ranks.");
  std::vector<std::pair<std::shared_ptr<ThreadWorld>, int>> subs;   // left outside mu_: each has its own
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!left_[rank]) left_[rank] = Left{next_seq_[rank], why};
    for (auto& [n, sub] : subworlds_)
      for (size_t i = 0; i < sub.ranks.size(); ++i)
        if (sub.ranks[i] == rank) subs.emplace_back(sub.world, static_cast<int>(i));
  }
  cv_.notify_all();
  for (auto& [world, index] : subs) world->leave(index, why);
}

std::shared_ptr<ProcessGroup> ThreadWorld::subgroup(int rank, const std::vector<int>& ranks) {
  std::vector<bool> seen(size_, false);
  for (int r : ranks) {
    TINYDDP_CHECK(r >= 0 && r < size_, "new_group: rank ", r, " is not a rank of a group of size ", size_, ".");
    TINYDDP_CHECK(!seen[r], "new_group: rank ", r, " is listed twice; list each rank of the new group once.");
    seen[r] = true;
  }
  TINYDDP_CHECK(!ranks.empty(), "new_group: the list of ranks is empty; a group needs at least one rank.");
  std::shared_ptr<ThreadWorld> world;
  std::vector<std::pair<int, std::string>> pending_leaves;
  std::string abort_reason;
  {
    const std::unique_lock<std::mutex> lock = lock_world();
    const uint64_t n = next_subgroup_[rank]++;
    auto [it, created] = subworlds_.try_emplace(n);
    if (created) it->second = Subworld{ranks, std::make_shared<ThreadWorld>(static_cast<int>(ranks.size()), timeout_)};
    const auto show = [](const std::vector<int>& v) {
      std::string out;
      for (int r : v) out += (out.empty() ? "" : ", ") + std::to_string(r);
      return "[" + out + "]";
    };
    TINYDDP_CHECK(it->second.ranks == ranks, "new_group: rank ", rank, " created subgroup #", n, " of ranks ",
                  show(ranks), " but another rank created it of ranks ", show(it->second.ranks),
                  ". Every rank must call new_group with the same ranks, in the same order.");
    world = it->second.world;
    // Members that already left or failed here never join the subgroup's collectives either.
    for (size_t i = 0; i < ranks.size(); ++i)
      if (left_[ranks[i]]) pending_leaves.emplace_back(static_cast<int>(i), left_[ranks[i]]->why);
    abort_reason = abort_reason_;
  }
  for (auto& [index, why] : pending_leaves) world->leave(index, why);
  if (!abort_reason.empty()) world->abort(rank, abort_reason);
  const auto at = std::find(ranks.begin(), ranks.end(), rank);
  if (at == ranks.end()) return nullptr;
  return world->group(static_cast<int>(at - ranks.begin()));
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
  std::vector<std::shared_ptr<ThreadWorld>> subs;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (abort_reason_.empty()) abort_reason_ = "rank " + std::to_string(rank) + " failed: " + reason;
    for (auto& [n, sub] : subworlds_) subs.push_back(sub.world);
  }
  cv_.notify_all();
  for (auto& world : subs) world->abort(rank, reason);   // `rank` is this world's: the message names it so
}

std::shared_ptr<Work> ThreadWorld::arrive(int rank, Arrival arrival) {
  const std::string what = arrival.kind;
  uint64_t seq;
  std::shared_ptr<Slot> slot_ptr;
  {
    const std::unique_lock<std::mutex> lock = lock_world();
    TINYDDP_CHECK(!left_[rank], "thread process group: rank ", rank, " called ", arrival.kind,
                  " after it left the process group (", left_[rank] ? left_[rank]->why : "", "). A rank leaves "
                  "when its program has ended; issue every collective before leave().");
    seq = next_seq_[rank]++;
    if (trace::on()) trace::comm_begin(rank, this, seq, arrival.kind.c_str(), arrival_bytes(arrival));
    auto& entry = slots_[seq];
    if (!entry) {
      entry = std::make_shared<Slot>(size_);
      entry->seq = seq;
    }
    slot_ptr = entry;
    Slot& slot = *entry;
    // All ranks must agree on what this collective is; the first arrival sets the expectation.
    for (int r = 0; r < size_ && slot.error.empty(); ++r) {
      if (!slot.arrivals[r] || arrival.same_signature(*slot.arrivals[r])) continue;
      slot.error = collective_mismatch_message(seq, r, slot.arrivals[r]->signature(), rank, arrival.signature());
      slot.mismatch_first = r;
      slot.mismatch_second = rank;
    }
    slot.arrivals[rank] = std::move(arrival);
    if (++slot.arrived == size_) {
      if (slot.error.empty()) {
        if (slot.arrivals[0]->kind == "allreduce")
          prepare_allreduce(slot);
        else
          perform(slot);
      }
      slots_.erase(seq);
    }
  }
  cv_.notify_all();
  return std::make_shared<ThreadWork>(shared_from_this(), std::move(slot_ptr), seq, rank, what);
}

void ThreadWorld::prepare_allreduce(Slot& slot) {
  const Arrival& first = *slot.arrivals[0];
  slot.op = first.op;
  slot.pieces.assign(size_, {});
  size_t total = 0;
  for (size_t i = 0; i < first.tensors.size(); ++i) {
    const Tensor& t = first.tensors[i];
    slot.dtypes.push_back(t.dtype());
    slot.data.emplace_back();
    for (int r = 0; r < size_; ++r) slot.data.back().push_back(slot.arrivals[r]->tensors[i].raw_data());
    if (size_ == 1) continue;   // one rank: its buffer already holds the sum
    const int64_t count = t.numel();
    const int64_t chunk = round_up((count + size_ - 1) / size_, kChunkAlign);
    const int64_t piece = std::max<int64_t>(1, kPieceBytes / static_cast<int64_t>(element_size(t.dtype())));
    for (int owner = 0; owner < size_; ++owner)
      for (int64_t b = owner * chunk, e = std::min(count, b + chunk); b < e; b += piece) {
        slot.pieces[owner].push_back({i, b, std::min(e, b + piece)});
        ++total;
      }
  }
  slot.claimed = std::make_unique<std::atomic<size_t>[]>(size_);
  slot.pieces_left = total;
  slot.ready = true;
  if (total == 0) {
    complete(slot);
    return;
  }
  running_[slot.seq] = slots_.at(slot.seq);
}

void ThreadWorld::reduce_pieces(Slot& slot, int rank, bool own_only) {
  if (slot.done) return;
  for (int step = 0; step < (own_only ? 1 : size_); ++step) {
    const int owner = (rank + step) % size_;
    const std::vector<Piece>& pieces = slot.pieces[owner];
    for (size_t k; (k = slot.claimed[owner].fetch_add(1)) < pieces.size();) {
      const Piece& p = pieces[k];
      dispatch_numeric(slot.dtypes[p.tensor], "allreduce", [&]<typename T>() {   // bool was refused at the call
        reduce_piece<T>(slot.data[p.tensor], p.begin, p.end, slot.op);
      });
      if (slot.pieces_left.fetch_sub(1) == 1) {
        {
          const std::unique_lock<std::mutex> lock = lock_world();
          complete(slot);
        }
        cv_.notify_all();
        return;
      }
    }
  }
}

void ThreadWorld::complete(Slot& slot) {
  slot.done = true;
  if (trace::on())   // whoever completes it completes it for every rank
    for (int r = 0; r < size_; ++r) trace::comm_end(r, this, slot.seq);
  running_.erase(slot.seq);
  // Drop the tensors now: a finished slot keeps only its status for the waiters.
  slot.arrivals.assign(size_, std::nullopt);
  slot.data.clear();
}

void ThreadWorld::finish_through(uint64_t seq, int rank, std::unique_lock<std::mutex>& lock) {
  while (!running_.empty() && running_.begin()->first <= seq) {
    std::shared_ptr<Slot> slot = running_.begin()->second;
    lock.unlock();
    reduce_pieces(*slot, rank, /*own_only=*/false);
    spin_until(spin_, [&] { return slot->done.load(); });
    lock = lock_world();
    // Every piece is claimed now; the ranks still reducing one finish it in bounded time.
    cv_.wait(lock, [&] { return slot->done.load(); });
  }
}

void ThreadWorld::perform(Slot& slot) {
  const Arrival& first = *slot.arrivals[0];
  if (first.kind == "broadcast") {
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
  complete(slot);
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
