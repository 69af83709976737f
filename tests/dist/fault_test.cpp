// Faults turn into clear errors on every rank, within the timeout, never a hang: a rank that throws, a
// rank that never arrives, a rank whose program ended while the others still call collectives, ranks
// that disagree on a collective, and replicas that are not the same model.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <thread>

#include "dist/ddp.h"
#include "dist/thread_process_group.h"
#include "engine/tinyddp.h"

namespace tinyddp::dist {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

std::string message_of(const std::exception_ptr& e) {
  try {
    if (e) std::rethrow_exception(e);
  } catch (const std::exception& ex) {
    return ex.what();
  }
  return "";
}

TEST(ThreadFaults, RankThatThrowsStopsTheOthersQuickly) {
  const auto start = Clock::now();
  auto errors = ThreadWorld::run(
      3,
      [](ProcessGroup& pg) {
        if (pg.rank() == 1) throw Error("rank 1 ran out of data");
        Tensor t = ones({4});
        pg.allreduce({t})->wait();
      },
      milliseconds(30000));
  EXPECT_LT(Clock::now() - start, milliseconds(5000)) << "the others must not wait out the 30 s timeout";
  EXPECT_EQ(message_of(errors[1]), "rank 1 ran out of data");
  for (int r : {0, 2}) {
    const std::string m = message_of(errors[r]);
    EXPECT_NE(m.find("[Rank " + std::to_string(r) + "] allreduce"), std::string::npos) << m;
    EXPECT_NE(m.find("rank 1 failed: rank 1 ran out of data"), std::string::npos) << m;
  }
}

TEST(ThreadFaults, RankThatNeverArrivesTimesOutNamingIt) {
  std::atomic<bool> release{false};
  const auto start = Clock::now();
  auto errors = ThreadWorld::run(
      2,
      [&](ProcessGroup& pg) {
        if (pg.rank() == 1) {
          // Stuck (e.g. in a data loader) until rank 0 gave up.
          while (!release) std::this_thread::sleep_for(milliseconds(5));
          return;
        }
        try {
          pg.barrier()->wait();
        } catch (...) {
          release = true;
          throw;
        }
      },
      milliseconds(300));
  const auto elapsed = Clock::now() - start;
  EXPECT_GE(elapsed, milliseconds(300));
  EXPECT_LT(elapsed, milliseconds(5000));
  const std::string m = message_of(errors[0]);
  EXPECT_NE(m.find("timed out after 300 ms waiting for rank(s) 1"), std::string::npos) << m;
  EXPECT_FALSE(errors[1]);
}

// 20 s: a rank that leaves must release the others at once, far inside it (asserted below 2 s).
constexpr milliseconds kLongTimeout{20'000};
constexpr milliseconds kPrompt{2'000};

// Uneven inputs: rank 1 has 2 batches, rank 0 has 3. Rank 1's program ends; rank 0, in its third
// iteration's allreduce, learns so at once instead of waiting out the timeout.
TEST(ThreadFaults, RankWhoseProgramEndsReleasesTheOthersAtOnce) {
  std::vector<std::vector<float>> sums(2);
  const auto start = Clock::now();
  auto errors = ThreadWorld::run(
      2,
      [&](ProcessGroup& pg) {
        for (int it = 0; it < (pg.rank() == 0 ? 3 : 2); ++it) {
          Tensor t = full({2}, pg.rank() + 1.0 + it);
          pg.allreduce({t})->wait();
          sums[pg.rank()].push_back(t.to_vector<float>()[0]);
        }
      },
      kLongTimeout);
  EXPECT_LT(Clock::now() - start, kPrompt) << "rank 0 must not wait out the 20 s timeout";
  EXPECT_FALSE(errors[1]) << message_of(errors[1]);
  EXPECT_EQ(message_of(errors[0]),
            "thread process group: rank 0 waited in allreduce (its collective #2) for rank 1, which left the process "
            "group after its 2 collectives (#0 to #1): its program returned. Collective #2 needs every rank, so it "
            "can never complete; a multi-process run (gloo, MPI) would fail here too, with a transport error or at "
            "the timeout. Every rank must issue the same collectives in the same order.");
  // The iterations both ranks ran were reduced as usual: (1 + 2), then (2 + 3).
  EXPECT_EQ(sums[0], (std::vector<float>{3, 5}));
  EXPECT_EQ(sums[1], (std::vector<float>{3, 5}));
}

// One rank raises (the reducer's error, caught by its program, as `repro`'s rank runner does) and its
// program ends while the other already waits in the collective it will never join.
TEST(ThreadFaults, LeaveReleasesARankAlreadyWaiting) {
  auto world = std::make_shared<ThreadWorld>(2, kLongTimeout);
  std::atomic<bool> arrived{false};
  std::string message;
  Clock::time_point released;
  std::thread rank0([&] {
    auto pg = world->group(0);
    Tensor t = ones({3});
    auto work = pg->broadcast({t}, 1);
    arrived = true;
    try {
      work->wait();
    } catch (const Error& e) {
      message = e.what();
    }
    released = Clock::now();
  });
  while (!arrived) std::this_thread::sleep_for(milliseconds(1));
  std::this_thread::sleep_for(milliseconds(50));   // rank 0 is (almost surely) asleep in wait() by now
  const auto left_at = Clock::now();
  world->leave(1, "it raised RuntimeError at backward #1 of iteration 2");
  rank0.join();
  EXPECT_LT(released - left_at, kPrompt);
  EXPECT_NE(message.find("rank 0 waited in broadcast (its collective #0) for rank 1, which left the process group "
                         "before its first collective: it raised RuntimeError at backward #1 of iteration 2."),
            std::string::npos)
      << message;
}

TEST(ThreadFaults, LeaveFailsLaterArrivalsAndArrivalsNotYetWaitedOn) {
  auto world = std::make_shared<ThreadWorld>(2, kLongTimeout);
  auto pg0 = world->group(0);
  Tensor a = ones({2}), b = ones({2});
  auto arrived_before = pg0->allreduce({a});   // between arrive() and wait() when rank 1 leaves
  world->leave(1, "it finished its 2 iterations");
  auto arrived_after = pg0->allreduce({b});
  const auto start = Clock::now();
  try {
    arrived_before->wait();
    ADD_FAILURE() << "collective #0 completed without rank 1";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("(its collective #0) for rank 1, which left the process group before its "
                                         "first collective: it finished its 2 iterations."),
              std::string::npos)
        << e.what();
  }
  try {
    arrived_after->wait();
    ADD_FAILURE() << "collective #1 completed without rank 1";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("(its collective #1) for rank 1"), std::string::npos) << e.what();
  }
  EXPECT_LT(Clock::now() - start, kPrompt);
  EXPECT_FALSE(arrived_before->is_completed());
}

TEST(ThreadFaults, CollectivesTheLeaverJoinedStillComplete) {
  auto world = std::make_shared<ThreadWorld>(2, kLongTimeout);
  auto pg0 = world->group(0), pg1 = world->group(1);
  Tensor sum0 = full({2}, 1.0), sum1 = full({2}, 2.0), root0 = full({1}, 7.0), root1 = full({1}, 0.0);
  // Rank 1 starts two collectives without waiting for them, then its program ends.
  auto work1 = pg1->allreduce({sum1});
  pg1->broadcast({root1}, 0);
  world->leave(1, "it returned without waiting for its collectives");
  pg0->allreduce({sum0})->wait();
  pg0->broadcast({root0}, 0)->wait();
  EXPECT_EQ(sum0.to_vector<float>(), (std::vector<float>{3, 3}));
  EXPECT_EQ(sum1.to_vector<float>(), (std::vector<float>{3, 3}));
  EXPECT_EQ(root1.to_vector<float>(), (std::vector<float>{7}));
  EXPECT_NO_THROW(work1->wait());   // a left rank's own Works stay valid
  try {
    pg0->barrier()->wait();
    ADD_FAILURE() << "the barrier completed without rank 1";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("rank 0 waited in barrier (its collective #2) for rank 1, which left the "
                                         "process group after its 2 collectives (#0 to #1)"),
              std::string::npos)
        << e.what();
  }
}

