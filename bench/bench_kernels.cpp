// bench_kernels: the multi-tensor kernels (kernels/{cpu,cuda}/multi_tensor.h) against their naive versions and
// against a memory roofline measured in the same binary, on two float32 gradient lists (bench_kernels.h):
//   resnet50   161 tensors, 25.6M elements (102 MB): bandwidth-bound, far beyond the caches
//   tiny4096   4,096 tensors of 1-512 elements (~4 MB): per-tensor overhead-bound
//
// CPU (always):
//   cpu/norm/multi_tensor      kernels::cpu::multi_tensor_l2norm                       bytes = 4 * elements
//   cpu/norm/per_tensor        Eigen squaredNorm of each tensor, sqrt, then sqrt(sum of norm^2): the naive loop
//   cpu/roofline/read          Eigen sum of one contiguous buffer of the same bytes (the read roofline)
//   cpu/pack, cpu/unpack       bucket_pack (factor 1/2: the DDP "divide by world size") and bucket_unpack,
//                              bytes = 8 * elements (read + write)
//   cpu/roofline/copy          memcpy of the same bytes, one contiguous buffer (read + write)
// GPU (bench_kernels_cuda.cu; only when built with CUDA and a device is present): the same, timed with CUDA
// events, plus the per-tensor baseline of one launch per tensor and cudaMemcpyAsync device-to-device.
//
// Check, then time: main() first checks every variant's result (norms against a float64 reference, pack and
// unpack bit for bit), prints "All results match. Starting benchmarks." and only then times. After the runs it
// prints a table: median time per call, GB/s, and the fraction of the roofline of the same list and machine.
//
//   ./build/bench/bench_kernels --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
//   ./build/bench/bench_kernels --benchmark_filter=cpu/norm
#include "bench/bench_kernels.h"

#include <benchmark/benchmark.h>

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <random>

#include "kernels/cpu/multi_tensor.h"

namespace tinyddp::bench {
namespace {

using Vec = Eigen::Map<const Eigen::ArrayXf>;

struct Registered {
  double bytes = 0;
  std::string roofline;
};
std::map<std::string, Registered>& registry() {
  static std::map<std::string, Registered> r;
  return r;
}
std::vector<std::string>& registration_order() {
  static std::vector<std::string> order;
  return order;
}

}  // namespace

void register_bytes(const std::string& benchmark_name, double bytes, const std::string& roofline_name) {
  registry()[benchmark_name] = {bytes, roofline_name};
  registration_order().push_back(benchmark_name);
}

namespace {

// A list's tensors on the host, each its own allocation (as parameters' gradients are), normal(0, 1) values.
struct HostTensors {
  TensorList list;
  std::vector<std::unique_ptr<float[]>> storage;
  std::vector<const float*> cptrs;
  std::vector<float*> ptrs;
  std::vector<int64_t> offsets;   // packed bucket layout: tensor after tensor
  explicit HostTensors(const TensorList& l) : list(l) {
    std::mt19937 rng(7);
    std::normal_distribution<float> normal;
    int64_t offset = 0;
    for (int64_t n : list.numels) {
      storage.emplace_back(new float[static_cast<size_t>(n)]);
      for (int64_t j = 0; j < n; ++j) storage.back()[j] = normal(rng);
      ptrs.push_back(storage.back().get());
      cptrs.push_back(storage.back().get());
      offsets.push_back(offset);
      offset += n;
    }
  }
  double reference_norm() const {
    long double sum = 0;
    for (size_t i = 0; i < ptrs.size(); ++i)
      for (int64_t j = 0; j < list.numels[i]; ++j) sum += static_cast<long double>(ptrs[i][j]) * ptrs[i][j];
    return static_cast<double>(std::sqrt(sum));
  }
};

// copy 0: the gradients (inputs, never written); copy 1: unpack's destinations.
HostTensors& host_tensors(const std::string& name, int copy = 0) {
  static std::map<std::pair<std::string, int>, std::unique_ptr<HostTensors>> cache;
  auto& slot = cache[{name, copy}];
  if (!slot) slot = std::make_unique<HostTensors>(name == "resnet50" ? resnet50_list() : tiny_list());
  return *slot;
}

// ---- the variants (each returns what it computed, for the checks) ----

float norm_multi_tensor(const HostTensors& t) {
  float out = 0;
  kernels::cpu::multi_tensor_l2norm(t.cptrs, t.list.numels, &out);
  return out;
}

// The naive loop: one reduction per tensor (Eigen's vectorized squaredNorm), its norm, then the norm of norms.
float norm_per_tensor(const HostTensors& t) {
  std::vector<float> norms(t.cptrs.size());
  for (size_t i = 0; i < t.cptrs.size(); ++i) norms[i] = std::sqrt(Vec(t.cptrs[i], t.list.numels[i]).square().sum());
  return std::sqrt(Eigen::Map<const Eigen::ArrayXf>(norms.data(), static_cast<Eigen::Index>(norms.size())).square().sum());
}

// One contiguous buffer per list size, for the rooflines.
std::vector<float>& contiguous(int64_t elems, int which) {
  static std::map<std::pair<int64_t, int>, std::vector<float>> buffers;
  auto& b = buffers[{elems, which}];
  if (b.empty()) b.assign(static_cast<size_t>(elems), 1.0f);
  return b;
}

void BM_cpu_norm(benchmark::State& state, const std::string& list, bool fused) {
  const HostTensors& t = host_tensors(list);
  for (auto _ : state) benchmark::DoNotOptimize(fused ? norm_multi_tensor(t) : norm_per_tensor(t));
  state.SetBytesProcessed(state.iterations() * t.list.total() * 4);
}

void BM_cpu_read_roofline(benchmark::State& state, const std::string& list) {
  const int64_t n = host_tensors(list).list.total();
  const std::vector<float>& x = contiguous(n, 0);
  for (auto _ : state) benchmark::DoNotOptimize(Vec(x.data(), n).sum());
  state.SetBytesProcessed(state.iterations() * n * 4);
}

void BM_cpu_pack(benchmark::State& state, const std::string& list, bool pack) {
  const HostTensors& t = host_tensors(list);
  HostTensors& out = host_tensors(list, 1);
  std::vector<float>& flat = contiguous(t.list.total(), 1);
  for (auto _ : state) {
    if (pack)
      kernels::cpu::bucket_pack(t.cptrs, t.list.numels, t.offsets, 0.5f, flat.data());
    else
      kernels::cpu::bucket_unpack(flat.data(), t.offsets, t.list.numels, out.ptrs);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * t.list.total() * 8);
}

void BM_cpu_copy_roofline(benchmark::State& state, const std::string& list) {
  const int64_t n = host_tensors(list).list.total();
  const std::vector<float>& src = contiguous(n, 0);
  std::vector<float>& dst = contiguous(n, 1);
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), static_cast<size_t>(n) * 4);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * n * 8);
}

