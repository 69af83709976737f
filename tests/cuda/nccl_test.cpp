// The nccl backend on one rank and one GPU (cuda:0): collectives give closed-form values, bad input is refused with
// a message that says what to do, and DDP on cuda:0 gives the gradients of the same model run on the CPU. One rank
// still runs every code path of the backend: the comm stream, the ready/done events, the keep-alive list.
// Every test skips where tinyddp was built without NCCL or the machine has no GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "dist/ddp.h"
#include "dist/nccl_process_group.h"
#include "dist/thread_process_group.h"
#include "engine/tinyddp.h"
#include "tests/dist/tiny_mlp.h"
#include "tests/engine/test_util.h"

namespace tinyddp::dist {
namespace {

using test::error_message;

#define TINYDDP_SKIP_WITHOUT_NCCL_GPU()                                                     \
  do {                                                                                      \
    if (!nccl_available()) GTEST_SKIP() << "tinyddp was built without NCCL (nccl backend)"; \
    if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";                         \
  } while (0)

const Device kGpu = Device::cuda(0);

// A CPU tensor with these values, moved to cuda:0.
Tensor on_gpu(std::vector<double> values, DType dtype = DType::f32) {
  return from_vector(values, {static_cast<int64_t>(values.size())}, dtype).to(kGpu);
}

std::vector<double> values_of(const Tensor& t) { return t.to(Device::cpu()).to(DType::f64).to_vector<double>(); }

TEST(NcclProcessGroup, OneRankCollectives) {
  TINYDDP_SKIP_WITHOUT_NCCL_GPU();
  auto pg = make_nccl_process_group(0, 1, 0, nullptr);
  EXPECT_EQ(pg->backend(), "nccl");
  EXPECT_EQ(pg->rank(), 0);
  EXPECT_EQ(pg->size(), 1);

  // One rank: the sum (and max) over ranks is the tensor itself; two tensors of one dtype in one call.
  Tensor a = on_gpu({1, 2, 3}), b = on_gpu({-4, 5});
  auto work = pg->allreduce({a, b});
  work->wait();
  EXPECT_TRUE(work->is_completed());
  EXPECT_EQ(values_of(a), (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(values_of(b), (std::vector<double>{-4, 5}));
  Tensor c = on_gpu({7, -1}, DType::f64);
  pg->allreduce({c}, ReduceOp::max)->wait();
  EXPECT_EQ(values_of(c), (std::vector<double>{7, -1}));
  Tensor i = on_gpu({3, 9}, DType::i64);
  pg->allreduce({i})->wait();
  EXPECT_EQ(i.to(Device::cpu()).to_vector<int64_t>(), (std::vector<int64_t>{3, 9}));

  Tensor d = on_gpu({0.5, 1.5});
  pg->broadcast({d}, 0)->wait();
  EXPECT_EQ(values_of(d), (std::vector<double>{0.5, 1.5}));

  // outputs[0] = rank 0's input: written in place by NCCL.
  Tensor out = zeros({3}, DType::f32, kGpu);
  pg->allgather({out}, on_gpu({4, 5, 6}))->wait();
  EXPECT_EQ(values_of(out), (std::vector<double>{4, 5, 6}));

  auto barrier = pg->barrier();
  barrier->wait();
  EXPECT_TRUE(barrier->is_completed());
}

// A collective ordered after compute-stream work: the values NCCL reads are the ones the kernel wrote
// (Note [NCCL streams and events]), and many in-flight collectives keep their buffers alive.
TEST(NcclProcessGroup, OrderedAfterComputeStreamAndKeepsBuffersAlive) {
  TINYDDP_SKIP_WITHOUT_NCCL_GPU();
  auto pg = make_nccl_process_group(0, 1, 0, nullptr);
  std::vector<std::shared_ptr<Work>> works;
  std::vector<Tensor> results;
  for (int k = 0; k < 50; ++k) {
    Tensor t = full({1 << 16}, 1.0, DType::f32, kGpu);
    t.mul_(static_cast<double>(k));   // a kernel on the compute stream, just before the collective
    works.push_back(pg->allreduce({t}));
    if (k % 2 == 0) results.push_back(t);   // odd ones: the caller drops its handle while NCCL runs
  }
  for (auto& w : works) w->wait();
  for (size_t j = 0; j < results.size(); ++j) {
    const auto v = values_of(results[j]);
    EXPECT_EQ(v.front(), 2.0 * j);
    EXPECT_EQ(v.back(), 2.0 * j);
  }
}

TEST(NcclProcessGroup, BadInputIsActionable) {
  TINYDDP_SKIP_WITHOUT_NCCL_GPU();
  auto pg = make_nccl_process_group(0, 1, 0, nullptr);
  const std::string cpu = error_message([&] { pg->allreduce({ones({2})}); });
  EXPECT_NE(cpu.find("[Rank 0]"), std::string::npos) << cpu;
  EXPECT_NE(cpu.find("expected tensors on cuda:0, got cpu"), std::string::npos) << cpu;
  EXPECT_NE(cpu.find(".to(Device::cuda(0))"), std::string::npos) << cpu;

  const std::string gather = error_message([&] { pg->allgather({zeros({2}, DType::f32, kGpu)}, ones({2})); });
  EXPECT_NE(gather.find("got cpu"), std::string::npos) << gather;

  const std::string mixed = error_message([&] { pg->allreduce({on_gpu({1}), on_gpu({1}, DType::f64)}); });
  EXPECT_NE(mixed.find("one call reduces one dtype"), std::string::npos) << mixed;

  const std::string strided =
      error_message([&] { pg->allreduce({zeros({2, 3}, DType::f32, kGpu).transpose(0, 1)}); });
  EXPECT_NE(strided.find("not contiguous"), std::string::npos) << strided;

  const std::string count = error_message([&] { pg->allgather({on_gpu({1}), on_gpu({1})}, on_gpu({1})); });
  EXPECT_NE(count.find("one output per rank (1), got 2"), std::string::npos) << count;

  const std::string root = error_message([&] { pg->broadcast({on_gpu({1})}, 1); });
  EXPECT_NE(root.find("root 1 is not a rank"), std::string::npos) << root;

  // The group still works after refused input (nothing was launched).
  Tensor t = on_gpu({2});
  pg->allreduce({t})->wait();
  EXPECT_EQ(values_of(t), (std::vector<double>{2}));
}

TEST(NcclProcessGroup, BadConstructionIsActionable) {
  TINYDDP_SKIP_WITHOUT_NCCL_GPU();
  const int count = cuda_device_count();
  const std::string device = error_message([&] { make_nccl_process_group(0, 1, count, nullptr); });
  EXPECT_NE(device.find("cuda:" + std::to_string(count) + " does not exist"), std::string::npos) << device;
  const std::string bootstrap = error_message([&] { make_nccl_process_group(0, 2, 0, nullptr); });
  EXPECT_NE(bootstrap.find("needs a bootstrap group"), std::string::npos) << bootstrap;
  // A bootstrap group carries the id even for one rank (as mpi_world() does for N).
  auto world = std::make_shared<ThreadWorld>(1);
  auto pg = make_nccl_process_group(0, 1, 0, world->group(0).get());
  Tensor t = on_gpu({5});
  pg->allreduce({t})->wait();
  EXPECT_EQ(values_of(t), (std::vector<double>{5}));
}

// ---- DDP on cuda:0 ----

// The DDP equivalence tests' MLP (tests/dist/tiny_mlp.h), in f32, on any device.
struct Mlp : test::TinyMlp {
  Mlp(uint64_t seed, Device device) : TinyMlp(seed, DType::f32, device) {}
};

double max_abs_diff(const Tensor& a, const Tensor& b) {
  const auto x = values_of(a), y = values_of(b);
  double m = x.size() == y.size() ? 0 : INFINITY;
  for (size_t i = 0; i < std::min(x.size(), y.size()); ++i) m = std::max(m, std::abs(x[i] - y[i]));
  return m;
}

// kSteps of SGD on one rank with DDP over `pg` (its model on `device`), recording each step's gradients and the
// reducer's events.
struct DdpRun {
  std::vector<std::vector<Tensor>> grads;   // [step][param], on the CPU
  std::vector<Tensor> final_params;         // on the CPU
  std::vector<std::string> events;          // the reducer's observable behaviour, step by step
};

DdpRun run_ddp(std::shared_ptr<ProcessGroup> pg, Device device, DDPOptions options) {
  constexpr int kSteps = 4, kBatch = 8;
  manual_seed(7);
  const Tensor x = randn({kBatch, 4}, DType::f32).to(device), y = randn({kBatch, 3}, DType::f32).to(device);
  Mlp m(1, device);
  DdpRun run;
  DistributedDataParallel ddp(m.named(), pg, options);
  ddp.reducer().set_event_observer([&](const ReducerEvent& e) {
    run.events.push_back(std::to_string(static_cast<int>(e.kind)) + ":" + std::to_string(e.index) + ":" + e.detail);
  });
  for (int s = 0; s < kSteps; ++s) {
    m.zero_grad();
    auto out = ddp.forward([&] { return std::vector<Tensor>{m.forward(x)}; });
    mse_loss(out[0], y).backward();
    std::vector<Tensor> g;
    for (const Tensor& p : m.params()) g.push_back(p.grad().to(Device::cpu()).clone());   // a copy: the grad may be a bucket view
    run.grads.push_back(g);
    m.sgd(0.1);
  }
  for (const Tensor& p : m.params()) run.final_params.push_back(p.detach().to(Device::cpu()));
  return run;
}

void expect_nccl_ddp_matches_cpu(DDPOptions options) {
  // Reference: the same DDP run on one thread rank, on the CPU.
  const DdpRun cpu = run_ddp(std::make_shared<ThreadWorld>(1)->group(0), Device::cpu(), options);
  DdpRun gpu;
  try {
    gpu = run_ddp(make_nccl_process_group(0, 1, 0, nullptr), kGpu, options);
  } catch (const Error& e) {
    const std::string what = e.what();
    FAIL() << "DDP on the nccl backend failed: " << what
           << (what.find("got cpu") != std::string::npos
                   ? "\n(a collective got a CPU tensor: some DDP/reducer control tensor, e.g. verify_params_across_"
                     "processes' counts, rebuild_buckets' indices or the local-used map, or a bucket, is not yet "
                     "allocated on the parameters' device)"
                   : "");
  }
  ASSERT_EQ(gpu.grads.size(), cpu.grads.size());
  for (size_t s = 0; s < cpu.grads.size(); ++s)
    for (size_t p = 0; p < cpu.grads[s].size(); ++p)
      EXPECT_LT(max_abs_diff(gpu.grads[s][p], cpu.grads[s][p]), 1e-5) << "step " << s << ", parameter " << p;
  for (size_t p = 0; p < cpu.final_params.size(); ++p)
    EXPECT_LT(max_abs_diff(gpu.final_params[p], cpu.final_params[p]), 1e-5) << "parameter " << p;
  // The reducer does the same on both backends: hooks, buckets launched, rebuilt, finalized, in the same order.
  EXPECT_EQ(gpu.events, cpu.events);
}

TEST(NcclDdp, OneRankMatchesCpu) {
  TINYDDP_SKIP_WITHOUT_NCCL_GPU();
  expect_nccl_ddp_matches_cpu({.print_warnings = false});
}

TEST(NcclDdp, OneRankManyBucketsFindUnused) {
  TINYDDP_SKIP_WITHOUT_NCCL_GPU();
  // Tiny buckets: one per parameter after the rebuild, so several allreduces overlap the backward.
  expect_nccl_ddp_matches_cpu({.bucket_cap_mb = 1e-5, .find_unused_parameters = true, .print_warnings = false});
}

TEST(NcclDdp, OneRankGradientAsBucketView) {
  TINYDDP_SKIP_WITHOUT_NCCL_GPU();
  expect_nccl_ddp_matches_cpu({.gradient_as_bucket_view = true, .print_warnings = false});
}

}  // namespace
}  // namespace tinyddp::dist
