// bench_gpu: a training step of an MLP on the GPU against the same step on the CPU, and (with NCCL) the
// latency of a 1-rank allreduce on the GPU. Prints tables; --json writes them too. Without a CUDA device
// it says so and exits 0 (bench/gpu_check.sh runs it on a machine with one).
//
//   ./build/bench/bench_gpu [--json out.json]
//
// Legend: B = batch, D = features. A step = zero_grad + forward + cross-entropy + backward + SGD update,
// float32. Check, then time: three steps on each device from the same initial weights must give the same
// losses (to 1e-4 relative: float32, different summation orders), then kSteps timed steps after kWarmup,
// each step closed by a device synchronize; the table shows the median step.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

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
  double cpu_ms = 0, gpu_ms = 0;
  bool checked = false;
};

// Builds the MLP on `device` (same weights for every device: drawn on the host from one seed).
struct Trainer {
  nn::Sequential model;
  optim::SGD opt;
  Tensor x, y;
  Device device;
  Trainer(const MlpShape& s, Device d)
      : model(make_model(s)), opt(model.parameters(), {.lr = 0.01}), device(d) {
    model.to(d);
    manual_seed(2);
    x = randn({s.batch, s.in}).to(d);
    y = randint(0, s.classes, {s.batch}).to(d);
  }
  static nn::Sequential make_model(const MlpShape& s) {
    manual_seed(1);
    return nn::Sequential(nn::Linear(s.in, s.hidden), nn::ReLU(), nn::Linear(s.hidden, s.classes));
  }
  Tensor step() {
    opt.zero_grad();
    Tensor loss = cross_entropy(model(x), y);
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
  return r;
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
  std::printf("%-28s %10s %10s %10s %12s %s\n", "model (B x D_in-D_h-D_out)", "cpu ms", "gpu ms", "cpu/gpu",
              "gpu TFLOP/s", "check");
  const MlpShape shapes[] = {{"784-256-10", 64, 784, 256, 10}, {"1024-4096-1024", 1024, 1024, 4096, 1024}};
  bool ok = true;
  for (const MlpShape& s : shapes) {
    const StepTimes t = time_mlp(s);
    ok = ok && t.checked;
    const double tflops = s.flops_per_step() / (t.gpu_ms * 1e-3) / 1e12;
    std::printf("%-5lld x %-20s %10.3f %10.3f %10.2f %12.2f %s\n", static_cast<long long>(s.batch), s.name, t.cpu_ms,
                t.gpu_ms, t.cpu_ms / t.gpu_ms, tflops, t.checked ? "ok" : "FAILED");
    out["mlp_step"].push_back({{"model", s.name}, {"batch", s.batch}, {"cpu_ms", t.cpu_ms}, {"gpu_ms", t.gpu_ms},
                               {"cpu_over_gpu", t.cpu_ms / t.gpu_ms}, {"gpu_tflops", tflops}, {"checked", t.checked}});
  }
  if (!json_path.empty()) std::ofstream(json_path) << out.dump(2) << "\n";
  return ok ? 0 : 1;
}
