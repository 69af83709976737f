// The mpi backend, run by CTest as `mpirun -np 2 test_mpi`: collectives are correct, DDP over MPI equals
// one process on the whole batch, and every PyTorch golden scenario has the same outcome as on threads.
// Each rank runs every test; rank 0 prints; the exit code says whether any rank failed.
#include <gtest/gtest.h>

#include <mpi.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <nlohmann/json.hpp>

#include "apps/tinyddp/repro/repro.h"
#include "dist/collectives.h"
#include "dist/ddp.h"
#include "dist/mpi_process_group.h"
#include "engine/tinyddp.h"
#include "tests/apps/repro_golden.h"

namespace tinyddp::dist {
namespace {

std::shared_ptr<ProcessGroup> world() {
  static auto pg = mpi_world();
  return pg;
}

TEST(Mpi, AllreduceBroadcastAllgatherBarrier) {
  auto pg = world();
  ASSERT_EQ(pg->size(), 2) << "run under mpirun -np 2";
  const int r = pg->rank();
  Tensor a = full({5}, r + 1.0, DType::f64), b = full({3}, 10.0 * (r + 1), DType::f64);
  pg->allreduce({a, b})->wait();   // two tensors: packed into one message and unpacked
  EXPECT_EQ(a.to_vector<double>(), std::vector<double>(5, 3.0));
  EXPECT_EQ(b.to_vector<double>(), std::vector<double>(3, 30.0));
  Tensor m = full({2}, r == 0 ? 7.0 : -1.0, DType::f64);
  pg->allreduce({m}, ReduceOp::max)->wait();
  EXPECT_EQ(m.to_vector<double>(), std::vector<double>(2, 7.0));
  Tensor c = full({4}, r == 0 ? 42.0 : 0.0, DType::i64);
  pg->broadcast({c}, 0)->wait();
  EXPECT_EQ(c.to_vector<int64_t>(), std::vector<int64_t>(4, 42));
  std::vector<Tensor> out = {zeros({2}, DType::i64), zeros({2}, DType::i64)};
  pg->allgather(out, full({2}, 100.0 + r, DType::i64))->wait();
  EXPECT_EQ(out[0].to_vector<int64_t>(), std::vector<int64_t>(2, 100));
  EXPECT_EQ(out[1].to_vector<int64_t>(), std::vector<int64_t>(2, 101));
  pg->barrier()->wait();
}

// Note [The mpi backend's shared-memory allreduce]: on by default when every rank is on this machine, off under
// TINYDDP_MPI_SHARED_MEMORY=0 (CTest runs this binary both ways: mpi.two_ranks, mpi.two_ranks_mpi_allreduce).
// Either way: buckets from allocate_bucket and plain tensors of several rounds (5 MiB), every op, and an
// allreduce that waits while a broadcast started after it completes first (Note [Two progress engines]).
TEST(Mpi, AllreduceOfBucketsAndLargeTensorsWhileOtherCollectivesRun) {
  auto pg = world();
  const int r = pg->rank();
  const char* env = std::getenv("TINYDDP_MPI_SHARED_MEMORY");
  if (env && std::string(env) == "0")
    EXPECT_FALSE(mpi_shared_memory_allreduce());
  else if (!mpi_shared_memory_allreduce() && r == 0)   // the backend said why on stderr (a full /dev/shm)
    std::printf("note: no shared-memory allreduce on this machine; MPI_Iallreduce was tested\n");
  Tensor bucket = pg->allocate_bucket(1000, DType::f32, Device::cpu());
  EXPECT_EQ(bucket.to_vector<float>(), std::vector<float>(1000, 0.0f));
  Tensor big = empty({5 << 18}, DType::f32);   // 5 MiB: two rounds through 4 MiB slots
  for (int64_t i = 0; i < big.numel(); ++i) big.data_ptr<float>()[i] = static_cast<float>(i % 1000) * (r + 1);
  for (int64_t i = 0; i < bucket.numel(); ++i) bucket.data_ptr<float>()[i] = 0.5f * static_cast<float>(i) + r;
  auto bucket_work = pg->allreduce({bucket});
  auto big_work = pg->allreduce({big}, ReduceOp::max);
  Tensor root = full({3}, 7.0 * (r + 1), DType::f64);
  pg->broadcast({root}, 1)->wait();   // started after the allreduces, waited on before them
  EXPECT_EQ(root.to_vector<double>(), std::vector<double>(3, 14.0));
  big_work->wait();                   // completes the bucket's allreduce on the way
  EXPECT_TRUE(bucket_work->is_completed());
  for (int64_t i = 0; i < bucket.numel(); ++i)
    ASSERT_EQ(bucket.data_ptr<float>()[i], 2 * 0.5f * static_cast<float>(i) + 1) << i;
  for (int64_t i = 0; i < big.numel(); ++i) ASSERT_EQ(big.data_ptr<float>()[i], static_cast<float>(i % 1000) * 2) << i;
  Tensor m = full({4}, r == 0 ? 3.0 : -2.0, DType::i64);
  pg->allreduce({m}, ReduceOp::min)->wait();
  pg->allreduce({m}, ReduceOp::product)->wait();
  EXPECT_EQ(m.to_vector<int64_t>(), std::vector<int64_t>(4, 4));
}

// Note [Open MPI's nonblocking allreduce] (mpi_process_group.cpp): the algorithm libnbc runs for
// MPI_Iallreduce is Rabenseifner's (3) unless the user chose one, read back from Open MPI itself through the
// MPI tool interface. CTest runs this once as is (expects 3) and once with the user's choice set to 1
// (mpi.user_iallreduce_algorithm, which sets TINYDDP_TEST_EXPECT_IALLREDUCE to 1).
// dist/collectives.h over MPI's collectives, and send/recv: the thread backend's closed forms on 2 ranks.
TEST(Mpi, ComposedCollectivesAndPointToPoint) {
  auto pg = world();
  const int r = pg->rank(), peer = 1 - r;
  Tensor t = full({5}, r + 1.0);
  reduce(*pg, t, 0)->wait();
  // rank 1 keeps 1.13 gloo's partials: chunk 0 (4 elements) its own, chunk 1 the sum
  EXPECT_EQ(t.to_vector<float>(), r == 0 ? std::vector<float>(5, 3.0f) : (std::vector<float>{2, 2, 2, 2, 3}));
  Tensor s = zeros({2}, DType::i64);
  std::vector<Tensor> ins;
  if (r == 1) ins = {full({2}, 5.0, DType::i64), full({2}, 6.0, DType::i64)};
  scatter(*pg, s, ins, 1)->wait();
  EXPECT_EQ(s.to_vector<int64_t>(), std::vector<int64_t>(2, 5 + r));
  std::vector<Tensor> outs = {zeros({r + 1}), zeros({r + 1})};
  alltoall(*pg, outs, {full({1}, 10.0 * r), full({2}, 10.0 * r + 1)})->wait();
  for (int j = 0; j < 2; ++j) EXPECT_EQ(outs[j].to_vector<float>(), std::vector<float>(r + 1, 10.0f * j + r));

  Tensor got = zeros({3}, DType::f64);
  if (r == 0) {
    pg->send(full({3}, 4.5, DType::f64), peer, 2)->wait();
    auto w = pg->recv(got, -1, 3);
    w->wait();
    EXPECT_EQ(w->source_rank(), 1);
  } else {
    auto w = pg->recv(got, 0, 2);
    w->wait();
    EXPECT_EQ(w->source_rank(), 0);
    pg->send(got, 0, 3)->wait();
  }
  EXPECT_EQ(got.to_vector<double>(), std::vector<double>(3, 4.5));
  pg->barrier()->wait();
}

TEST(Mpi, IallreduceUsesReduceScatterAllgatherUnlessTheUserChose) {
  world();   // MPI is initialized by the group
  const char* expected_text = std::getenv("TINYDDP_TEST_EXPECT_IALLREDUCE");
  const int expected = expected_text ? std::atoi(expected_text) : 3;
  int provided = 0;
  ASSERT_EQ(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided), MPI_SUCCESS);
  int index = -1;
  ASSERT_EQ(MPI_T_cvar_get_index("coll_libnbc_iallreduce_algorithm", &index), MPI_SUCCESS)
      << "this Open MPI has no libnbc iallreduce algorithm variable";
  MPI_T_cvar_handle handle;
  int count = 0;
  ASSERT_EQ(MPI_T_cvar_handle_alloc(index, nullptr, &handle, &count), MPI_SUCCESS);
  int value = -1;
  ASSERT_EQ(MPI_T_cvar_read(handle, &value), MPI_SUCCESS);
  MPI_T_cvar_handle_free(&handle);
  MPI_T_finalize();
  EXPECT_EQ(value, expected);
}

// A rank that arrives late or calls a different collective fails the group for good: tests/mpi/mpi_fault_test.cpp,
// one mpirun job per test.

TEST(Mpi, DdpMatchesOneProcessOnTheWholeBatch) {
  auto pg = world();
  constexpr int kPerRank = 4, kSteps = 3;
  manual_seed(5);
  const Tensor x = randn({2 * kPerRank, 3}, DType::f64), y = randn({2 * kPerRank, 2}, DType::f64);
  auto make = [](uint64_t seed) {
    manual_seed(seed);
    return std::vector<Tensor>{randn({2, 3}, DType::f64).requires_grad_(), randn({2}, DType::f64).requires_grad_()};
  };
  auto train = [&](std::vector<Tensor>& p, const Tensor& xs, const Tensor& ys, DistributedDataParallel* ddp) {
    for (int s = 0; s < kSteps; ++s) {
      for (Tensor& t : p) t.set_grad(Tensor());
      auto forward = [&] { return std::vector<Tensor>{tanh(addmm(p[1], xs, t(p[0])))}; };
      auto out = ddp ? ddp->forward(forward) : forward();
      mse_loss(out[0], ys).backward();
      NoGradGuard no_grad;
      for (Tensor& t : p) t.add_(t.grad(), -0.2);
    }
  };
  std::vector<Tensor> ref = make(1);
  train(ref, x, y, nullptr);
  std::vector<Tensor> mine = make(1 + pg->rank());   // different init: DDP broadcasts rank 0's
  DistributedDataParallel ddp({{"w", mine[0]}, {"b", mine[1]}}, pg, {.print_warnings = false});
  train(mine, x.narrow(0, pg->rank() * kPerRank, kPerRank), y.narrow(0, pg->rank() * kPerRank, kPerRank), &ddp);
  for (size_t i = 0; i < ref.size(); ++i) {
    const auto a = ref[i].to_vector<double>(), b = mine[i].to_vector<double>();
    for (size_t k = 0; k < a.size(); ++k) EXPECT_NEAR(a[k], b[k], 1e-12);
  }
}

// Every golden run whose ranks agree on every collective: under mpirun a rank left waiting for a peer that
// ended cannot be released (MPI has no notion of a peer leaving), so the runs where ranks diverge are the
// thread backend's (repro_golden_test).
TEST(Mpi, GoldenScenariosHaveTheSameOutcomeAsOnThreads) {
  for (const char* file : {"ddp_scenarios.json", "ddp_patterns.json"}) {
    const nlohmann::json golden = app::testing::read_golden(file);
    for (const auto& run : golden["runs"]) {
      if (app::testing::ranks_diverge(run)) continue;
      // Ranks that issue different collectives: MPI cannot cancel one, so the job (all later runs) would end.
      if (!run["error"].is_null() &&
          run["error"]["message"].get<std::string>().find("Detected mismatch between collectives") != std::string::npos)
        continue;
      SCOPED_TRACE(run["id"].get<std::string>());
      app::ReproOptions o = app::testing::options_of(run["options"]);
      o.backend = "mpi";
      const app::ReproResult r = app::run_repro(run["scenario"], run["plan"], o);
      EXPECT_EQ(r.outcome, run["outcome"]);
      EXPECT_EQ(r.replicas_in_sync, run["replicas_in_sync"].get<bool>());
      if (!run["error"].is_null() && r.error) {
        EXPECT_EQ(r.error->raised_at, run["error"]["raised_at"]);
        EXPECT_EQ(r.error->message, run["error"]["message"]);
      }
    }
  }
}

}  // namespace
}  // namespace tinyddp::dist

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  auto pg = tinyddp::dist::mpi_world();
  if (pg->rank() != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  const int failed = RUN_ALL_TESTS() != 0 ? 1 : 0;
  // Every rank exits with the same status: failed anywhere means failed.
  tinyddp::Tensor flag = tinyddp::full({1}, failed, tinyddp::DType::i64);
  pg->allreduce({flag})->wait();
  return flag.item<int64_t>() != 0 ? 1 : 0;
}
