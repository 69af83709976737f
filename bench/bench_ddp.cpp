// bench_ddp: what the DDP reducer costs on top of the communication it has to do, how the bucket cap
// changes a training step, and how close N ranks come to one process on the global batch. 2 ranks on the
// thread backend (--ranks N), or the mpi backend under mpirun.
//
//   ./build/bench/bench_ddp                                            # thread backend, 2 ranks
//   ./build/bench/bench_ddp --ranks 3 --hidden 768 --variants scaling  # one cell of the scaling table
//   export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1   # only as root
//   mpirun --oversubscribe -np 2 ./build/bench/bench_ddp             # mpi backend
//   ... --json out.json                                                # results as JSON (rank 0 writes)
//   ... --trace t.json --iterations 3    # a Chrome trace of every step (docs/tracing.md); under mpirun
//                                        # t.rank<N>.json per rank (join with tinyddp trace-merge). The timings
//                                        # of a traced run include the tracing.
//
// Legend: B = batch per rank (64), I = 784 inputs, H = 400 hidden (--hidden), C = 10 classes, N = ranks.
// Model: Linear(I,H) ReLU, 4 x (Linear(H,H) ReLU), Linear(H,C), cross-entropy: 959,610 float32 parameters
// at H = 400 (3.66 MiB of gradients; H = 192: 0.30M, H = 768: 2.97M) in 12 tensors, none over 1.2 MiB at
// H = 400, so that the bucket caps give different buckets
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
//   bucket view   ddp cap 25 with gradient_as_bucket_view = true: after the copy into its bucket a gradient
//                 is the bucket's view, so the averages are not copied back (one pass over the gradients
//                 fewer; PyTorch's documented option for this).
//   one process   rank 0 alone, forward + backward on the global batch (every rank's B rows, N x B), while
//                 the other ranks wait: what N ranks must beat.
// Every step starts with zero_grad(set_to_none=True) (PyTorch 2.x's default; 1.13's is False).
// reducer overhead = step(ddp cap 25) / step(flat).
// parallel efficiency = throughput of N ranks / throughput of one process on N x B
//                     = (N B / step(ddp cap 25)) / (N B / step(one process)) = step(one process) / step(ddp 25);
// the one process runs on one thread (tinyddp's kernels are single-threaded), so with C cores its ideal is
// min(N, C), not 1: on a quiet 2-core machine 2 ranks could reach 2. --variants scaling times only local, ddp cap 25
// and one process (bench/run_ddp.sh's scaling table).
//
// Check, then time: iterations 1..3 of every variant run first (the buckets are rebuilt at the forward of
// iteration 2); after each, every DDP variant's .grad must equal the flat baseline's exactly (the
// averaging is the same float operations in the same order), max |diff| over ranks and parameters; the one-
// process gradients (the mean over N x B rows) must equal them to rounding (relative max |diff| < 1e-4: the
// same sum in another order).
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
#include <thread>
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

constexpr int64_t kIn = 784, kHiddenLayers = 5, kClasses = 10;
constexpr int64_t kDefaultHidden = 400;                                        // ~1M parameters
constexpr int64_t kBatch = 64;                                                 // per rank
constexpr uint64_t kModelSeed = 0, kDataSeed = 1000;                           // data seed + rank
constexpr double kCapsMb[] = {0.25, 1, 4, 25};                                 // 25: PyTorch's default
constexpr int kCheckIterations = 3;   // iteration 2's forward rebuilds the buckets; 3 runs with them
constexpr int kDefaultTimed = 30;
constexpr double kGlobalTolerance = 1e-4;   // relative: the mean over N x B rows vs the mean of N means

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? NAN : v[v.size() / 2];
}
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

std::shared_ptr<nn::Sequential> make_mlp(int64_t hidden) {
  manual_seed(kModelSeed);   // every variant and every rank: the same initial weights
  auto mlp = std::make_shared<nn::Sequential>();
  for (int64_t l = 0; l < kHiddenLayers; ++l) {
    mlp->push_back(std::make_shared<nn::Linear>(l == 0 ? kIn : hidden, hidden));
    mlp->push_back(std::make_shared<nn::ReLU>());
  }
  mlp->push_back(std::make_shared<nn::Linear>(hidden, kClasses));
  return mlp;
}

