// bench_trace: what tracing (base/trace.h) costs. A DDP training step on 2 thread ranks, with tracing
// compiled in, as it always is, but off, against the same step with tracing on.
//
//   ./build/bench/bench_trace --benchmark_enable_random_interleaving=true   # medians of 25 repetitions, then
//                                                          # the on/off table (interleaved: load hits both alike)
//   ./build/bench/bench_trace --trace_out=wide.json        # only the check, writing its traced run of `wide`
//
// Legend: B = 32 rows per rank; cross-entropy over C = 10 classes; SGD lr 0.01. Models (ReLU between layers):
//   small  MLP 64-128-128-10: 26,122 float32 parameters, one bucket. The worst case for tracing: the least
//          compute per recorded event (about 45 events per rank and step).
//   wide   MLP 128-512-512-512-10: 596,490 parameters (2.3 MiB); bucket_cap_mb 1 gives 3 buckets after the
//          rebuild, so bucket 0's allreduce overlaps the rest of the backward (the picture in docs/tracing.md).
// One step on each rank: zero_grad, DDP forward, loss, backward (the reducer averages), SGD step, with the
// spans `tinyddp repro` records around them (iteration, forward, backward, optimizer step). Rank 0 runs on
// the benchmark's thread and is timed; rank 1 runs the same number of steps on a helper thread; the two
// meet in every step's allreduce.
//
// Check, then time: two copies of each model from the same seeds run 3 steps (the buckets are rebuilt at
// step 2's forward), one with tracing off and one on. Their parameters must be bitwise equal on both ranks,
// and the traced run must hold, per rank and step, one hook per parameter, one launch and one completed
// allreduce per bucket, and one finalize.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "dist/comm_trace.h"
#include "dist/ddp.h"
#include "dist/thread_process_group.h"
#include "dist/trace_file.h"
#include "engine/tinyddp.h"
#include "models/nn/nn.h"
#include "models/optim/sgd.h"

namespace tinyddp::bench {
namespace {

constexpr int kRanks = 2;
constexpr int64_t kBatch = 32, kClasses = 10;
constexpr uint64_t kModelSeed = 0, kDataSeed = 1000;   // data: seed + rank
constexpr int kCheckSteps = 3;

struct Config {
  const char* name;
  std::vector<int64_t> widths;   // input, hidden..., classes
  double bucket_cap_mb;
};
const Config kSmall{"small", {64, 128, 128, kClasses}, 25};
const Config kWide{"wide", {128, 512, 512, 512, kClasses}, 1};

// Both ranks of one model: each rank's replica, DDP, optimizer and batch.
class Rig {
 public:
  explicit Rig(const Config& config) : world_(std::make_shared<dist::ThreadWorld>(kRanks)) {
    ranks_.resize(kRanks);
    // DDP construction has collectives: every rank constructs on its own thread.
    std::thread other([&] { init(1, config); });
    init(0, config);
    other.join();
  }

  void step(int r) {
    Rank& k = ranks_[r];
    ++k.iteration;
    auto it = trace::span([&] { return trace::What{"iteration", "iteration", {{"iteration", k.iteration}}}; });
    k.sgd->zero_grad();
    Tensor loss;
    {
      auto s = trace::span([] { return trace::What{"call", "forward", {}}; });
      auto out = k.ddp->forward([&] { return std::vector<Tensor>{k.model->forward(k.x)}; });
      loss = cross_entropy(out[0], k.y);
    }
    {
      auto s = trace::span([] { return trace::What{"call", "backward", {}}; });
      loss.backward();
    }
    auto s = trace::span([] { return trace::What{"call", "optimizer step", {}}; });
    k.sgd->step();
  }

  // n steps on every rank; rank 0 on this thread.
  void run(int n) {
    std::thread other([&] {
      trace::RankScope scope(1);
      for (int i = 0; i < n; ++i) step(1);
    });
    trace::RankScope scope(0);
    for (int i = 0; i < n; ++i) step(0);
    other.join();
  }

  const std::vector<Tensor>& params(int r) const { return ranks_[r].params; }
  size_t buckets() const { return ranks_[0].ddp->reducer().bucket_indices().size(); }

 private:
  struct Rank {
    std::shared_ptr<nn::Sequential> model;
    std::vector<Tensor> params;
    std::unique_ptr<dist::DistributedDataParallel> ddp;
    std::unique_ptr<optim::SGD> sgd;
    Tensor x, y;   // x (B, input) f32, y (B,) int64
    int64_t iteration = 0;
  };

