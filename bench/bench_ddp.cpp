// bench_ddp: what the DDP reducer costs on top of the communication it has to do, and how the bucket cap
// changes a training step. 2 ranks on the thread backend, or the mpi backend under mpirun.
//
//   ./build/bench/bench_ddp                                            # thread backend, 2 ranks
//   export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1   # only as root
//   mpirun --oversubscribe -np 2 ./build/bench/bench_ddp             # mpi backend
//   ... --json out.json                                                # results as JSON (rank 0 writes)
//   ... --trace t.json --iterations 3    # a Chrome trace of every step (docs/tracing.md); under mpirun
//                                        # t.rank<N>.json per rank (join with tinyddp trace-merge). The timings
//                                        # of a traced run include the tracing.
//
// Legend: B = batch per rank (64), I = 784 inputs, H = 400 hidden, C = 10 classes.
// Model: Linear(I,H) ReLU, 4 x (Linear(H,H) ReLU), Linear(H,C), cross-entropy: 959,610 float32 parameters
// (3.66 MiB of gradients) in 12 tensors, none over 1.2 MiB, so that the bucket caps give different buckets
// (with 784-1024-256-10, two weights hold 99% of the parameters and every cap from 0.25 to 25 MB gives the
// same 2 buckets). Each rank has its own batch; every variant has its own copy of the same model.
//
// Variants, all on the same ProcessGroup, timed round-robin in one loop (so machine noise hits them alike):
//   local         forward + backward, no communication at all (the compute floor)
//   flat          forward + backward, then ONE allreduce of all gradients packed into one flat buffer
//                 (scaled by 1/n while packing, unpacked into .grad afterwards): the baseline
//   ddp cap X     forward through DistributedDataParallel{bucket_cap_mb = X} + backward: the reducer copies
//                 each ready gradient into its bucket, allreduces buckets in order during the backward and
//                 copies the averages back in the engine's final callback. X = 25 is PyTorch's default.
// reducer overhead = step(ddp cap 25) / step(flat).
//
// Check, then time: iterations 1..3 of every variant run first (the buckets are rebuilt at the forward of
// iteration 2); after each, every DDP variant's .grad must equal the flat baseline's exactly (the
// averaging is the same float operations in the same order), max |diff| over ranks and parameters.
// Timing: kTimed iterations; per iteration and variant, forward and backward times of the slowest rank;
// the tables show medians.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dist/comm_trace.h"
#include "dist/ddp.h"
#include "dist/mpi_process_group.h"
#include "dist/thread_process_group.h"
#include "dist/trace_file.h"
#include "engine/tinyddp.h"
#include "models/nn/nn.h"