struct Variant {
  std::string name;
  double cap_mb = 0;                           // 0: not DDP
  bool communicate = true;                     // false: the `local` floor and `one process`
  bool global = false;                         // one process on the global batch (rank 0 only)
  bool bucket_view = false;                    // DDP with gradient_as_bucket_view
  // PyTorch's defaults: the row the ratios and the parallel efficiency are taken from.
  bool is_default_ddp() const { return cap_mb == 25 && !bucket_view; }
  std::shared_ptr<nn::Sequential> model;
  std::vector<Tensor> params;
  std::unique_ptr<dist::DistributedDataParallel> ddp;
  Tensor flat;                                 // flat: (total numel) f32, allocated once like a bucket
  std::vector<double> fwd_s, bwd_s;            // this rank's timings, one per timed iteration
  std::vector<double> bucket_mb;               // after the rebuild
};

struct Batch {
  Tensor x, y;   // x (B, I) f32, y (B,) int64; the global batch: (N B, I) and (N B,), rank 0's rows first
};
Batch rank_batch(int rank) {
  manual_seed(kDataSeed + rank);
  Tensor x = randn({kBatch, kIn});
  return {x, randint(0, kClasses, {kBatch})};
}

// One training forward + backward (no optimizer step: the weights stay put, so every iteration does the
// same work). Returns {forward seconds, backward seconds}; the flat variant's backward includes pack,
// allreduce and unpack.
std::pair<double, double> step(Variant& v, ProcessGroup& pg, const Batch& batch, const Batch& global) {
  nn::zero_grad_of(v.params, /*set_to_none=*/true);   // PyTorch 2.x's default zero_grad (1.13's: false)
  pg.barrier()->wait();                                // ranks start together
  if (v.global && pg.rank() != 0) return {0.0, 0.0};   // the others idle (at the next step's barrier)
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
      const Batch& b = v.global ? global : batch;
      loss = cross_entropy(v.model->forward(b.x), b.y);
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

// max |a.grad - b.grad| over every parameter, and max |b.grad|.
std::pair<double, double> max_grad_diff(const Variant& a, const Variant& b) {
  double m = 0, scale = 0;
  for (size_t k = 0; k < a.params.size(); ++k) {
    const float* x = a.params[k].grad().data_ptr<float>();
    const float* y = b.params[k].grad().data_ptr<float>();
    for (int64_t i = 0; i < a.params[k].numel(); ++i) {
      m = std::max(m, static_cast<double>(std::abs(x[i] - y[i])));
      scale = std::max(scale, static_cast<double>(std::abs(y[i])));
    }
  }
  return {m, scale};
}

struct Config {
  int64_t hidden = kDefaultHidden;
  int timed = kDefaultTimed;
  bool scaling = false;   // only local, ddp cap 25, one process
};

struct Result {
  std::string backend;
  int ranks = 0;
  int64_t hidden = 0, params = 0;
  int timed = 0;
  double check_max_abs_diff = 0;
  double global_rel_diff = 0;   // one process vs flat, relative to max |grad|
  struct Row {
    std::string name;
    double cap_mb;
    size_t buckets;
    std::vector<double> bucket_mb;
    double fwd_ms, bwd_ms, step_ms, step_min_ms, step_max_ms;
    bool default_ddp;   // Variant::is_default_ddp
  };
  std::vector<Row> rows;
  double efficiency = NAN, efficiency_min = NAN, efficiency_max = NAN;   // over iterations
};

const char* kOneProcess = "one process, N x B";
const char* kBucketView = "ddp 25 MB, bucket view";

Result run_rank(ProcessGroup& pg, std::shared_ptr<ProcessGroup> pg_ptr, const Config& cfg) {
  trace::RankScope trace_rank(pg.rank());   // under --trace, this thread's events belong to this rank
  const int n = pg.size();
  std::vector<Variant> variants;
  variants.push_back({.name = "local (no comm)", .communicate = false});
  variants.push_back({.name = "flat allreduce"});
  for (double cap : kCapsMb) {
    if (cfg.scaling && cap != 25) continue;
    char name[64];
    std::snprintf(name, sizeof name, "ddp cap %g MB%s", cap, cap == 25 ? " (default)" : "");
    variants.push_back({.name = name, .cap_mb = cap});
  }
  if (!cfg.scaling) variants.push_back({.name = kBucketView, .cap_mb = 25, .bucket_view = true});
  variants.push_back({.name = kOneProcess, .communicate = false, .global = true});
  int64_t total = 0;
  for (Variant& v : variants) {
    v.model = make_mlp(cfg.hidden);
    v.params = v.model->parameters();
    total = 0;
    for (const Tensor& p : v.params) total += p.numel();
    if (v.cap_mb > 0) {
      dist::DDPOptions options;
      options.bucket_cap_mb = v.cap_mb;
      options.gradient_as_bucket_view = v.bucket_view;
      v.ddp = std::make_unique<dist::DistributedDataParallel>(v.model->named_parameters(), pg_ptr, options);
    } else if (v.communicate) {
      v.flat = zeros({total}, DType::f32);
    }
  }
  const Batch batch = rank_batch(pg.rank());
  Batch global;
  if (pg.rank() == 0) {   // every rank's rows, in rank order: the concatenated batch DDP must match
    std::vector<Tensor> xs, ys;
    for (int r = 0; r < n; ++r) {
      Batch b = rank_batch(r);
      xs.push_back(b.x);
      ys.push_back(b.y);
    }
    global = {cat(xs, 0), cat(ys, 0)};
  }

  // ---- check (also the warm-up: iteration 2 rebuilds the buckets) ----
  double worst = 0, global_rel = 0;
  const size_t flat = 1, one = variants.size() - 1;
  for (int it = 0; it < kCheckIterations; ++it) {
    for (Variant& v : variants) step(v, pg, batch, global);
    for (size_t k = 2; k < one; ++k) worst = std::max(worst, max_grad_diff(variants[k], variants[flat]).first);
    if (pg.rank() == 0) {
      auto [d, scale] = max_grad_diff(variants[one], variants[flat]);
      global_rel = std::max(global_rel, d / scale);
    }
  }
  worst = max_over_ranks(pg, worst);
  global_rel = max_over_ranks(pg, global_rel);
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
  if (worst != 0 || !(global_rel < kGlobalTolerance))
    return {.check_max_abs_diff = worst, .global_rel_diff = global_rel};   // the caller reports and fails

  // ---- time: round-robin, rotating which variant goes first ----
  const int timed = cfg.timed;
  const size_t nv = variants.size();
  for (int it = 0; it < timed; ++it)
    for (size_t j = 0; j < nv; ++j) {
      Variant& v = variants[(j + it) % nv];
      auto [f, b] = step(v, pg, batch, global);
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
  res.ranks = n;
  res.hidden = cfg.hidden;
  res.params = total;
  res.timed = timed;
  res.check_max_abs_diff = worst;
  res.global_rel_diff = global_rel;
  std::vector<std::vector<double>> steps(nv);
  for (size_t k = 0; k < nv; ++k) {
    std::vector<double> f, b;
    for (int it = 0; it < timed; ++it) {
      f.push_back(a[(k * timed + it) * 2]);
      b.push_back(a[(k * timed + it) * 2 + 1]);
      steps[k].push_back(f.back() + b.back());
    }
    const Variant& v = variants[k];
    const size_t buckets = v.ddp ? v.ddp->reducer().bucket_indices().size() : (v.communicate ? 1 : 0);
    const auto [lo, hi] = std::minmax_element(steps[k].begin(), steps[k].end());
    res.rows.push_back({v.name, v.cap_mb, buckets, v.bucket_mb, median(f) * 1e3, median(b) * 1e3,
                        median(steps[k]) * 1e3, *lo * 1e3, *hi * 1e3, v.is_default_ddp()});
  }
  // Efficiency within each round (the two steps ran back to back), then median (min-max) over rounds.
  std::vector<double> eff;
  for (size_t k = 0; k < nv; ++k)
    if (variants[k].is_default_ddp())
      for (int it = 0; it < timed; ++it) eff.push_back(steps[one][it] / steps[k][it]);
  res.efficiency = median(eff);
  res.efficiency_min = *std::min_element(eff.begin(), eff.end());
  res.efficiency_max = *std::max_element(eff.begin(), eff.end());
  return res;
}

void print(const Result& r) {
  std::printf("\n# DDP step, backend %s, %d ranks: MLP %lld-%lldx%lld-%lld, ReLU (%lld params, %.2f MiB f32), batch %lld "
              "per rank; zero_grad(set_to_none=True) (PyTorch 2.x's default) before every step\n", r.backend.c_str(),
              r.ranks, static_cast<long long>(kIn), static_cast<long long>(r.hidden),
              static_cast<long long>(kHiddenLayers), static_cast<long long>(kClasses), static_cast<long long>(r.params),
              r.params * 4.0 / (1 << 20), static_cast<long long>(kBatch));
  std::printf("# check: every DDP variant's averaged .grad == flat allreduce's, iterations 1-%d: max |diff| = %g; "
              "one process on the %d x %lld batch: max |diff| / max |grad| = %.2g (< %g). All results match. Starting "
              "benchmarks.\n", kCheckIterations, r.check_max_abs_diff, r.ranks, static_cast<long long>(kBatch),
              r.global_rel_diff, kGlobalTolerance);
  std::printf("# medians (min-max) of %d iterations (slowest rank each); bwd includes the communication; ratio = step "
              "/ step(flat)\n", r.timed);
  double flat = NAN, ddp25 = NAN, local = NAN;
  for (const auto& row : r.rows) {
    if (row.name.starts_with("flat")) flat = row.step_ms;
    if (row.name.starts_with("local")) local = row.step_ms;
    if (row.default_ddp) ddp25 = row.step_ms;
  }
  std::printf("%-24s %8s %9s %9s %17s %8s %7s  %s\n", "variant", "fwd(ms)", "bwd(ms)", "step(ms)", "(min-max)",
              "vs flat", "buckets", "bucket sizes (MiB, launch order)");
  for (const auto& row : r.rows) {
    std::string sizes;
    for (double mb : row.bucket_mb) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%s%.2f", sizes.empty() ? "" : " ", mb);
      sizes += buf;
    }
    char range[48];
    std::snprintf(range, sizeof range, "(%.2f-%.2f)", row.step_min_ms, row.step_max_ms);
    std::printf("%-24s %8.2f %9.2f %9.2f %17s %8.3f %7zu  %s\n", row.name.c_str(), row.fwd_ms, row.bwd_ms, row.step_ms,
                range, row.step_ms / flat, row.buckets, sizes.c_str());
  }
  std::printf("# reducer overhead = step(ddp cap 25) / step(flat) = %.3f; communication in the flat step = "
              "step(flat) - step(local) = %.2f ms\n", ddp25 / flat, flat - local);
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  std::printf("# parallel efficiency = throughput of %d ranks / throughput of one process on %d x %lld = step(one "
              "process) / step(ddp cap 25), per round: %.3f (%.3f-%.3f); ideal min(N, cores) = %u with %u cores (the one "
              "process is one thread)\n", r.ranks, r.ranks, static_cast<long long>(kBatch), r.efficiency, r.efficiency_min,
              r.efficiency_max, std::min(static_cast<unsigned>(r.ranks), cores), cores);
  std::fflush(stdout);
}

nlohmann::json to_json(const Result& r) {
  nlohmann::json j = {{"bench", "ddp"}, {"backend", r.backend}, {"ranks", r.ranks}, {"hidden", r.hidden},
                      {"params", r.params}, {"batch_per_rank", kBatch}, {"timed_iterations", r.timed},
                      {"zero_grad", "set_to_none=True"}, {"check_max_abs_diff", r.check_max_abs_diff},
                      {"global_rel_diff", r.global_rel_diff}, {"efficiency", r.efficiency},
                      {"efficiency_min", r.efficiency_min}, {"efficiency_max", r.efficiency_max},
                      {"rows", nlohmann::json::array()}};
  for (const auto& row : r.rows)
    j["rows"].push_back({{"name", row.name}, {"cap_mb", row.cap_mb}, {"buckets", row.buckets},
                         {"bucket_mb", row.bucket_mb}, {"fwd_ms", row.fwd_ms}, {"bwd_ms", row.bwd_ms},
                         {"step_ms", row.step_ms}, {"step_min_ms", row.step_min_ms},
                         {"step_max_ms", row.step_max_ms}});
  return j;
}

}  // namespace
}  // namespace tinyddp::bench

