#include "dist/shared_memory_allreduce.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <map>
#include <mutex>

#include "dist/combine.h"

namespace tinyddp::dist {

// Note [The mpi backend's shared-memory allreduce]
// Open MPI reduces between the ranks of one machine through its shared-memory transport: each message copied
// into a FIFO and out again, steps of libnbc's schedule run only inside MPI calls. Between 2 ranks here an
// allreduce of 1 / 4 MiB took 190-200 / 700-780 us against the thread backend's 31-36 / 163-188 us, and
// bench_ddp's step paid about 1 ms more under MPI than on threads. So when every rank runs on one machine, the
// mpi backend maps one segment per rank into every rank (MPI_Win_allocate_shared) and reduces through them as
// the thread backend reduces through its ranks' buffers (Note [The thread backend's allreduce]). A segment holds
// an arrival counter, two staging slots and an arena. Rank r owns chunk r of every buffer.
//   In place (every rank's buffer is the arena block at the same offset: the reducer's buckets, which come
//   from allocate()): arrive (the buffer is final); once every rank arrived, sum chunk r of every rank's
//   buffer and write the sum into chunk r of every rank's buffer; arrive; done once every rank did. No copies:
//   the thread backend's bytes.
//   Copied (anything else), round by round through slot s of each segment:
//     copy in:  rank r copies the chunks the others own into its slot, then arrives;
//     reduce:   once every rank arrived, rank r sums chunk r, its own part straight from its tensor, into
//               both its tensor and its slot, then arrives;
//     copy out: once every rank arrived, rank r copies chunk k of rank k's slot into its tensor, k != r.
//   That is a copy in and out of (n-1)/n of the buffer more than in place: the price of separate address
//   spaces for memory the ranks did not allocate in their segments.
// Either way element i is b0[i] + b1[i] + ... + b(n-1)[i], left to right from rank 0's: the thread backend's
// expression, so both backends give the same bits.
// Arrivals: each segment starts with its rank's count of arrivals (a release store); a step waits until every
// count reached this rank's own (acquire loads). Ranks run the same steps in the same order, so equal counts
// mean the same step, and what a rank wrote before arriving is visible to whoever saw its count.
// Slots alternate by round. Rank r writes slot s again two copied rounds later, after the next round's first
// arrival of every rank, which each makes only after its copy out of this round: no one still reads it.
// Within a round rank r's slot is written by rank r alone: the others' chunks before its first arrival, which
// rank k reads (chunk k) before its second, and the sum in chunk r before its second, which the others read
// after it. In place, rank r alone writes chunk r of every buffer, between the two arrivals.
// Who moves the data: each rank its own steps, when it polls its Work (the reducer polls from its hooks) or
// waits on it; a poll moves on until a step must wait for a peer, so a bucket's allreduce proceeds during the
// backward as far as the peers allow. Allreduces complete in the order they started.

namespace {

// The first 4 KiB of a segment: its rank's arrival counter (alone on its page, away from the slots' lines).
constexpr int64_t kControlBytes = 4096;
// As the thread backend: a chunk is ceil(m / n) elements rounded up to 16 (a cache line of f32), so two owners
// never write one line.
constexpr int64_t kChunkAlign = 16;
// The running result of a block stays in L1 while every rank's block is added into it.
constexpr int64_t kBlockBytes = 8 << 10;

int64_t round_up(int64_t x, int64_t multiple) { return (x + multiple - 1) / multiple * multiple; }

std::atomic_ref<uint64_t> counter(std::byte* segment) {
  return std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(segment));
}

// Copies bytes [begin, begin + len) of the tensors' concatenation into `flat` (or out of it: `into_tensors`).
void copy_span(const std::vector<Tensor>& tensors, int64_t begin, int64_t len, std::byte* flat, bool into_tensors) {
  int64_t offset = 0;   // of the current tensor in the concatenation
  for (const Tensor& t : tensors) {
    const int64_t bytes = t.numel() * static_cast<int64_t>(element_size(t.dtype()));
    const int64_t from = std::max(begin, offset), to = std::min(begin + len, offset + bytes);
    if (from < to) {
      std::byte* mine = static_cast<std::byte*>(t.raw_data()) + (from - offset);
      std::byte* shared = flat + (from - begin);
      if (into_tensors)
        std::memcpy(mine, shared, to - from);
      else
        std::memcpy(shared, mine, to - from);
    }
    offset += bytes;
    if (offset >= begin + len) break;
  }
}

// Where bytes [begin, begin + len) of the tensors' concatenation lie when one tensor holds them all; null when
// they straddle two.
std::byte* single_span(const std::vector<Tensor>& tensors, int64_t begin, int64_t len) {
  int64_t offset = 0;
  for (const Tensor& t : tensors) {
    const int64_t bytes = t.numel() * static_cast<int64_t>(element_size(t.dtype()));
    if (begin >= offset && begin + len <= offset + bytes) return static_cast<std::byte*>(t.raw_data()) + (begin - offset);
    offset += bytes;
    if (offset > begin) return nullptr;
  }
  return nullptr;
}

// out[i] = in[0][i] op in[1][i] op ... op in[n-1][i], left to right, for every `out` in `outs`; the outputs may
// be the inputs.
template <typename T>
void reduce_rank_order(const std::vector<const T*>& in, const std::vector<T*>& outs, int64_t count, ReduceOp op) {
  constexpr int64_t block = kBlockBytes / sizeof(T);
  T acc[block];
  for (int64_t b = 0; b < count; b += block) {
    const int64_t e = std::min(block, count - b);
    std::memcpy(acc, in[0] + b, e * sizeof(T));
    for (size_t r = 1; r < in.size(); ++r) combine_into(acc, in[r] + b, e, op);
    for (T* out : outs) std::memcpy(out + b, acc, e * sizeof(T));
  }
}

}  // namespace

