// The mpi backend's allreduce through shared memory (Note [The mpi backend's shared-memory allreduce] in
// dist/shared_memory_allreduce.cpp), driven here by threads over heap segments, as processes drive it over an
// MPI-3 shared window. What must hold: every element is the left-to-right fold over ranks 0..n-1, bitwise (the
// thread backend's expression), whether the tensors are copied through the slots (in rounds, several tensors,
// every dtype and op) or reduced in place in the arena; allreduces complete in the order they started however
// the ranks poll and wait; a rank that never arrives is named at the deadline; the arena hands out zeroed
// buffers first fit, at the same offsets on ranks that ask alike.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <thread>

#include "dist/shared_memory_allreduce.h"
#include "engine/tinyddp.h"
#include "tests/dist/rank_values.h"

namespace tinyddp::dist {
namespace {

using Clock = SharedMemoryAllreduce::Clock;

// One segment per rank, as an MPI-3 shared window would map them, with small slots so that a few hundred
// elements take several rounds.
class Segments {
 public:
  Segments(int n, int64_t slot_bytes, int64_t arena_bytes)
      : slot_bytes_(slot_bytes), arena_bytes_(arena_bytes) {
    const int64_t bytes = SharedMemoryAllreduce::segment_bytes(slot_bytes, arena_bytes);
    for (int r = 0; r < n; ++r) {
      auto* p = static_cast<std::byte*>(std::aligned_alloc(64, static_cast<size_t>((bytes + 63) / 64 * 64)));
      std::memset(p, 0, static_cast<size_t>(bytes));
      mem_.push_back(p);
    }
  }
  ~Segments() {
    for (std::byte* p : mem_) std::free(p);
  }
  std::unique_ptr<SharedMemoryAllreduce> rank(int r) const {
    return std::make_unique<SharedMemoryAllreduce>(r, mem_, slot_bytes_, arena_bytes_);
  }