namespace tinyddp::bench {
namespace {

using Clock = std::chrono::steady_clock;
using dist::ProcessGroup;

constexpr int64_t kIn = 784, kHidden = 400, kHiddenLayers = 5, kClasses = 10;   // ~1M parameters
constexpr int64_t kBatch = 64;                                                 // per rank
constexpr uint64_t kModelSeed = 0, kDataSeed = 1000;                           // data seed + rank
constexpr double kCapsMb[] = {0.25, 1, 4, 25};                                 // 25: PyTorch's default
constexpr int kCheckIterations = 3;   // iteration 2's forward rebuilds the buckets; 3 runs with them
constexpr int kDefaultTimed = 30;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? NAN : v[v.size() / 2];
}
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

std::shared_ptr<nn::Sequential> make_mlp() {
  manual_seed(kModelSeed);   // every variant and every rank: the same initial weights
  auto mlp = std::make_shared<nn::Sequential>();
  for (int64_t l = 0; l < kHiddenLayers; ++l) {
    mlp->push_back(std::make_shared<nn::Linear>(l == 0 ? kIn : kHidden, kHidden));
    mlp->push_back(std::make_shared<nn::ReLU>());
  }
  mlp->push_back(std::make_shared<nn::Linear>(kHidden, kClasses));
  return mlp;
}

struct Variant {
  std::string name;
  double cap_mb = 0;                           // 0: not DDP
  bool communicate = true;                     // false: the `local` floor
  std::shared_ptr<nn::Sequential> model;
  std::vector<Tensor> params;
  std::unique_ptr<dist::DistributedDataParallel> ddp;
  Tensor flat;                                 // flat: (total numel) f32, allocated once like a bucket
  std::vector<double> fwd_s, bwd_s;            // this rank's timings, one per timed iteration
  std::vector<double> bucket_mb;               // after the rebuild
};

struct Batch {
  Tensor x, y;   // x (B, I) f32, y (B,) int64
};

// One training forward + backward (no optimizer step: the weights stay put, so every iteration does the
// same work). Returns {forward seconds, backward seconds}; the flat variant's backward includes pack,
// allreduce and unpack.
std::pair<double, double> step(Variant& v, ProcessGroup& pg, const Batch& batch) {
  nn::zero_grad_of(v.params, /*set_to_none=*/false);   // PyTorch 1.13's default zero_grad
  pg.barrier()->wait();                                 // ranks start together
  // Under --trace: one iteration span per step of any variant, numbered from 1 across the run (trace-view
  // --iteration K), named after the variant.
  static thread_local int64_t traced_steps = 0;
  auto iteration_span = trace::span([&] {
    return trace::What{"iteration", v.name, {{"iteration", ++traced_steps}, {"variant", v.name}}};
  });
  const auto t0 = Clock::now();
  Tensor loss;
  {
    auto forward_span = trace::span([] { return trace::What{"call", "forward", {}}; });
    if (v.ddp) {
      auto out = v.ddp->forward([&] { return std::vector<Tensor>{v.model->forward(batch.x)}; });
      loss = cross_entropy(out[0], batch.y);
    } else {
      loss = cross_entropy(v.model->forward(batch.x), batch.y);
    }
  }
  const double fwd = seconds_since(t0);
  const auto t1 = Clock::now();
  auto backward_span = trace::span([] { return trace::What{"call", "backward", {}}; });
  loss.backward();
  if (!v.ddp && v.communicate) {
    const float scale = 1.0f / static_cast<float>(pg.size());
    float* dst = v.flat.data_ptr<float>();
    for (const Tensor& p : v.params) {   // pack, dividing by the world size as the reducer does
      const float* src = p.grad().data_ptr<float>();
      for (int64_t i = 0, n = p.numel(); i < n; ++i) dst[i] = src[i] * scale;
      dst += p.numel();
    }
    pg.allreduce({v.flat})->wait();
    const float* src = v.flat.data_ptr<float>();
    for (const Tensor& p : v.params) {   // unpack
      std::memcpy(p.grad().raw_data(), src, p.numel() * sizeof(float));
      src += p.numel();
    }
  }
  return {fwd, seconds_since(t1)};
}

double max_over_ranks(ProcessGroup& pg, double value) {
  Tensor t = full({1}, value, DType::f64);
  pg.allreduce({t}, dist::ReduceOp::max)->wait();
  return t.item<double>();
}

// max |a.grad - b.grad| over every parameter.
double max_grad_diff(const Variant& a, const Variant& b) {
  double m = 0;
  for (size_t k = 0; k < a.params.size(); ++k) {
    const float* x = a.params[k].grad().data_ptr<float>();
    const float* y = b.params[k].grad().data_ptr<float>();
    for (int64_t i = 0; i < a.params[k].numel(); ++i) m = std::max(m, static_cast<double>(std::abs(x[i] - y[i])));
  }
  return m;
}

struct Result {
  std::string backend;
  int ranks = 0;
  int64_t params = 0;
  int timed = 0;
  double check_max_abs_diff = 0;
  struct Row {
    std::string name;
    double cap_mb;
    size_t buckets;
    std::vector<double> bucket_mb;
    double fwd_ms, bwd_ms, step_ms;
  };
  std::vector<Row> rows;
};

Result run_rank(ProcessGroup& pg, std::shared_ptr<ProcessGroup> pg_ptr, int timed) {
  trace::RankScope trace_rank(pg.rank());   // under --trace, this thread's events belong to this rank
  std::vector<Variant> variants;
  variants.push_back({.name = "local (no comm)", .communicate = false});
  variants.push_back({.name = "flat allreduce"});
  for (double cap : kCapsMb) {
    char name[64];
    std::snprintf(name, sizeof name, "ddp cap %g MB%s", cap, cap == 25 ? " (default)" : "");
    variants.push_back({.name = name, .cap_mb = cap});
  }
  int64_t total = 0;
  for (Variant& v : variants) {
    v.model = make_mlp();
    v.params = v.model->parameters();
    total = 0;
    for (const Tensor& p : v.params) total += p.numel();
    if (v.cap_mb > 0) {
      dist::DDPOptions options;
      options.bucket_cap_mb = v.cap_mb;
      v.ddp = std::make_unique<dist::DistributedDataParallel>(v.model->named_parameters(), pg_ptr, options);
    } else if (v.communicate) {
      v.flat = zeros({total}, DType::f32);
    }
  }
  manual_seed(kDataSeed + pg.rank());
  const Batch batch{randn({kBatch, kIn}), randint(0, kClasses, {kBatch})};

  // ---- check (also the warm-up: iteration 2 rebuilds the buckets) ----
  double worst = 0;
  for (int it = 0; it < kCheckIterations; ++it) {
    for (Variant& v : variants) step(v, pg, batch);
    for (size_t k = 2; k < variants.size(); ++k) worst = std::max(worst, max_grad_diff(variants[k], variants[1]));
  }
  worst = max_over_ranks(pg, worst);
  for (Variant& v : variants) {
    if (!v.ddp) {
      v.bucket_mb = {v.communicate ? total * 4.0 / (1 << 20) : 0.0};
      continue;
    }
    for (const auto& bucket : v.ddp->reducer().bucket_indices()) {
      int64_t numel = 0;
      for (size_t i : bucket) numel += v.params[i].numel();   // DDP keeps the model's parameter order
      v.bucket_mb.push_back(numel * 4.0 / (1 << 20));
    }
  }
  if (worst != 0) return {.check_max_abs_diff = worst};   // the caller reports and fails

  // ---- time: round-robin, rotating which variant goes first ----
  const size_t nv = variants.size();
  for (int it = 0; it < timed; ++it)
    for (size_t j = 0; j < nv; ++j) {
      Variant& v = variants[(j + it) % nv];
      auto [f, b] = step(v, pg, batch);
      v.fwd_s.push_back(f);
      v.bwd_s.push_back(b);
    }
  // The slowest rank per iteration, for every timing at once.
  Tensor all = zeros({static_cast<int64_t>(nv * timed * 2)}, DType::f64);
  double* a = all.data_ptr<double>();
  for (size_t k = 0; k < nv; ++k)
    for (int it = 0; it < timed; ++it) {
      a[(k * timed + it) * 2] = variants[k].fwd_s[it];
      a[(k * timed + it) * 2 + 1] = variants[k].bwd_s[it];
    }
  pg.allreduce({all}, dist::ReduceOp::max)->wait();

  Result res;
  res.ranks = pg.size();
  res.params = total;
  res.timed = timed;
  res.check_max_abs_diff = worst;
  for (size_t k = 0; k < nv; ++k) {
    std::vector<double> f, b, s;
    for (int it = 0; it < timed; ++it) {
      f.push_back(a[(k * timed + it) * 2]);
      b.push_back(a[(k * timed + it) * 2 + 1]);
      s.push_back(f.back() + b.back());
    }
    const Variant& v = variants[k];
    const size_t buckets = v.ddp ? v.ddp->reducer().bucket_indices().size() : (v.communicate ? 1 : 0);
    res.rows.push_back({v.name, v.cap_mb, buckets, v.bucket_mb, median(f) * 1e3, median(b) * 1e3, median(s) * 1e3});
  }
  return res;
}

void print(const Result& r) {
  std::printf("\n# DDP step, backend %s, %d ranks: MLP %lld-%lldx%lld-%lld, ReLU (%lld params, %.2f MiB f32), batch %lld "
              "per rank\n", r.backend.c_str(), r.ranks, static_cast<long long>(kIn), static_cast<long long>(kHidden),
              static_cast<long long>(kHiddenLayers), static_cast<long long>(kClasses), static_cast<long long>(r.params),
              r.params * 4.0 / (1 << 20), static_cast<long long>(kBatch));
  std::printf("# check: every DDP variant's averaged .grad == flat allreduce's, iterations 1-%d: max |diff| = %g. "
              "All results match. Starting benchmarks.\n", kCheckIterations, r.check_max_abs_diff);
  std::printf("# medians of %d iterations (slowest rank each); bwd includes the communication; ratio = step / step(flat)\n",
              r.timed);
  double flat = NAN, ddp25 = NAN, local = NAN;
  for (const auto& row : r.rows) {
    if (row.name.starts_with("flat")) flat = row.step_ms;
    if (row.name.starts_with("local")) local = row.step_ms;
    if (row.cap_mb == 25) ddp25 = row.step_ms;
  }
  std::printf("%-24s %8s %9s %9s %10s %7s  %s\n", "variant", "fwd(ms)", "bwd(ms)", "step(ms)", "vs flat", "buckets",
              "bucket sizes (MiB, launch order)");
  for (const auto& row : r.rows) {
    std::string sizes;
    for (double mb : row.bucket_mb) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%s%.2f", sizes.empty() ? "" : " ", mb);
      sizes += buf;
    }
    std::printf("%-24s %8.2f %9.2f %9.2f %10.3f %7zu  %s\n", row.name.c_str(), row.fwd_ms, row.bwd_ms, row.step_ms,
                row.step_ms / flat, row.buckets, sizes.c_str());
  }
  std::printf("# reducer overhead = step(ddp cap 25) / step(flat) = %.3f; communication in the flat step = "
              "step(flat) - step(local) = %.2f ms\n", ddp25 / flat, flat - local);
  std::fflush(stdout);
}