// First fit over the arena's bytes. Locked: a buffer may be freed from any thread.
struct SharedMemoryAllreduce::Arena {
  explicit Arena(int64_t bytes) { free[0] = bytes; }
  // The offset of `bytes` taken from the lowest free block that holds them; -1 when none does.
  int64_t take(int64_t bytes) {
    std::lock_guard<std::mutex> lock(mu);
    for (auto it = free.begin(); it != free.end(); ++it) {
      if (it->second < bytes) continue;
      const int64_t offset = it->first, left = it->second - bytes;
      free.erase(it);
      if (left > 0) free[offset + bytes] = left;
      return offset;
    }
    return -1;
  }
  void give(int64_t offset, int64_t bytes) {
    std::lock_guard<std::mutex> lock(mu);
    auto it = free.emplace(offset, bytes).first;
    if (auto next = std::next(it); next != free.end() && it->first + it->second == next->first) {
      it->second += next->second;
      free.erase(next);
    }
    if (it != free.begin())
      if (auto prev = std::prev(it); prev->first + prev->second == it->first) {
        prev->second += it->second;
        free.erase(it);
      }
  }
  std::mutex mu;
  std::map<int64_t, int64_t> free;   // offset -> bytes, no two adjacent
};

struct SharedMemoryAllreduce::Op {
  std::vector<Tensor> tensors;
  ReduceOp reduce;
  DType dtype;
  int64_t count = 0;   // elements over all tensors
  uint64_t seq = 0;
  Ready ready;
  bool verified = false;   // ready() said yes
  bool in_place = false;   // every rank's tensor is its arena's buffer at `offset` (set with `verified`)
  int64_t offset = -1;
  int64_t round = 0, rounds = 1;
  enum class Step { copy_in, reduce, copy_out } step = Step::copy_in;   // the next step of `round`
  bool done = false;
};

int64_t SharedMemoryAllreduce::segment_bytes(int64_t slot_bytes, int64_t arena_bytes) {
  return kControlBytes + 2 * slot_bytes + arena_bytes;
}

SharedMemoryAllreduce::SharedMemoryAllreduce(int rank, std::vector<std::byte*> segments, int64_t slot_bytes,
                                             int64_t arena_bytes)
    : rank_(rank), segments_(std::move(segments)), slot_bytes_(slot_bytes), arena_bytes_(arena_bytes),
      arena_(std::make_shared<Arena>(arena_bytes)) {
  TINYDDP_INTERNAL_ASSERT(rank_ >= 0 && rank_ < size(), "SharedMemoryAllreduce: rank ", rank_, " of ", size());
  TINYDDP_INTERNAL_ASSERT(slot_bytes_ > 0 && slot_bytes_ % 64 == 0 && arena_bytes_ >= 0 && arena_bytes_ % 64 == 0,
                          "SharedMemoryAllreduce: slots of ", slot_bytes_, " bytes and an arena of ", arena_bytes_,
                          " are not multiples of 64");
  arrivals_ = counter(segments_[rank_]).load(std::memory_order_relaxed);   // 0: the caller zeroed it
}