// ---- check, then register ----

bool g_all_ok = true;
void expect(bool ok, const std::string& what) {
  if (!ok) {
    std::fprintf(stderr, "MISMATCH: %s\n", what.c_str());
    g_all_ok = false;
  }
}

void check_cpu(const std::string& list) {
  HostTensors& t = host_tensors(list);
  const double ref = t.reference_norm();
  const double fused = norm_multi_tensor(t), naive = norm_per_tensor(t);
  // float32 sums of 25M squares: the fused kernel's fixed chunks stay within ~1e-6 of float64; 1e-5 is the bound.
  expect(std::abs(fused / ref - 1) < 1e-5, list + ": multi_tensor_l2norm " + std::to_string(fused) + " vs float64 " +
                                               std::to_string(ref));
  expect(std::abs(naive / ref - 1) < 1e-4, list + ": per-tensor norm " + std::to_string(naive) + " vs float64 " +
                                               std::to_string(ref));
  std::vector<float>& flat = contiguous(t.list.total(), 1);
  kernels::cpu::bucket_pack(t.cptrs, t.list.numels, t.offsets, 0.5f, flat.data());
  bool pack_ok = true;
  for (size_t i = 0; i < t.ptrs.size(); ++i)
    for (int64_t j = 0; j < t.list.numels[i]; ++j) pack_ok &= flat[t.offsets[i] + j] == t.ptrs[i][j] * 0.5f;
  expect(pack_ok, list + ": bucket_pack is not src * 0.5");
  HostTensors& out = host_tensors(list, 1);
  kernels::cpu::bucket_unpack(flat.data(), t.offsets, t.list.numels, out.ptrs);
  bool unpack_ok = true;
  for (size_t i = 0; i < t.ptrs.size(); ++i)
    for (int64_t j = 0; j < t.list.numels[i]; ++j) unpack_ok &= out.ptrs[i][j] == flat[t.offsets[i] + j];
  expect(unpack_ok, list + ": bucket_unpack did not copy the bucket back");
}