TEST(ThreadFaults, ALeftRankCannotStartCollectives) {
  auto world = std::make_shared<ThreadWorld>(2, kLongTimeout);
  auto pg1 = world->group(1);
  world->leave(1, "it finished its 2 iterations");
  world->leave(1, "its program returned");   // a second leave keeps the first, precise reason
  try {
    pg1->barrier();
    ADD_FAILURE() << "a left rank started a barrier";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("rank 1 called barrier after it left the process group (it finished its 2 "
                                         "iterations)"),
              std::string::npos)
        << e.what();
  }
  try {
    world->group(0)->barrier()->wait();
    ADD_FAILURE() << "the barrier completed without rank 1";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(": it finished its 2 iterations."), std::string::npos) << e.what();
  }
  EXPECT_THROW(world->leave(2, "no such rank"), Error);
}

// Every collective needs every rank: when one of 3 leaves, the 2 others both fail, even though they match.
TEST(ThreadFaults, WhenOneOfThreeRanksLeavesBothOthersFail) {
  const auto start = Clock::now();
  auto errors = ThreadWorld::run(
      3,
      [](ProcessGroup& pg) {
        if (pg.rank() == 2) return;
        Tensor t = ones({4});
        pg.allreduce({t})->wait();
      },
      kLongTimeout);
  EXPECT_LT(Clock::now() - start, kPrompt);
  EXPECT_FALSE(errors[2]);
  for (int r : {0, 1}) {
    const std::string m = message_of(errors[r]);
    EXPECT_NE(m.find("rank " + std::to_string(r) + " waited in allreduce (its collective #0) for rank 2, which left "
                     "the process group before its first collective: its program returned."),
              std::string::npos)
        << m;
  }
}