std::byte* SharedMemoryAllreduce::slot(int r, uint64_t round) const {
  return segments_[r] + kControlBytes + static_cast<int64_t>(round % 2) * slot_bytes_;
}

std::byte* SharedMemoryAllreduce::arena(int r) const { return segments_[r] + kControlBytes + 2 * slot_bytes_; }

Tensor SharedMemoryAllreduce::allocate(int64_t numel, DType dtype) {
  const int64_t bytes = numel * static_cast<int64_t>(element_size(dtype));
  const int64_t reserved = round_up(std::max<int64_t>(bytes, 1), 64);
  const int64_t offset = arena_->take(reserved);
  if (offset < 0) return Tensor();
  std::byte* data = arena(rank_) + offset;
  std::memset(data, 0, bytes);
  return from_external(data, {numel}, dtype, Device::cpu(),
                       [arena = arena_, offset, reserved](void*) { arena->give(offset, reserved); });
}

int64_t SharedMemoryAllreduce::arena_offset(const std::vector<Tensor>& tensors) const {
  if (tensors.size() != 1 || !tensors[0].is_contiguous() || !tensors[0].device().is_cpu()) return -1;
  const auto* data = static_cast<const std::byte*>(tensors[0].raw_data());
  const int64_t bytes = tensors[0].numel() * static_cast<int64_t>(element_size(tensors[0].dtype()));
  const std::byte* begin = arena(rank_);
  if (data < begin || data + bytes > begin + arena_bytes_) return -1;
  return data - begin;
}

void SharedMemoryAllreduce::arrive() { counter(segments_[rank_]).store(++arrivals_, std::memory_order_release); }

bool SharedMemoryAllreduce::all_arrived() const {
  for (std::byte* s : segments_)
    if (counter(s).load(std::memory_order_acquire) < arrivals_) return false;
  return true;
}

void SharedMemoryAllreduce::wait_all(const Op& op, Clock::time_point deadline, const Pause& pause) const {
  while (!all_arrived()) {
    if (Clock::now() > deadline) {
      std::string missing;
      for (int r = 0; r < size(); ++r)
        if (counter(segments_[r]).load(std::memory_order_acquire) < arrivals_)
          missing += (missing.empty() ? "" : ", ") + std::to_string(r);
      throw PeersMissing(op.seq, missing);
    }
    pause();
  }
}

std::shared_ptr<SharedMemoryAllreduce::Op> SharedMemoryAllreduce::start(std::vector<Tensor> tensors, ReduceOp reduce,
                                                                         uint64_t seq, Ready ready) {
  auto op = std::make_shared<Op>();
  op->dtype = tensors.empty() ? DType::f32 : tensors[0].dtype();
  for (const Tensor& t : tensors) op->count += t.numel();
  const int64_t per_slot = slot_bytes_ / static_cast<int64_t>(element_size(op->dtype));
  op->rounds = std::max<int64_t>(1, (op->count + per_slot - 1) / per_slot);
  op->tensors = std::move(tensors);
  op->reduce = reduce;
  op->seq = seq;
  op->ready = std::move(ready);
  queue_.push_back(op);
  return op;
}