nlohmann::json to_json(const Result& r) {
  nlohmann::json j = {{"bench", "ddp"}, {"backend", r.backend}, {"ranks", r.ranks}, {"params", r.params},
                      {"batch_per_rank", kBatch}, {"timed_iterations", r.timed},
                      {"check_max_abs_diff", r.check_max_abs_diff}, {"rows", nlohmann::json::array()}};
  for (const auto& row : r.rows)
    j["rows"].push_back({{"name", row.name}, {"cap_mb", row.cap_mb}, {"buckets", row.buckets},
                         {"bucket_mb", row.bucket_mb}, {"fwd_ms", row.fwd_ms}, {"bwd_ms", row.bwd_ms},
                         {"step_ms", row.step_ms}});
  return j;
}

}  // namespace
}  // namespace tinyddp::bench

int main(int argc, char** argv) {
  using namespace tinyddp;
  using namespace tinyddp::bench;
  CLI::App app{"DDP reducer overhead and bucket-cap sweep: thread backend (2 ranks), or mpi under mpirun"};
  std::string json_path, trace_path;
  int timed = kDefaultTimed;
  app.add_option("--json", json_path, "also write the results as JSON to this file (rank 0)");
  app.add_option("--iterations", timed, "timed iterations per variant")->check(CLI::Range(1, 10000));
  app.add_option("--trace", trace_path,
                 "record a Chrome trace of every step in FILE (under mpirun FILE.rank<N>.json); use few --iterations");
  CLI11_PARSE(app, argc, argv);

  std::optional<dist::TraceRecording> recording;
  if (!trace_path.empty())
    recording.emplace(trace_path, dist::launched_by_mpirun() ? "mpi" : "thread",
                      nlohmann::json{{"command", "bench_ddp"}, {"options", "iterations " + std::to_string(timed)}});
  Result result;
  bool is_root = true;
  if (dist::launched_by_mpirun()) {
    auto pg = dist::mpi_world();
    is_root = pg->rank() == 0;
    result = run_rank(*pg, pg, timed);
    result.backend = "mpi";
  } else {
    auto errors = dist::ThreadWorld::run(2, [&](ProcessGroup& pg) {
      // DDP wants shared ownership; the world owns the group, so a non-owning handle.
      std::shared_ptr<ProcessGroup> handle(&pg, [](ProcessGroup*) {});
      Result mine = run_rank(pg, handle, timed);
      if (pg.rank() == 0) result = std::move(mine);
    });
    for (auto& e : errors)
      if (e) std::rethrow_exception(e);
    result.backend = "thread";
  }
  if (recording) recording->finish();
  if (result.check_max_abs_diff != 0) {
    if (is_root)
      std::fprintf(stderr, "MISMATCH: DDP's averaged gradients differ from the flat allreduce's by up to %g\n",
                   result.check_max_abs_diff);
    return 1;
  }
  if (is_root) {
    print(result);
    if (!json_path.empty()) std::ofstream(json_path) << to_json(result).dump(2) << "\n";
  }
  return 0;
}