 private:
  int64_t slot_bytes_, arena_bytes_;
  std::vector<std::byte*> mem_;
};

// fn(rank, shm) on n threads at once.
void run_ranks(int n, const Segments& segments, const std::function<void(int, SharedMemoryAllreduce&)>& fn) {
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r)
    threads.emplace_back([&, r] {
      auto shm = segments.rank(r);
      fn(r, *shm);
    });
  for (std::thread& t : threads) t.join();
}

SharedMemoryAllreduce::Ready agreed(bool in_place) {
  return [in_place](bool, Clock::time_point, bool* out) {
    *out = in_place;
    return true;
  };
}

void wait(SharedMemoryAllreduce& shm, const SharedMemoryAllreduce::Op& op) {
  ASSERT_TRUE(shm.progress(op, /*block=*/true, Clock::now() + std::chrono::seconds(30), [] { std::this_thread::yield(); }));
}

// Rank r's values of tensor `which` (tests/dist/rank_values.h): another order of the fold rounds differently.
template <typename T>
std::vector<T> values(int rank, int which, int64_t count) {
  return test_inputs::values<T>(rank, count, static_cast<uint64_t>(which));
}

// The ops written out here, not dist::combine: the code under test reduces with combine_into, and an expected
// value built from the same expressions could not catch a wrong one.
template <typename T>
T apply(ReduceOp op, T a, T b) {
  switch (op) {
    case ReduceOp::sum: return a + b;
    case ReduceOp::product: return a * b;
    case ReduceOp::min: return std::min(a, b);
    case ReduceOp::max: return std::max(a, b);
  }
  return a;
}

// ((b0 op b1) op b2) ... element by element.
template <typename T>
std::vector<T> fold(int n, int which, int64_t count, ReduceOp op) {
  std::vector<T> acc = values<T>(0, which, count);
  for (int r = 1; r < n; ++r) {
    const std::vector<T> b = values<T>(r, which, count);
    for (size_t i = 0; i < acc.size(); ++i) acc[i] = apply(op, acc[i], b[i]);
  }
  return acc;
}

TEST(SharedMemoryAllreduce, TheFoldIsOrderSensitiveSoTheTestsCanTellTheOrder) {
  std::vector<float> left = fold<float>(3, 1, 200, ReduceOp::sum), right(200, 0.0f);
  for (int r = 2; r >= 0; --r) {
    const std::vector<float> b = values<float>(r, 1, 200);
    for (size_t i = 0; i < right.size(); ++i) right[i] = right[i] + b[i];
  }
  EXPECT_NE(left, right);
}

// Several tensors (so the concatenation crosses tensor boundaries inside chunks and rounds), 142 elements through
// slots of 64 f32 or 32 f64: three to five rounds.
template <typename T>
void expect_copied_fold(int n, ReduceOp op) {
  SCOPED_TRACE(std::string(dtype_name(dtype_of<T>())) + " " + reduce_op_name(op) + " on " + std::to_string(n));
  const std::vector<int64_t> sizes = {5, 100, 37};
  Segments segments(n, /*slot_bytes=*/256, /*arena_bytes=*/0);
  std::vector<std::vector<std::vector<T>>> got(n);
  run_ranks(n, segments, [&](int r, SharedMemoryAllreduce& shm) {
    std::vector<Tensor> tensors;
    for (size_t k = 0; k < sizes.size(); ++k)
      tensors.push_back(from_vector(values<T>(r, static_cast<int>(k), sizes[k]), {sizes[k]}));
    EXPECT_EQ(shm.arena_offset(tensors), -1);
    auto op_ = shm.start(tensors, op, 0, agreed(false));
    wait(shm, *op_);
    for (const Tensor& t : tensors) got[r].push_back(t.to_vector<T>());
  });
  for (int r = 0; r < n; ++r)
    for (size_t k = 0; k < sizes.size(); ++k) EXPECT_EQ(got[r][k], fold<T>(n, static_cast<int>(k), sizes[k], op));
}

TEST(SharedMemoryAllreduce, CopiedThroughTheSlotsInRoundsIsTheRankOrderFoldBitwise) {
  for (int n : {2, 3, 4}) {
    for (ReduceOp op : {ReduceOp::sum, ReduceOp::product, ReduceOp::min, ReduceOp::max}) {
      expect_copied_fold<float>(n, op);
      expect_copied_fold<double>(n, op);
    }
    for (ReduceOp op : {ReduceOp::sum, ReduceOp::min, ReduceOp::max}) expect_copied_fold<int64_t>(n, op);
  }
}

TEST(SharedMemoryAllreduce, ArenaBuffersAreReducedInPlaceAtTheSameOffsetOnEveryRank) {
  for (int n : {2, 3}) {
    Segments segments(n, 256, 64 << 10);
    const std::vector<int64_t> sizes = {10, 1000, 3};
    std::vector<std::vector<int64_t>> offsets(n);
    std::vector<std::vector<std::vector<float>>> got(n);
    run_ranks(n, segments, [&](int r, SharedMemoryAllreduce& shm) {
      std::vector<Tensor> buffers;
      for (size_t k = 0; k < sizes.size(); ++k) {
        buffers.push_back(shm.allocate(sizes[k], DType::f32));
        ASSERT_TRUE(buffers.back().defined());
        EXPECT_EQ(buffers.back().to_vector<float>(), std::vector<float>(sizes[k], 0.0f)) << "zero-filled";
        offsets[r].push_back(shm.arena_offset({buffers.back()}));
        std::vector<float> v = values<float>(r, static_cast<int>(k), sizes[k]);
        std::memcpy(buffers.back().raw_data(), v.data(), v.size() * sizeof(float));
      }
      // In place, copied (a plain tensor), in place: one queue, one order.
      Tensor plain = from_vector(values<float>(r, 7, 300), {300});
      std::vector<std::shared_ptr<SharedMemoryAllreduce::Op>> ops;
      ops.push_back(shm.start({buffers[0]}, ReduceOp::sum, 0, agreed(true)));
      ops.push_back(shm.start({plain}, ReduceOp::sum, 1, agreed(false)));
      ops.push_back(shm.start({buffers[1]}, ReduceOp::sum, 2, agreed(true)));
      ops.push_back(shm.start({buffers[2]}, ReduceOp::max, 3, agreed(true)));
      for (auto& op : ops) wait(shm, *op);
      for (const Tensor& b : buffers) got[r].push_back(b.to_vector<float>());
      got[r].push_back(plain.to_vector<float>());
    });
    for (int r = 0; r < n; ++r) {
      EXPECT_EQ(offsets[r], offsets[0]);
      EXPECT_GE(offsets[r][0], 0);
      EXPECT_EQ(got[r][0], fold<float>(n, 0, 10, ReduceOp::sum));
      EXPECT_EQ(got[r][1], fold<float>(n, 1, 1000, ReduceOp::sum));
      EXPECT_EQ(got[r][2], fold<float>(n, 2, 3, ReduceOp::max));
      EXPECT_EQ(got[r][3], fold<float>(n, 7, 300, ReduceOp::sum));
    }
  }
}

// The reducer's pattern: several buckets launched, polled now and then, waited on last first. Waiting on the
// last completes the earlier ones on the way.
TEST(SharedMemoryAllreduce, AllreducesInFlightCompleteInTheOrderTheyStarted) {
  constexpr int n = 3;
  Segments segments(n, 256, 0);
  std::vector<std::vector<std::vector<double>>> got(n);
  run_ranks(n, segments, [&](int r, SharedMemoryAllreduce& shm) {
    std::vector<Tensor> tensors;
    std::vector<std::shared_ptr<SharedMemoryAllreduce::Op>> ops;
    for (int k = 0; k < 4; ++k) {
      tensors.push_back(from_vector(values<double>(r, k, 50 + 40 * k), {50 + 40 * k}));
      ops.push_back(shm.start({tensors.back()}, ReduceOp::sum, k, agreed(false)));
      shm.progress(*ops.back(), /*block=*/false, Clock::now(), {});
    }
    wait(shm, *ops.back());
    EXPECT_TRUE(shm.idle());
    for (const Tensor& t : tensors) got[r].push_back(t.to_vector<double>());
  });
  for (int r = 0; r < n; ++r)
    for (int k = 0; k < 4; ++k) EXPECT_EQ(got[r][k], fold<double>(n, k, 50 + 40 * k, ReduceOp::sum));
}

TEST(SharedMemoryAllreduce, APollMovesOnWithoutWaitingForAPeer) {
  Segments segments(2, 256, 0);
  std::atomic<bool> polled{false};
  std::vector<std::vector<float>> got(2);
  run_ranks(2, segments, [&](int r, SharedMemoryAllreduce& shm) {
    Tensor t = from_vector(values<float>(r, 0, 40), {40});
    if (r == 1)
      while (!polled.load()) std::this_thread::yield();   // rank 0 polls before rank 1 starts
    auto op = shm.start({t}, ReduceOp::sum, 0, agreed(false));
    if (r == 0) {
      EXPECT_FALSE(shm.progress(*op, /*block=*/false, Clock::now(), {})) << "rank 1 has not started";
      polled = true;
    }
    wait(shm, *op);
    got[r] = t.to_vector<float>();
  });
  EXPECT_EQ(got[0], fold<float>(2, 0, 40, ReduceOp::sum));
  EXPECT_EQ(got[1], got[0]);
}

TEST(SharedMemoryAllreduce, ARankThatNeverArrivesIsNamedAtTheDeadline) {
  Segments segments(3, 256, 0);
  std::vector<std::string> missing(3);
  run_ranks(3, segments, [&](int r, SharedMemoryAllreduce& shm) {
    if (r == 2) return;   // never starts it
    Tensor t = ones({8});
    auto op = shm.start({t}, ReduceOp::sum, 41, agreed(false));
    const auto t0 = Clock::now();
    try {
      shm.progress(*op, true, t0 + std::chrono::milliseconds(100), [] { std::this_thread::yield(); });
      ADD_FAILURE() << "completed without rank 2";
    } catch (const SharedMemoryAllreduce::PeersMissing& e) {
      EXPECT_EQ(e.seq, 41u);
      missing[r] = e.missing;
    }
    EXPECT_GE(Clock::now() - t0, std::chrono::milliseconds(100));
  });
  EXPECT_EQ(missing[0], "2");
  EXPECT_EQ(missing[1], "2");
}

TEST(SharedMemoryAllreduce, TheArenaIsFirstFitZeroFilledAndReusable) {
  Segments segments(1, 256, 1024);
  auto shm = segments.rank(0);
  Tensor a = shm->allocate(64, DType::f32);   // 256 bytes
  Tensor b = shm->allocate(3, DType::f64);    // 24 bytes, 64 reserved
  Tensor c = shm->allocate(100, DType::f32);  // 400 bytes, 448 reserved
  ASSERT_TRUE(a.defined() && b.defined() && c.defined());
  EXPECT_EQ(shm->arena_offset({a}), 0);
  EXPECT_EQ(shm->arena_offset({b}), 256);
  EXPECT_EQ(shm->arena_offset({c}), 320);
  EXPECT_FALSE(shm->allocate(65, DType::f32).defined()) << "256 bytes are left";
  EXPECT_EQ(shm->arena_offset({a, b}), -1) << "two tensors are not one buffer";
  EXPECT_EQ(shm->arena_offset({ones({4})}), -1);
  a.fill_(7.0);
  a = Tensor();   // freed: the lowest block again
  Tensor d = shm->allocate(10, DType::f32);
  EXPECT_EQ(shm->arena_offset({d}), 0);
  EXPECT_EQ(d.to_vector<float>(), std::vector<float>(10, 0.0f));
  b = Tensor();
  c = Tensor();
  d = Tensor();   // everything back, merged into one block
  EXPECT_EQ(shm->arena_offset({shm->allocate(256, DType::f32)}), 0);
}

}  // namespace
}  // namespace tinyddp::dist