// Races between leaving and the others' arrivals and waits (also a workload for a ThreadSanitizer build):
// rank r runs 6 + r allreduces, so rank 0 leaves first and every other rank fails at collective #6
// naming it, while every collective before it sums exactly.
TEST(ThreadFaults, RanksOfUnevenLengthsAlwaysFailAtTheFirstCollectiveTheShortestSkips) {
  constexpr int kRanks = 4, kShortest = 6;
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<std::vector<float>> sums(kRanks);
    auto errors = ThreadWorld::run(
        kRanks,
        [&](ProcessGroup& pg) {
          for (int k = 0; k < kShortest + pg.rank(); ++k) {
            Tensor t = full({8}, 1.0);
            auto work = pg.allreduce({t});
            if ((k + pg.rank()) % 3 == 0) std::this_thread::yield();
            work->wait();
            sums[pg.rank()].push_back(t.to_vector<float>()[7]);
          }
        },
        kLongTimeout);
    ASSERT_FALSE(errors[0]) << message_of(errors[0]);
    for (int r = 1; r < kRanks; ++r) {
      const std::string m = message_of(errors[r]);
      ASSERT_NE(m.find("rank " + std::to_string(r) + " waited in allreduce (its collective #6) for rank 0, which left "
                       "the process group after its 6 collectives (#0 to #5)"),
                std::string::npos)
          << "trial " << trial << ": " << m;
    }
    for (int r = 0; r < kRanks; ++r) ASSERT_EQ(sums[r], std::vector<float>(kShortest, kRanks)) << "rank " << r;
  }
}

TEST(ThreadFaults, BoolTensorsAreRefusedByCollectivesOnEveryRank) {
  const auto errors = ThreadWorld::run(2, [](ProcessGroup& pg) {
    Tensor flags = gt(ones({2}), scalar_tensor(0.5, DType::f32));
    pg.allreduce({flags})->wait();
  });
  for (const auto& e : errors) {
    ASSERT_TRUE(e);
    try {
      std::rethrow_exception(e);
    } catch (const Error& err) {
      EXPECT_NE(std::string(err.what()).find("allreduce: tensor 0 is bool; collectives reduce numbers"),
                std::string::npos) << err.what();
    }
  }
}

TEST(ThreadFaults, MismatchedCollectivesAreReportedOnEveryRank) {
  auto errors = ThreadWorld::run(2, [](ProcessGroup& pg) {
    Tensor t = ones({pg.rank() == 0 ? 4 : 5});
    pg.allreduce({t})->wait();
  });
  for (int r = 0; r < 2; ++r) {
    const std::string m = message_of(errors[r]);
    EXPECT_NE(m.find("does not match across ranks"), std::string::npos) << m;
    EXPECT_NE(m.find("float32[4]"), std::string::npos) << m;
    EXPECT_NE(m.find("float32[5]"), std::string::npos) << m;
  }
}

