// dist/collectives.h and the thread backend's send/recv on N thread ranks: closed-form results for reduce (with
// gloo's partials on the other ranks, Note [What reduce leaves elsewhere]), gather, scatter, reduce_scatter and
// alltoall; reduce_scatter bitwise equal to allreduce's rank-order sum; point to point in send order, by tag and
// from any rank; and a stopped or silent peer releasing the others within the timeout, naming it.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <thread>

#include "dist/collectives.h"
#include "dist/thread_process_group.h"
#include "engine/tinyddp.h"

namespace tinyddp::dist {
namespace {

using std::chrono::milliseconds;

std::vector<float> vec(const Tensor& t) { return t.to_vector<float>(); }

void expect_no_errors(const std::vector<std::exception_ptr>& errors) {
  for (size_t r = 0; r < errors.size(); ++r)
    if (errors[r]) {
      try {
        std::rethrow_exception(errors[r]);
      } catch (const std::exception& e) {
        ADD_FAILURE() << "rank " << r << ": " << e.what();
      }
    }
}

std::string error_text(const std::exception_ptr& e) {
  if (!e) return "";
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& ex) {
    return ex.what();
  }
}

// Rank r holds r+1 in every element: dst gets n(n+1)/2 everywhere; rank r's chunk c holds the sum of the
// values of ranks r, r+1, ..., c-1 (mod n), as 1.13's gloo leaves it (measured: 3 ranks, 5 elements, dst 0 ->
// rank 1 [5, 5, 6, 6, 2], rank 2 [3, 3, 4, 4, 6]).
TEST(Collectives, ReduceLandsOnDstAndLeavesGloosPartialsElsewhere) {
  for (int dst = 0; dst < 3; ++dst) {
    std::vector<std::vector<float>> out(3);
    expect_no_errors(ThreadWorld::run(3, [&](ProcessGroup& pg) {
      Tensor t = full({5}, pg.rank() + 1.0);
      reduce(pg, t, dst)->wait();
      out[pg.rank()] = vec(t);
    }));
    const std::vector<std::vector<float>> partials = {{6, 6, 1, 1, 3}, {5, 5, 6, 6, 2}, {3, 3, 4, 4, 6}};
    for (int r = 0; r < 3; ++r)
      EXPECT_EQ(out[r], r == dst ? std::vector<float>(5, 6.0f) : partials[r]) << "dst " << dst << " rank " << r;
  }
}

TEST(Collectives, ReduceMaxOnTwoRanks) {
  std::vector<std::vector<float>> out(2);
  expect_no_errors(ThreadWorld::run(2, [&](ProcessGroup& pg) {
    Tensor t = from_vector(std::vector<float>{1.0f + pg.rank(), 10.0f * (pg.rank() + 1), 100.0f * (pg.rank() + 1)}, {3});
    reduce(pg, t, 1, ReduceOp::max)->wait();
    out[pg.rank()] = vec(t);
  }));
  EXPECT_EQ(out[1], (std::vector<float>{2, 20, 200}));
  EXPECT_EQ(out[0], (std::vector<float>{2, 20, 100}));   // 1.13 gloo: chunk 0 reduced, chunk 1 its own
}

TEST(Collectives, GatherScatterAndAlltoall) {
  const int n = 3;
  std::vector<std::vector<std::vector<float>>> gathered(n), all(n);
  std::vector<std::vector<float>> scattered(n);
  expect_no_errors(ThreadWorld::run(n, [&](ProcessGroup& pg) {
    const int r = pg.rank();
    std::vector<Tensor> outs;
    if (r == 2)
      for (int k = 0; k < n; ++k) outs.push_back(zeros({2}));
    gather(pg, from_vector(std::vector<float>{float(r), 10.0f * r}, {2}), outs, 2)->wait();
    for (const Tensor& o : outs) gathered[r].push_back(vec(o));

    std::vector<Tensor> ins;
    if (r == 1)
      for (int k = 0; k < n; ++k) ins.push_back(full({2, 1}, 100.0 + k));
    Tensor got = zeros({2, 1});
    scatter(pg, got, ins, 1)->wait();
    scattered[r] = vec(got);

    // rank r sends j+1 copies of 10r + j to rank j (uneven sizes)
    std::vector<Tensor> send, recv;
    for (int j = 0; j < n; ++j) send.push_back(full({j + 1}, 10.0 * r + j));
    for (int j = 0; j < n; ++j) recv.push_back(zeros({r + 1}));
    alltoall(pg, recv, send)->wait();
    for (const Tensor& t : recv) all[r].push_back(vec(t));
  }));
  EXPECT_EQ(gathered[2], (std::vector<std::vector<float>>{{0, 0}, {1, 10}, {2, 20}}));
  EXPECT_TRUE(gathered[0].empty());
  for (int r = 0; r < n; ++r) EXPECT_EQ(scattered[r], std::vector<float>(2, 100.0f + r));
  for (int r = 0; r < n; ++r)
    for (int j = 0; j < n; ++j) EXPECT_EQ(all[r][j], std::vector<float>(r + 1, 10.0f * j + r)) << r << " from " << j;
}

// Values whose sum depends on the order: reduce_scatter must equal allreduce's rank-order sum bitwise.
TEST(Collectives, ReduceScatterIsTheRankOrderSum) {
  const int n = 4;
  const std::vector<double> v = {1e8, 1.0, -1e8, 3.25e-3};
  std::vector<std::vector<float>> out(n), ref(n);
  expect_no_errors(ThreadWorld::run(n, [&](ProcessGroup& pg) {
    std::vector<Tensor> ins;
    for (int k = 0; k < n; ++k) ins.push_back(full({3}, v[pg.rank()] * (k + 1)));
    Tensor o = zeros({3});
    reduce_scatter(pg, o, ins)->wait();
    out[pg.rank()] = vec(o);
    for (int k = 0; k < n; ++k) {
      Tensor part = full({3}, v[pg.rank()] * (k + 1));
      pg.allreduce({part})->wait();
      if (k == pg.rank()) ref[k] = vec(part);
    }
  }));
  for (int r = 0; r < n; ++r) EXPECT_EQ(out[r], ref[r]) << "rank " << r;
  float left_to_right = 0;
  for (int r = 0; r < n; ++r) left_to_right += static_cast<float>(v[r]);
  EXPECT_EQ(out[0][0], left_to_right);
}

TEST(Collectives, BadInputNamesTheArgument) {
  const auto errors = ThreadWorld::run(2, [](ProcessGroup& pg) {
    Tensor t = zeros({2});
    EXPECT_THROW(reduce(pg, t, 2), Error);
    try {
      scatter(pg, t, {zeros({2})}, pg.rank());
      ADD_FAILURE() << "scatter with one input on two ranks";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("expected one tensor in inputs per rank (2) but got 1"), std::string::npos)
          << e.what();
    }
    EXPECT_THROW(reduce_scatter(pg, t, {zeros({2}), zeros({3})}), Error);
    EXPECT_THROW(pg.send(t, pg.rank()), Error);
    EXPECT_THROW(pg.recv(t, 5), Error);
  });
  expect_no_errors(errors);
}