int main(int argc, char** argv) {
  using namespace tinyddp;
  using namespace tinyddp::bench;
  CLI::App app{"DDP reducer overhead, bucket-cap sweep and parallel efficiency: thread backend, or mpi under mpirun"};
  std::string json_path, trace_path, variants = "all";
  Config cfg;
  int ranks = 2;
  app.add_option("--json", json_path, "also write the results as JSON to this file (rank 0)");
  app.add_option("--iterations", cfg.timed, "timed iterations per variant")->check(CLI::Range(1, 10000));
  app.add_option("--ranks", ranks, "thread backend: number of ranks")->check(CLI::Range(1, 64));
  app.add_option("--hidden", cfg.hidden, "hidden width H (192: 0.30M parameters, 400: 0.96M, 768: 2.97M)")
      ->check(CLI::Range(1, 8192));
  app.add_option("--variants", variants, "all, or scaling: only local, ddp cap 25 and one process")
      ->check(CLI::IsMember({"all", "scaling"}));
  app.add_option("--trace", trace_path,
                 "record a Chrome trace of every step in FILE (under mpirun FILE.rank<N>.json); use few --iterations");
  CLI11_PARSE(app, argc, argv);
  cfg.scaling = variants == "scaling";

  std::optional<dist::TraceRecording> recording;
  if (!trace_path.empty())
    recording.emplace(trace_path, dist::launched_by_mpirun() ? "mpi" : "thread",
                      nlohmann::json{{"command", "bench_ddp"}, {"options", "iterations " + std::to_string(cfg.timed)}});
  Result result;
  bool is_root = true;
  if (dist::launched_by_mpirun()) {
    auto pg = dist::mpi_world();
    is_root = pg->rank() == 0;
    result = run_rank(*pg, pg, cfg);
    result.backend = "mpi";
  } else {
    auto errors = dist::ThreadWorld::run(ranks, [&](ProcessGroup& pg) {
      // DDP wants shared ownership; the world owns the group, so a non-owning handle.
      std::shared_ptr<ProcessGroup> handle(&pg, [](ProcessGroup*) {});
      Result mine = run_rank(pg, handle, cfg);
      if (pg.rank() == 0) result = std::move(mine);
    });
    for (auto& e : errors)
      if (e) std::rethrow_exception(e);
    result.backend = "thread";
  }
  if (recording) recording->finish();
  if (result.check_max_abs_diff != 0 || !(result.global_rel_diff < kGlobalTolerance)) {
    if (is_root)
      std::fprintf(stderr, "MISMATCH: DDP's averaged gradients differ from the flat allreduce's by up to %g, or one "
                   "process on the global batch differs by %g relative (tolerance %g)\n", result.check_max_abs_diff,
                   result.global_rel_diff, kGlobalTolerance);
    return 1;
  }
  if (is_root) {
    print(result);
    if (!json_path.empty()) std::ofstream(json_path) << to_json(result).dump(2) << "\n";
  }
  return 0;
}