bool SharedMemoryAllreduce::advance(Op& op, bool block, Clock::time_point deadline, const Pause& pause) {
  if (!op.verified) {
    bool in_place = false;
    if (!op.ready(block, deadline, &in_place)) return false;
    op.verified = true;
    op.in_place = in_place;
    if (in_place) {
      op.offset = arena_offset(op.tensors);
      TINYDDP_INTERNAL_ASSERT(op.offset >= 0, "SharedMemoryAllreduce: in place, but the tensor is not in the arena");
      op.rounds = 1;
    }
  }
  const int n = size();
  // A step that needs every rank's previous arrival: false when it must wait and may not.
  auto peers_there = [&] {
    if (all_arrived()) return true;
    if (!block) return false;
    wait_all(op, deadline, pause);
    return true;
  };
  // In place: the buffers are where the peers can read them, so no copies and no rounds.
  //   arrive (the buffer is final); reduce chunk r of every buffer into every buffer; arrive; done once all did.
  if (op.in_place) {
    const int64_t chunk = round_up((op.count + n - 1) / n, kChunkAlign);
    const int64_t b = std::min(op.count, rank_ * chunk), e = std::min(op.count, (rank_ + 1) * chunk);
    switch (op.step) {
      case Op::Step::copy_in:
        arrive();
        op.step = Op::Step::reduce;
        [[fallthrough]];
      case Op::Step::reduce:
        if (!peers_there()) return false;
        dispatch_numeric(op.dtype, "allreduce", [&]<typename T>() {
          std::vector<const T*> in(n);
          std::vector<T*> out(n);
          for (int r = 0; r < n; ++r) in[r] = out[r] = reinterpret_cast<T*>(arena(r) + op.offset) + b;
          reduce_rank_order<T>(in, out, e - b, op.reduce);
        });
        arrive();
        op.step = Op::Step::copy_out;
        [[fallthrough]];
      case Op::Step::copy_out:
        if (!peers_there()) return false;
        break;
    }
    finish(op);
    return true;
  }
  const int64_t esize = static_cast<int64_t>(element_size(op.dtype));
  const int64_t per_slot = slot_bytes_ / esize;
  for (;;) {
    // This round: elements [first, first + m) of the concatenation, cut into n chunks of `chunk`.
    const int64_t first = op.round * per_slot, m = std::min(per_slot, op.count - first);
    const int64_t chunk = round_up((m + n - 1) / n, kChunkAlign);
    auto chunk_begin = [&](int k) { return std::min(m, k * chunk); };
    auto chunk_end = [&](int k) { return std::min(m, (k + 1) * chunk); };
    // Rank r's own chunk never goes through its slot when one tensor holds it: the reduction reads it from the
    // tensor and writes the result to both.
    const int64_t mine_b = chunk_begin(rank_), mine_e = chunk_end(rank_);
    std::byte* mine = single_span(op.tensors, (first + mine_b) * esize, (mine_e - mine_b) * esize);
    switch (op.step) {
      case Op::Step::copy_in:
        for (int k = 0; k < n; ++k) {
          const int64_t b = chunk_begin(k), e = chunk_end(k);
          if (b < e && !(k == rank_ && mine))
            copy_span(op.tensors, (first + b) * esize, (e - b) * esize, slot(rank_, rounds_) + b * esize,
                      /*into_tensors=*/false);
        }
        arrive();
        op.step = Op::Step::reduce;
        [[fallthrough]];
      case Op::Step::reduce:
        if (!peers_there()) return false;
        dispatch_numeric(op.dtype, "allreduce", [&]<typename T>() {
          std::vector<const T*> in(n);
          std::vector<T*> out = {reinterpret_cast<T*>(slot(rank_, rounds_)) + mine_b};
          for (int r = 0; r < n; ++r) in[r] = reinterpret_cast<const T*>(slot(r, rounds_)) + mine_b;
          if (mine) {
            in[rank_] = reinterpret_cast<const T*>(mine);
            out.push_back(reinterpret_cast<T*>(mine));
          }
          reduce_rank_order<T>(in, out, mine_e - mine_b, op.reduce);
        });
        arrive();
        op.step = Op::Step::copy_out;
        [[fallthrough]];
      case Op::Step::copy_out:
        if (!peers_there()) return false;
        for (int k = 0; k < n; ++k) {
          const int64_t b = chunk_begin(k), e = chunk_end(k);
          if (b < e && !(k == rank_ && mine))
            copy_span(op.tensors, (first + b) * esize, (e - b) * esize, slot(k, rounds_) + b * esize,
                      /*into_tensors=*/true);
        }
        ++rounds_;
        op.step = Op::Step::copy_in;
        if (++op.round == op.rounds) {
          finish(op);
          return true;
        }
    }
  }
}

void SharedMemoryAllreduce::finish(Op& op) {
  op.done = true;
  op.tensors.clear();   // the caller's buffers are its own again
  op.ready = nullptr;
}

bool SharedMemoryAllreduce::progress(const Op& op, bool block, Clock::time_point deadline, const Pause& pause) {
  while (!op.done) {
    TINYDDP_INTERNAL_ASSERT(!queue_.empty(), "SharedMemoryAllreduce: an allreduce neither done nor queued");
    if (!advance(*queue_.front(), block, deadline, pause)) return false;
    queue_.pop_front();
  }
  return true;
}

bool SharedMemoryAllreduce::progress_all(bool block, Clock::time_point deadline, const Pause& pause) {
  while (!queue_.empty()) {
    if (!advance(*queue_.front(), block, deadline, pause)) return false;
    queue_.pop_front();
  }
  return true;
}

}  // namespace tinyddp::dist