TEST(PointToPoint, MessagesArriveInSendOrderByTagAndFromAnyRank) {
  std::vector<float> got;
  std::vector<int> sources;
  expect_no_errors(ThreadWorld::run(3, [&](ProcessGroup& pg) {
    if (pg.rank() == 1) {
      pg.send(full({2}, 1.0), 0, /*tag=*/7)->wait();
      pg.send(full({2}, 2.0), 0, /*tag=*/0)->wait();
      pg.send(full({2}, 3.0), 0, /*tag=*/0)->wait();
    } else if (pg.rank() == 2) {
      pg.send(full({2}, 4.0), 0, /*tag=*/3)->wait();
    } else {
      Tensor t = zeros({2});
      auto first = pg.recv(t, 1, 0);
      first->wait();
      got.push_back(vec(t)[0]);
      pg.recv(t, 1, 0)->wait();
      got.push_back(vec(t)[0]);
      pg.recv(t, 1, 7)->wait();
      got.push_back(vec(t)[0]);
      auto any = pg.recv(t, -1, 3);
      any->wait();
      got.push_back(vec(t)[0]);
      sources = {first->source_rank(), any->source_rank()};
    }
    pg.barrier()->wait();
  }));
  EXPECT_EQ(got, (std::vector<float>{2, 3, 1, 4}));
  EXPECT_EQ(sources, (std::vector<int>{1, 2}));
}