void register_cpu(const std::string& list) {
  const double elems = static_cast<double>(host_tensors(list).list.total());
  auto reg = [&](const std::string& name, double bytes, const std::string& roofline, auto fn, auto... args) {
    benchmark::RegisterBenchmark(name.c_str(), fn, args...)->Unit(benchmark::kMicrosecond)->UseRealTime();
    register_bytes(name, bytes, roofline);
  };
  const std::string read = "cpu/roofline/read/" + list, copy = "cpu/roofline/copy/" + list;
  reg(read, 4 * elems, read, BM_cpu_read_roofline, list);
  reg("cpu/norm/multi_tensor/" + list, 4 * elems, read, BM_cpu_norm, list, true);
  reg("cpu/norm/per_tensor/" + list, 4 * elems, read, BM_cpu_norm, list, false);
  reg(copy, 8 * elems, copy, BM_cpu_copy_roofline, list);
  reg("cpu/pack/" + list, 8 * elems, copy, BM_cpu_pack, list, true);
  reg("cpu/unpack/" + list, 8 * elems, copy, BM_cpu_pack, list, false);
}

// Keeps each benchmark's median time per call (the "median" aggregate when repetitions are on, else the
// median of the runs seen) and prints the table: time, GB/s, fraction of the list's roofline.
class TableReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) {
      if (r.error_occurred) continue;
      const std::string name = r.run_name.function_name;   // without "/real_time"
      const double seconds = r.GetAdjustedRealTime() / benchmark::GetTimeUnitMultiplier(r.time_unit);
      if (r.run_type == Run::RT_Aggregate) {
        if (r.aggregate_name == "median") median_[name] = seconds;
      } else {
        samples_[name].push_back(seconds);
      }
    }
    ConsoleReporter::ReportRuns(runs);
  }

  void print_table() {
    for (auto& [name, s] : samples_)
      if (!median_.count(name) && !s.empty()) {
        std::sort(s.begin(), s.end());
        median_[name] = s[s.size() / 2];
      }
    std::printf("\nMedian per call; GB/s counts every byte read and written once; roofline = the list's\n"
                "measured read (norm) or copy (pack/unpack) bandwidth in this run:\n");
    std::printf("%-36s %12s %10s %10s\n", "benchmark", "time (us)", "GB/s", "roofline");
    for (const std::string& name : registration_order()) {
      auto m = median_.find(name);
      if (m == median_.end()) continue;
      const Registered& reg = registry()[name];
      const double gbps = reg.bytes / m->second / 1e9;
      std::string frac = "-";
      auto roof = median_.find(reg.roofline);
      if (roof != median_.end()) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.2f", gbps / (registry()[reg.roofline].bytes / roof->second / 1e9));
        frac = buf;
      }
      std::printf("%-36s %12.2f %10.2f %10s\n", name.c_str(), m->second * 1e6, gbps, frac.c_str());
    }
  }

 private:
  std::map<std::string, double> median_;
  std::map<std::string, std::vector<double>> samples_;
};

}  // namespace
}  // namespace tinyddp::bench

int main(int argc, char** argv) {
  using namespace tinyddp::bench;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  const TensorList resnet = resnet50_list();
  expect(resnet.numels.size() == 161 && resnet.total() == 25557032,
         "resnet50_list: expected 161 tensors and 25,557,032 elements (torchvision's resnet50)");
  benchmark::AddCustomContext("lists", "resnet50: 161 tensors, 25,557,032 f32; tiny4096: 4,096 tensors, " +
                                           std::to_string(tiny_list().total()) + " f32");

  for (const char* list : {"resnet50", "tiny4096"}) check_cpu(list);
#ifdef TINYDDP_WITH_CUDA
  const bool gpu = has_gpu();
  if (gpu && !check_gpu()) g_all_ok = false;
#else
  std::printf("GPU benchmarks: not built (no CUDA compiler at configure time).\n");
#endif
  if (!g_all_ok) {
    std::fprintf(stderr, "Results do not match; not timing.\n");
    return 1;
  }
  std::printf("All results match. Starting benchmarks.\n");
  std::fflush(stdout);
  for (const char* list : {"resnet50", "tiny4096"}) register_cpu(list);
#ifdef TINYDDP_WITH_CUDA
  if (gpu) register_gpu();
#endif

  TableReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  reporter.print_table();
  benchmark::Shutdown();
  return 0;
}