  void init(int r, const Config& c) {
    trace::RankScope scope(r);
    Rank& k = ranks_[r];
    manual_seed(kModelSeed);   // the RNG is per thread
    k.model = std::make_shared<nn::Sequential>();
    for (size_t l = 0; l + 1 < c.widths.size(); ++l) {
      if (l > 0) k.model->push_back(std::make_shared<nn::ReLU>());
      k.model->push_back(std::make_shared<nn::Linear>(c.widths[l], c.widths[l + 1]));
    }
    k.params = k.model->parameters();
    dist::DDPOptions options;
    options.bucket_cap_mb = c.bucket_cap_mb;
    k.ddp = std::make_unique<dist::DistributedDataParallel>(k.model->named_parameters(), world_->group(r), options);
    k.sgd = std::make_unique<optim::SGD>(k.params, optim::SGDOptions{.lr = 0.01});
    manual_seed(kDataSeed + r);
    k.x = randn({kBatch, c.widths.front()});
    k.y = randint(0, kClasses, {kBatch});
  }

  std::shared_ptr<dist::ThreadWorld> world_;
  std::vector<Rank> ranks_;
};

Rig& rig_for(const Config& c) {
  static std::map<std::string, std::unique_ptr<Rig>> rigs;
  auto& rig = rigs[c.name];
  if (!rig) rig = std::make_unique<Rig>(c);
  return *rig;
}

// ---- check ----
bool bitwise_equal(const Tensor& a, const Tensor& b) {
  return a.numel() == b.numel() && std::memcmp(a.raw_data(), b.raw_data(), a.numel() * sizeof(float)) == 0;
}

bool check(const Config& c, const std::string& trace_out) {
  Rig off(c), on(c);
  trace::stop();
  off.run(kCheckSteps);
  trace::start();
  on.run(kCheckSteps);
  trace::stop();
  const std::vector<trace::Event> events = trace::snapshot();
  bool ok = true;
  for (int r = 0; r < kRanks; ++r)
    for (size_t p = 0; p < off.params(r).size(); ++p)
      if (!bitwise_equal(off.params(r)[p], on.params(r)[p])) {
        std::printf("MISMATCH %s: rank %d parameter %zu differs with tracing on\n", c.name, r, p);
        ok = false;
      }
  // Expected per rank: a hook per parameter and a finalize per step; one launch and one allreduce per bucket
  // per step (1 bucket at step 1, on.buckets() after the rebuild).
  const int64_t np = static_cast<int64_t>(on.params(0).size()), nb = static_cast<int64_t>(on.buckets());
  for (int r = 0; r < kRanks; ++r) {
    std::map<std::string, int64_t> n;
    for (const trace::Event& e : events) {
      if (e.pid != r) continue;
      if (e.what.category == "hook") ++n["hooks"];
      if (e.what.name == "finalize") ++n["finalize"];
      if (e.what.name.starts_with("launch bucket")) ++n["launches"];
      if (e.phase == 'X' && e.tid == trace::kCommTrack && e.what.name.starts_with("allreduce bucket")) ++n["allreduces"];
    }
    const std::map<std::string, int64_t> want = {{"hooks", np * kCheckSteps},
                                                 {"finalize", kCheckSteps},
                                                 {"launches", 1 + nb * (kCheckSteps - 1)},
                                                 {"allreduces", 1 + nb * (kCheckSteps - 1)}};
    for (const auto& [what, count] : want)
      if (n[what] != count) {
        std::printf("MISMATCH %s: rank %d recorded %lld %s, expected %lld\n", c.name, r,
                    static_cast<long long>(n[what]), what.c_str(), static_cast<long long>(count));
        ok = false;
      }
  }
  std::printf("check %-5s: %zu parameters, %zu bucket(s) after the rebuild, %zu events in %d traced steps: %s\n",
              c.name, on.params(0).size(), on.buckets(), events.size(), kCheckSteps,
              ok ? "parameters bitwise equal, events as expected" : "FAILED");
  if (ok && !trace_out.empty() && std::string(c.name) == "wide") {
    std::ofstream f(trace_out);
    f << dist::chrome_trace(events, {{"scenario", "bench_trace wide MLP 128-512-512-512-10"},
                                    {"plan", "forward; backward; step (3 steps, bucket_cap_mb 1)"},
                                    {"backend", "thread"}})
             .dump()
      << "\n";
    std::printf("wrote %s\n", trace_out.c_str());
  }
  return ok;
}

// ---- time ----
void BM_DdpStep(benchmark::State& state, const Config* c, bool traced) {
  Rig& rig = rig_for(*c);
  rig.run(2);   // warm: the rebuild, the allocator
  if (traced) trace::start();
  const int64_t n = state.max_iterations;
  std::thread other([&] {
    trace::RankScope scope(1);
    for (int64_t i = 0; i < n; ++i) rig.step(1);
  });
  {
    trace::RankScope scope(0);
    for (auto _ : state) rig.step(0);
  }
  other.join();
  trace::stop();
  if (traced) state.counters["events/step"] = static_cast<double>(trace::snapshot().size()) / (n * kRanks);
  trace::start();   // frees the events
  trace::stop();
}

// One trace site alone, off and on: a span like the engine's per-node span (name, category, one argument).
void BM_Site(benchmark::State& state, bool traced) {
  const std::string node = "AddmmBackward0";
  int64_t seq = 0;
  if (traced) trace::start();
  for (auto _ : state) {
    auto s = trace::span([&] { return trace::What{"autograd", node, {{"seq", seq}}}; });
    benchmark::DoNotOptimize(++seq);
  }
  trace::start();   // frees the events
  trace::stop();
}

// The same loop without the site: what the loop itself costs.
void BM_NoSite(benchmark::State& state) {
  int64_t seq = 0;
  for (auto _ : state) benchmark::DoNotOptimize(++seq);
}

// Prints Google Benchmark's table, then the medians side by side.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& run : runs)
      if (run.run_type == Run::RT_Aggregate && run.aggregate_name == "median") {
        medians_[run.run_name.function_name] = run.GetAdjustedRealTime();
        cpu_medians_[run.run_name.function_name] = run.GetAdjustedCPUTime();
        if (auto it = run.counters.find("events/step"); it != run.counters.end())
          events_per_step_[run.run_name.function_name] = it->second;
      }
  }
  void Finalize() override {
    ConsoleReporter::Finalize();
    // Real time is the step as rank 0 lives it (waits for rank 1 included); CPU time is rank 0's thread only,
    // less disturbed by other processes on a shared machine.
    std::printf("\n%-28s %14s %14s %8s\n", "median of the repetitions", "tracing off", "tracing on", "on/off");
    for (const char* what : {"ddp_step/small", "ddp_step/wide", "one_site"})
      for (auto* table : {&medians_, &cpu_medians_}) {
        const std::string base = what;
        const double off = (*table)[base + "/trace_off"], on = (*table)[base + "/trace_on"];
        const std::string name = base + (table == &medians_ ? ", real" : ", cpu");
        const char* unit = base == "one_site" ? "ns" : "us";
        if (off > 0 && on > 0) std::printf("%-28s %11.1f %s %11.1f %s %8.3f\n", name.c_str(), off, unit, on, unit, on / off);
      }
    // Off, a step pays one site per event it would record. An upper bound from the site alone, its loop included
    // (the loop without the site: one_site/no_site).
    const double site_ns = cpu_medians_["one_site/trace_off"], loop_ns = cpu_medians_["one_site/no_site"];
    const double events = events_per_step_["ddp_step/small/trace_on"], step_us = cpu_medians_["ddp_step/small/trace_off"];
    if (events > 0 && step_us > 0)
      std::printf("tracing off, small step: %.0f sites x at most %.2f ns (the loop alone: %.2f ns) = at most %.0f ns per "
                  "rank and step, %.4f%% of its %.0f us\n",
                  events, site_ns, loop_ns, events * site_ns, 100 * events * site_ns / (step_us * 1000), step_us);
  }

