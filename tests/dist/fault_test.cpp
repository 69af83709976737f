// Faults turn into clear errors on every rank, within the timeout, never a hang: a rank that throws, a
// rank that never arrives, ranks that disagree on a collective, and replicas that are not the same model.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
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