TEST(PointToPoint, RecvFailsAtOnceWhenTheSenderLeftAndTimesOutWhenItIsSilent) {
  const auto start = std::chrono::steady_clock::now();
  const auto errors = ThreadWorld::run(
      2,
      [](ProcessGroup& pg) {
        if (pg.rank() == 0) {
          Tensor t = zeros({1});
          pg.recv(t, 1)->wait();
        }
      },
      milliseconds(20'000));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  EXPECT_NE(error_text(errors[0]).find("recv from rank 1 (tag 0) can never complete: rank 1 left"), std::string::npos)
      << error_text(errors[0]);

  // Rank 1 stays in the group, sending nothing, until well after rank 0's timeout (a rank that left would fail
  // the recv at once instead, as above).
  const auto silent = ThreadWorld::run(
      2,
      [](ProcessGroup& pg) {
        Tensor t = zeros({1});
        if (pg.rank() == 0) pg.recv(t, 1, 4)->wait();
        else std::this_thread::sleep_for(milliseconds(1'500));
      },
      milliseconds(200));
  EXPECT_NE(error_text(silent[0]).find("timed out after 200 ms: no message arrived"), std::string::npos)
      << error_text(silent[0]);
}

TEST(PointToPoint, SizeMismatchIsReported) {
  const auto errors = ThreadWorld::run(2, [](ProcessGroup& pg) {
    if (pg.rank() == 1) {
      pg.send(zeros({3}), 0)->wait();
    } else {
      Tensor t = zeros({2});
      pg.recv(t, 1)->wait();
    }
  });
  EXPECT_NE(error_text(errors[0]).find("the message is float32[3] but the receiving tensor is float32[2]"), std::string::npos)
      << error_text(errors[0]);
}

// Subgroups: ranks {0, 2} and {3, 1} (numbered in that order) reduce apart; a non-member gets no group.
TEST(Subgroups, EachSubgroupReducesItsOwnRanksInItsOwnOrder) {
  std::vector<std::vector<int>> seen(4);
  expect_no_errors(ThreadWorld::run(4, [&](ProcessGroup& pg) {
    auto even = pg.subgroup({0, 2});
    auto odd = pg.subgroup({3, 1});
    auto& mine = pg.rank() % 2 == 0 ? even : odd;
    EXPECT_EQ(pg.rank() % 2 == 0 ? odd : even, nullptr);
    Tensor t = full({1}, std::pow(10.0, pg.rank()));
    mine->allreduce({t})->wait();
    Tensor b = full({1}, static_cast<double>(pg.rank()));
    mine->broadcast({b}, 0)->wait();   // the subgroup's rank 0: world rank 0 or 3
    seen[pg.rank()] = {mine->rank(), mine->size(), static_cast<int>(t.item<float>()), static_cast<int>(b.item<float>())};
    pg.barrier()->wait();
  }));
  EXPECT_EQ(seen[0], (std::vector<int>{0, 2, 101, 0}));
  EXPECT_EQ(seen[2], (std::vector<int>{1, 2, 101, 0}));
  EXPECT_EQ(seen[3], (std::vector<int>{0, 2, 1010, 3}));
  EXPECT_EQ(seen[1], (std::vector<int>{1, 2, 1010, 3}));
}

TEST(Subgroups, DifferentRanksListsAreRefusedAndALeavingMemberReleasesTheOthers) {
  const auto mismatch = ThreadWorld::run(2, [](ProcessGroup& pg) {
    pg.subgroup(pg.rank() == 0 ? std::vector<int>{0, 1} : std::vector<int>{1, 0});
  });
  const std::string text = error_text(mismatch[0]) + error_text(mismatch[1]);
  EXPECT_NE(text.find("Every rank must call new_group with the same ranks"), std::string::npos) << text;

  const auto start = std::chrono::steady_clock::now();
  const auto errors = ThreadWorld::run(
      3,
      [](ProcessGroup& pg) {
        auto sub = pg.subgroup({1, 2});
        if (pg.rank() == 2) sub->allreduce({zeros({2})})->wait();   // rank 1 returns without joining it
      },
      milliseconds(20'000));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  EXPECT_NE(error_text(errors[2]).find("which left the process group"), std::string::npos) << error_text(errors[2]);
}

}  // namespace
}  // namespace tinyddp::dist