 private:
  std::map<std::string, double> medians_, cpu_medians_, events_per_step_;
};

}  // namespace
}  // namespace tinyddp::bench

int main(int argc, char** argv) {
  using namespace tinyddp::bench;
  std::string trace_out;
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::strncmp(argv[i], "--trace_out=", 12) == 0) trace_out = argv[i] + 12;
    else args.push_back(argv[i]);
  }
  int n = static_cast<int>(args.size());
  benchmark::Initialize(&n, args.data());
  const bool ok = check(kSmall, trace_out) & check(kWide, trace_out);
  if (!ok) return 1;
  if (!trace_out.empty()) return 0;   // the trace for the docs only
  std::printf("All results match. Starting benchmarks.\n");
  for (const Config* c : {&kSmall, &kWide})
    for (bool traced : {false, true})
      benchmark::RegisterBenchmark((std::string("ddp_step/") + c->name + (traced ? "/trace_on" : "/trace_off")).c_str(),
                                   BM_DdpStep, c, traced)
          ->Unit(benchmark::kMicrosecond)
          ->MinTime(c == &kSmall ? 0.1 : 0.3)
          ->Repetitions(25)
          ->ReportAggregatesOnly(true)
          ->UseRealTime();
  benchmark::RegisterBenchmark("one_site/no_site", BM_NoSite)->Unit(benchmark::kNanosecond)->Repetitions(25)->ReportAggregatesOnly(true);
  for (bool traced : {false, true})
    benchmark::RegisterBenchmark(traced ? "one_site/trace_on" : "one_site/trace_off", BM_Site, traced)
        ->Unit(benchmark::kNanosecond)
        ->Repetitions(25)
        ->ReportAggregatesOnly(true);
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}