// Each field of a collective's signature, differing on rank 1 alone: every one is a mismatch on both ranks.
// (An allgather's input must match its outputs on each rank, so its size differs together with theirs.)
TEST(ThreadFaults, EveryFieldOfTheSignatureIsCompared) {
  using Call = std::function<void(ProcessGroup&, bool)>;   // (pg, differ): differ is true on rank 1
  const std::vector<std::pair<std::string, Call>> cases = {
      {"kind", [](ProcessGroup& pg, bool differ) {
         Tensor t = ones({4});
         (differ ? pg.broadcast({t}, 0) : pg.allreduce({t}))->wait();
       }},
      {"dtype", [](ProcessGroup& pg, bool differ) {
         Tensor t = ones({4}, differ ? DType::f64 : DType::f32);
         pg.allreduce({t})->wait();
       }},
      {"tensor count", [](ProcessGroup& pg, bool differ) {
         std::vector<Tensor> ts{ones({4})};
         if (differ) ts.push_back(ones({4}));
         pg.allreduce(ts)->wait();
       }},
      {"op", [](ProcessGroup& pg, bool differ) {
         Tensor t = ones({4});
         pg.allreduce({t}, differ ? ReduceOp::max : ReduceOp::sum)->wait();
       }},
      {"root", [](ProcessGroup& pg, bool differ) {
         Tensor t = ones({4});
         pg.broadcast({t}, differ ? 1 : 0)->wait();
       }},
      {"allgather sizes", [](ProcessGroup& pg, bool differ) {
         const int64_t n = differ ? 3 : 2;
         pg.allgather({zeros({n}), zeros({n})}, ones({n}))->wait();
       }},
  };
  for (const auto& [field, call] : cases) {
    const auto errors = ThreadWorld::run(2, [&](ProcessGroup& pg) { call(pg, pg.rank() == 1); });
    for (int r = 0; r < 2; ++r) {
      const std::string m = message_of(errors[r]);
      EXPECT_NE(m.find("collective #0 does not match across ranks"), std::string::npos) << field << ": " << m;
    }
  }
}

// PyTorch 1.13's text for each rank (tests/golden/ddp_mismatch.json, from gen_ddp_mismatch.py).
std::string pytorch_message(const std::string& kase, int rank) {
  std::ifstream f("tests/golden/ddp_mismatch.json");
  const std::string m = nlohmann::json::parse(f)[kase][std::to_string(rank)];
  const std::string prefix = "RuntimeError: ";
  return m.rfind(prefix, 0) == 0 ? m.substr(prefix.size()) : m;
}

TEST(ThreadFaults, DifferentParameterCountsAreRefused) {
  auto errors = ThreadWorld::run(2, [](ProcessGroup& pg) {
    NamedParameters params = {{"w", ones({3}).requires_grad_()}};
    if (pg.rank() == 1) params.push_back({"extra", ones({2}).requires_grad_()});
    DistributedDataParallel ddp(params, std::shared_ptr<ProcessGroup>(&pg, [](ProcessGroup*) {}), {.print_warnings = false});
  });
  EXPECT_EQ(message_of(errors[0]), pytorch_message("count", 0));
  EXPECT_EQ(message_of(errors[1]), pytorch_message("count", 1));
}

TEST(ThreadFaults, DifferentParameterShapesAreRefused) {
  auto errors = ThreadWorld::run(2, [](ProcessGroup& pg) {
    NamedParameters params = {{"w", ones({3}).requires_grad_()},
                              {"v", ones({pg.rank() == 0 ? Shape{2, 4} : Shape{4, 2}}).requires_grad_()}};
    DistributedDataParallel ddp(params, std::shared_ptr<ProcessGroup>(&pg, [](ProcessGroup*) {}), {.print_warnings = false});
  });
  // Rank 1 refuses; rank 0, already in the parameter broadcast, learns why instead of waiting forever.
  EXPECT_NE(message_of(errors[0]).find("rank 1 failed: [1]: params[1]"), std::string::npos) << message_of(errors[0]);
  // (PyTorch's rank 0 gets gloo's "Connection closed by peer" when rank 1 exits.)
  EXPECT_EQ(message_of(errors[1]), pytorch_message("shape", 1));
}

TEST(ThreadFaults, ConstructionBroadcastsRankZerosParameters) {
  std::vector<std::vector<double>> after(2);
  auto errors = ThreadWorld::run(2, [&](ProcessGroup& pg) {
    Tensor w = full({3}, pg.rank() + 1.0, DType::f64).requires_grad_();
    DistributedDataParallel ddp({{"w", w}}, std::shared_ptr<ProcessGroup>(&pg, [](ProcessGroup*) {}), {.print_warnings = false});
    after[pg.rank()] = w.to_vector<double>();
  });
  ASSERT_FALSE(errors[0] || errors[1]);
  EXPECT_EQ(after[0], (std::vector<double>{1, 1, 1}));
  EXPECT_EQ(after[1], (std::vector<double>{1, 1, 1}));
}

}  // namespace
}  // namespace tinyddp::dist
