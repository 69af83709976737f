// bench_gpu: a training step of an MLP on the GPU against the same step on the CPU, and (with NCCL) the
// latency of a 1-rank allreduce on the GPU against a device copy of the same bytes. Prints tables; --json writes them too. Without a CUDA device
// it says so and exits 0 (bench/gpu_check.sh runs it on a machine with one).
//
//   ./build/bench/bench_gpu [--json out.json]
//
// Legend: B = batch, D = features. A step = zero_grad + forward + cross-entropy + backward + SGD update,
// float32. Check, then time: three steps on each device from the same initial weights must give the same
// losses (to 1e-4 relative: float32, different summation orders), then kSteps timed steps after kWarmup,
// each step closed by a device synchronize; the table shows the median step. "ddp ms" is the same GPU step
// inside DistributedDataParallel over a 1-rank nccl group (checked: the same losses as the plain GPU step);
// one rank moves no data, so ddp/gpu is the reducer's own cost on the GPU: autograd hooks, copying each
// gradient into its bucket while dividing, the allreduce calls and events, copying the buckets back.
//
// Allreduce (nccl backend, 1 rank, cuda:0), nccl-tests' columns: S = bytes, time = median of kReps
// repetitions of `iters` back-to-back allreduce+wait closed by a synchronize, algbw = S / time. With one rank
// busbw = algbw * 2(n-1)/n = 0, and an in-place allreduce on one rank moves no data (measured: the same
// ~3.6 us from 4 B to 64 MiB), so the time is the cost of a collective call (enqueue, events, completion
// wait) and algbw is not a bandwidth; "copy us" is a D2D copy of S bytes (Tensor::copy_) timed the same way,
// the floor any real reduction of S bytes would add. Check first: the buffer holds 1..count and must come back unchanged.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "dist/ddp.h"
#include "dist/nccl_process_group.h"
#include "engine/tinyddp.h"
#include "models/nn/nn.h"

namespace tinyddp::bench {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kWarmup = 3;
constexpr int kSteps = 21;   // odd: the median is one measured step

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct MlpShape {
  const char* name;
  int64_t batch, in, hidden, classes;
  double flops_per_step() const {   // 2 flops per multiply-add; backward is twice the forward's GEMMs
    return 3.0 * 2.0 * batch * (in * hidden + hidden * classes);
  }
};

struct StepTimes {
  double cpu_ms = 0, gpu_ms = 0, ddp_ms = 0;   // ddp_ms stays 0 without NCCL
  bool checked = false;
};

// Builds the MLP on `device` (same weights for every device: drawn on the host from one seed).
struct Trainer {
  nn::Sequential model;
  optim::SGD opt;
  Tensor x, y;
  Device device;
  std::unique_ptr<dist::DistributedDataParallel> ddp;   // set: the step runs inside DDP
  Trainer(const MlpShape& s, Device d, std::shared_ptr<dist::ProcessGroup> pg = nullptr)
      : model(make_model(s)), opt(model.parameters(), {.lr = 0.01}), device(d) {
    model.to(d);
    manual_seed(2);
    x = randn({s.batch, s.in}).to(d);
    y = randint(0, s.classes, {s.batch}).to(d);
    if (pg) ddp = std::make_unique<dist::DistributedDataParallel>(model.named_parameters(), pg);
  }
  static nn::Sequential make_model(const MlpShape& s) {
    manual_seed(1);
    return nn::Sequential(nn::Linear(s.in, s.hidden), nn::ReLU(), nn::Linear(s.hidden, s.classes));
  }
  Tensor step() {
    opt.zero_grad();
    const Tensor logits = ddp ? ddp->forward([&] { return std::vector<Tensor>{model(x)}; })[0] : model(x);
    Tensor loss = cross_entropy(logits, y);
    loss.backward();
    opt.step();
    return loss;
  }
  double timed_step_ms() {
    const auto t0 = Clock::now();
    step();
    synchronize(device);
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  }
};

StepTimes time_mlp(const MlpShape& s) {
  StepTimes r;
  Trainer cpu(s, Device::cpu()), gpu(s, Device::cuda(0));
  r.checked = true;
  for (int i = 0; i < 3; ++i) {
    const double lc = cpu.step().item(), lg = gpu.step().item();
    if (!(std::abs(lc - lg) <= 1e-4 * std::abs(lc))) {
      std::printf("  CHECK FAILED %s step %d: loss cpu %.8g vs gpu %.8g\n", s.name, i, lc, lg);
      r.checked = false;
    }
  }
  std::vector<double> tc, tg;
  for (int i = 0; i < kWarmup; ++i) cpu.timed_step_ms(), gpu.timed_step_ms();
  for (int i = 0; i < kSteps; ++i) tc.push_back(cpu.timed_step_ms());
  for (int i = 0; i < kSteps; ++i) tg.push_back(gpu.timed_step_ms());
  r.cpu_ms = median(tc);
  r.gpu_ms = median(tg);
  if (dist::nccl_available()) {
    Trainer plain(s, Device::cuda(0)), wrapped(s, Device::cuda(0), dist::make_nccl_process_group(0, 1, 0, nullptr));
    for (int i = 0; i < 3; ++i) {
      const double lp = plain.step().item(), ld = wrapped.step().item();
      if (std::abs(lp - ld) > 1e-6 * std::abs(lp)) {   // one rank: DDP divides by 1 and sums nothing
        std::printf("  CHECK FAILED %s step %d: loss gpu %.9g vs ddp %.9g\n", s.name, i, lp, ld);
        r.checked = false;
      }
    }
    std::vector<double> td;
    for (int i = 0; i < kWarmup; ++i) wrapped.timed_step_ms();
    for (int i = 0; i < kSteps; ++i) td.push_back(wrapped.timed_step_ms());
    r.ddp_ms = median(td);
  }
  return r;
}

struct AllreduceRow {
  int64_t bytes = 0;
  double allreduce_us = 0, copy_us = 0;
  int64_t wrong = 0;
};

// Median over 7 repetitions of the time per call of fn, run `iters` times back to back then synchronized.
template <typename Fn>
double median_us_per_call(int iters, Fn&& fn) {
  std::vector<double> reps;
  for (int r = 0; r < 7; ++r) {
    const auto t0 = Clock::now();
    for (int i = 0; i < iters; ++i) fn();
    synchronize(Device::cuda(0));
    reps.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / iters);
  }
  return median(reps);
}

