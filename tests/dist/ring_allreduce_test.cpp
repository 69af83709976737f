// The thread backend's allreduce (Note [The thread backend's allreduce] in dist/thread_process_group.cpp):
// reduce-scatter then allgather over fixed chunks, each rank reducing its own chunk in place. What must hold:
// every element is the left-to-right sum over ranks 0..n-1 (bitwise, for every n and size, including sizes
// smaller than n and sizes that cut into many pieces), the result lands in the caller's own buffer, runs are
// bitwise repeatable whatever the thread timing, and the collective completes however the ranks wait for it.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <random>
#include <thread>

#include "dist/thread_process_group.h"
#include "engine/tinyddp.h"
#include "tests/dist/rank_values.h"

namespace tinyddp::dist {
namespace {

using std::chrono::milliseconds;

// Rank r's values (tests/dist/rank_values.h): summing them in another order rounds differently
// (ExpectedSumIsOrderSensitive checks that the test can tell).
using test_inputs::values;

// The promise: ((b0 + b1) + b2) + ... element by element, what the thread backend has always computed.
template <typename T>
std::vector<T> rank_order_sum(int n, int64_t count, uint64_t seed, int first = 0) {
  std::vector<T> acc = values<T>(first, count, seed);
  for (int k = 1; k < n; ++k) {
    const std::vector<T> b = values<T>((first + k) % n, count, seed);
    for (int64_t i = 0; i < count; ++i) acc[i] = acc[i] + b[i];
  }
  return acc;
}

template <typename T>
bool bitwise_equal(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

// Runs one allreduce of `count` elements on n ranks; returns every rank's result.
template <typename T>
std::vector<std::vector<T>> allreduce_on(int n, int64_t count, uint64_t seed, DType dtype) {
  std::vector<std::vector<T>> out(n);
  auto errors = ThreadWorld::run(n, [&](ProcessGroup& pg) {
    Tensor t = from_vector(values<T>(pg.rank(), count, seed), {count}, dtype);
    const void* before = t.raw_data();
    pg.allreduce({t})->wait();
    EXPECT_EQ(t.raw_data(), before) << "the result must land in the caller's buffer";
    out[pg.rank()] = t.to_vector<T>();
  });
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
  return out;
}

TEST(RingAllreduce, ExpectedSumIsOrderSensitive) {
  // A ring's order (chunk k summed from rank k+1 on) rounds differently from rank order for n >= 3: the
  // bitwise checks below can fail.
  EXPECT_FALSE(bitwise_equal(rank_order_sum<float>(3, 1000, 7), rank_order_sum<float>(3, 1000, 7, /*first=*/1)));
}

// Sizes: empty, 1, below n, below one 16-element chunk alignment per rank, odd, and several pieces per chunk
// (a piece is 256 KiB: 65536 floats).
TEST(RingAllreduce, EqualsRankOrderSumForOneToFiveRanksAndOddSizes) {
  for (int n = 1; n <= 5; ++n)
    for (int64_t count : {int64_t{0}, int64_t{1}, int64_t{3}, int64_t{n - 1}, int64_t{17}, int64_t{16 * n + 1},
                          int64_t{1001}, int64_t{3 * 65536 * n + 13}}) {
      const auto got = allreduce_on<float>(n, count, 11, DType::f32);
      const auto want = rank_order_sum<float>(n, count, 11);
      for (int r = 0; r < n; ++r)
        ASSERT_TRUE(bitwise_equal(got[r], want)) << "n " << n << " count " << count << " rank " << r;
    }
}

TEST(RingAllreduce, DoubleAndInt64) {
  for (int n : {2, 3, 4}) {
    const auto d = allreduce_on<double>(n, 70001, 3, DType::f64);
    const auto i = allreduce_on<int64_t>(n, 70001, 3, DType::i64);
    for (int r = 0; r < n; ++r) {
      EXPECT_TRUE(bitwise_equal(d[r], rank_order_sum<double>(n, 70001, 3))) << "f64, n " << n << " rank " << r;
      EXPECT_TRUE(bitwise_equal(i[r], rank_order_sum<int64_t>(n, 70001, 3))) << "i64, n " << n << " rank " << r;
    }
  }
}

TEST(RingAllreduce, MaxAndSeveralTensorsInOneCall) {
  const int n = 3;
  std::vector<std::vector<float>> a(n), b(n);
  auto errors = ThreadWorld::run(n, [&](ProcessGroup& pg) {
    const int r = pg.rank();
    Tensor x = from_vector(values<float>(r, 5, 1), {5}), y = from_vector(values<float>(r, 40000, 2), {200, 200});
    pg.allreduce({x, y}, ReduceOp::max)->wait();
    a[r] = x.to_vector<float>();
    b[r] = y.to_vector<float>();
  });
  for (auto& e : errors) ASSERT_FALSE(e);
  for (auto [seed, count, got] : {std::tuple{1, 5, &a}, std::tuple{2, 40000, &b}}) {
    std::vector<float> want = values<float>(0, count, seed);
    for (int k = 1; k < n; ++k) {
      const auto v = values<float>(k, count, seed);
      for (int i = 0; i < count; ++i) want[i] = std::max(want[i], v[i]);
    }
    for (int r = 0; r < n; ++r) EXPECT_EQ((*got)[r], want) << "seed " << seed << " rank " << r;
  }
}

// PRODUCT and MIN reduce in rank order too (torch.distributed.ReduceOp.PRODUCT, MIN), each piece by its owner.
TEST(RingAllreduce, ProductAndMinInRankOrder) {
  const int n = 3;
  const int64_t count = 70001;
  std::vector<std::vector<double>> product(n), minimum(n);
  auto errors = ThreadWorld::run(n, [&](ProcessGroup& pg) {
    const int r = pg.rank();
    Tensor p = from_vector(values<double>(r, count, 4), {count}), m = from_vector(values<double>(r, count, 5), {count});
    pg.allreduce({p}, ReduceOp::product)->wait();
    pg.allreduce({m}, ReduceOp::min)->wait();
    product[r] = p.to_vector<double>();
    minimum[r] = m.to_vector<double>();
  });
  for (auto& e : errors) ASSERT_FALSE(e);
  std::vector<double> want_product = values<double>(0, count, 4), want_min = values<double>(0, count, 5);
  for (int k = 1; k < n; ++k) {
    const auto p = values<double>(k, count, 4), m = values<double>(k, count, 5);
    for (int64_t i = 0; i < count; ++i) {
      want_product[i] = want_product[i] * p[i];
      want_min[i] = std::min(want_min[i], m[i]);
    }
  }
  for (int r = 0; r < n; ++r) {
    EXPECT_EQ(product[r], want_product) << "rank " << r;
    EXPECT_EQ(minimum[r], want_min) << "rank " << r;
  }
}

// Different thread timings give the same bits: each run delays a different rank before it waits, so that
// different ranks reduce different pieces.
TEST(RingAllreduce, BitwiseRepeatableAcrossRunsAndTimings) {
  const int n = 3;
  const int64_t count = 2 * 65536 * n + 5;
  std::vector<float> first;
  for (int run = 0; run < 6; ++run) {
    std::vector<std::vector<float>> out(n);
    auto errors = ThreadWorld::run(n, [&](ProcessGroup& pg) {
      Tensor t = from_vector(values<float>(pg.rank(), count, 5), {count});
      auto work = pg.allreduce({t});
      if (pg.rank() == run % n) std::this_thread::sleep_for(milliseconds(20));   // the others take its pieces
      work->wait();
      out[pg.rank()] = t.to_vector<float>();
    });
    for (auto& e : errors) ASSERT_FALSE(e);
    if (run == 0) first = out[0];
    for (int r = 0; r < n; ++r) ASSERT_TRUE(bitwise_equal(out[r], first)) << "run " << run << " rank " << r;
  }
  EXPECT_TRUE(bitwise_equal(first, rank_order_sum<float>(n, count, 5)));
}

// A rank that never waits: the waiting rank reduces its pieces too, into both buffers.
TEST(RingAllreduce, CompletesWhenOnlyOneRankWaits) {
  auto world = std::make_shared<ThreadWorld>(2, milliseconds(20000));
  auto pg0 = world->group(0), pg1 = world->group(1);
  const int64_t count = 4 * 65536 + 3;
  Tensor a = from_vector(values<float>(0, count, 9), {count}), b = from_vector(values<float>(1, count, 9), {count});
  pg1->allreduce({b});   // its Work dropped at once
  pg0->allreduce({a})->wait();
  const auto want = rank_order_sum<float>(2, count, 9);
  EXPECT_TRUE(bitwise_equal(a.to_vector<float>(), want));
  EXPECT_TRUE(bitwise_equal(b.to_vector<float>(), want));
}

// Polls alone finish it (each rank reduces its own chunk in is_completed), without any wait.
TEST(RingAllreduce, PollingAloneCompletes) {
  const int64_t count = 3 * 65536;
  std::vector<std::vector<float>> out(2);
  auto errors = ThreadWorld::run(2, [&](ProcessGroup& pg) {
    Tensor t = from_vector(values<float>(pg.rank(), count, 4), {count});
    auto work = pg.allreduce({t});
    const auto deadline = std::chrono::steady_clock::now() + milliseconds(10000);
    while (!work->is_completed() && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
    EXPECT_TRUE(work->is_completed());
    out[pg.rank()] = t.to_vector<float>();
  });
  for (auto& e : errors) ASSERT_FALSE(e);
  for (int r = 0; r < 2; ++r) EXPECT_TRUE(bitwise_equal(out[r], rank_order_sum<float>(2, count, 4))) << r;
}

// A rank's collectives complete in order: waiting on a later barrier finishes an allreduce nobody waited on.
TEST(RingAllreduce, ALaterCollectiveCompletesTheEarlierAllreduce) {
  const int64_t count = 65536 + 1;
  std::vector<std::vector<float>> out(2);
  auto errors = ThreadWorld::run(2, [&](ProcessGroup& pg) {
    Tensor t = from_vector(values<float>(pg.rank(), count, 6), {count});
    pg.allreduce({t});   // not waited on
    pg.barrier()->wait();
    out[pg.rank()] = t.to_vector<float>();
  });
  for (auto& e : errors) ASSERT_FALSE(e);
  for (int r = 0; r < 2; ++r) EXPECT_TRUE(bitwise_equal(out[r], rank_order_sum<float>(2, count, 6))) << r;
}

}  // namespace
}  // namespace tinyddp::dist