std::vector<AllreduceRow> time_nccl_allreduce() {
  std::vector<AllreduceRow> rows;
  auto pg = dist::make_nccl_process_group(0, 1, 0, nullptr, dist::kDefaultTimeout);
  for (int64_t bytes = 4; bytes <= (int64_t{256} << 20); bytes *= 16) {
    const int64_t count = bytes / 4;
    AllreduceRow row;
    row.bytes = bytes;
    Tensor host = arange(count, DType::f32) + 1.0;
    Tensor buf = host.to(Device::cuda(0)), dst = empty({count}, DType::f32, Device::cuda(0));
    pg->allreduce({buf})->wait();
    const auto back = buf.to_vector<float>(), want = host.to_vector<float>();
    for (int64_t i = 0; i < count; ++i) row.wrong += back[i] != want[i];
    const int iters = static_cast<int>(std::clamp<int64_t>((int64_t{1} << 30) / bytes, 5, 200));
    for (int i = 0; i < 3; ++i) pg->allreduce({buf})->wait();
    row.allreduce_us = median_us_per_call(iters, [&] { pg->allreduce({buf})->wait(); });
    row.copy_us = median_us_per_call(iters, [&] { dst.copy_(buf); });
    rows.push_back(row);
  }
  return rows;
}

}  // namespace
}  // namespace tinyddp::bench

int main(int argc, char** argv) {
  using namespace tinyddp;
  using namespace tinyddp::bench;
  CLI::App app{"bench_gpu: an MLP step on the GPU vs the CPU"};
  std::string json_path;
  app.add_option("--json", json_path, "also write the tables as JSON to this file");
  CLI11_PARSE(app, argc, argv);

  if (cuda_device_count() == 0) {
    std::printf("bench_gpu: no CUDA device on this machine; nothing to time.\n");
    return 0;
  }
  nlohmann::json out;
  std::printf("# MLP training step, float32, median of %d steps (each closed by a synchronize)\n", kSteps);
  std::printf("%-28s %10s %10s %10s %12s %10s %8s %s\n", "model (B x D_in-D_h-D_out)", "cpu ms", "gpu ms",
              "cpu/gpu", "gpu TFLOP/s", "ddp ms", "ddp/gpu", "check");
  const MlpShape shapes[] = {{"784-256-10", 64, 784, 256, 10}, {"1024-4096-1024", 1024, 1024, 4096, 1024}};
  bool ok = true;
  for (const MlpShape& s : shapes) {
    const StepTimes t = time_mlp(s);
    ok = ok && t.checked;
    const double tflops = s.flops_per_step() / (t.gpu_ms * 1e-3) / 1e12;
    std::printf("%-5lld x %-20s %10.3f %10.3f %10.2f %12.2f %10.3f %8.3f %s\n", static_cast<long long>(s.batch),
                s.name, t.cpu_ms, t.gpu_ms, t.cpu_ms / t.gpu_ms, tflops, t.ddp_ms, t.ddp_ms / t.gpu_ms,
                t.checked ? "ok" : "FAILED");
    out["mlp_step"].push_back({{"model", s.name}, {"batch", s.batch}, {"cpu_ms", t.cpu_ms}, {"gpu_ms", t.gpu_ms},
                               {"cpu_over_gpu", t.cpu_ms / t.gpu_ms}, {"gpu_tflops", tflops}, {"ddp_nccl_1rank_ms", t.ddp_ms},
                               {"ddp_over_gpu", t.ddp_ms / t.gpu_ms}, {"checked", t.checked}});
  }

  if (dist::nccl_available()) {
    std::printf("\n# allreduce, nccl backend, 1 rank on cuda:0 (busbw = 0 for one rank; see the legend)\n");
    std::printf("%12s %12s %12s %12s %12s %8s\n", "size (B)", "count", "time (us)", "algbw (GB/s)", "copy (us)",
                "#wrong");
    for (const AllreduceRow& r : time_nccl_allreduce()) {
      ok = ok && r.wrong == 0;
      const double algbw = static_cast<double>(r.bytes) / (r.allreduce_us * 1e-6) / 1e9;
      std::printf("%12lld %12lld %12.2f %12.2f %12.2f %8lld\n", static_cast<long long>(r.bytes),
                  static_cast<long long>(r.bytes / 4), r.allreduce_us, algbw, r.copy_us, static_cast<long long>(r.wrong));
      out["nccl_allreduce_1rank"].push_back({{"bytes", r.bytes}, {"time_us", r.allreduce_us}, {"algbw_gbs", algbw},
                                             {"copy_us", r.copy_us}, {"wrong", r.wrong}});
    }
  } else {
    std::printf("\n# allreduce: this build has no NCCL; skipped\n");
  }
  if (!json_path.empty()) std::ofstream(json_path) << out.dump(2) << "\n";
  return ok ? 0 : 1;
}
