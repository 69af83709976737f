// bench_allreduce: allreduce of float32 buffers, 4 KiB to 64 MiB, printed as nccl-tests prints it.
//
//   ./build/bench/bench_allreduce                         # thread backend, 2 ranks: ring and naive, interleaved
//   ./build/bench/bench_allreduce --ranks 3 --algorithm ring --min-bytes 1M   # one algorithm, from 1 MiB
//   export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1   # only as root
//   mpirun --oversubscribe -np 2 ./build/bench/bench_allreduce     # mpi backend, 2 processes
//   ... --json out.json                                   # the table as JSON too (rank 0 writes it)
//
// Legend: S = message size in bytes (per rank), count = S / 4 elements, n = ranks.
//   algbw   = S / time                                  (what the caller sees)
//   busbw   = algbw * 2(n-1)/n                          (nccl-tests: the bytes each rank's link carries in
//                                                       an optimal ring; n = 2 gives busbw = algbw)
//   roofline = S / time of one memcpy of S bytes, measured in this binary by rank 0 while the other ranks
//              wait, in the same rotation as the allreduces (each byte read once and written once;
//              cache-resident at small S, DRAM at large S).
//              For n = 2 on shared memory, each rank must at least bring in its peer's S bytes, so busbw /
//              roofline near 1 means the backend moves data about as fast as one core can copy it.
//
// Algorithms (thread backend): `ring`, the backend's allreduce (Note [The thread backend's allreduce] in
// dist/thread_process_group.cpp: each rank reduces its own chunk, in place), and `naive`, the one it replaced,
// kept here only for comparison: the last rank sums all n buffers in rank order into a fresh buffer and copies
// it back into each while the others wait, 2n * S bytes through one rank against the ring's 2(n-1)/n * S per
// rank (docs/ddp-reducer.md, "The thread backend's allreduce"). Under mpirun with every rank on this machine:
// the shared-memory allreduce (Note [The mpi backend's shared-memory allreduce] in
// dist/shared_memory_allreduce.cpp) of a plain tensor, `copied` through the slots, and of a buffer from
// ProcessGroup::allocate_bucket, reduced `in place` as the reducer's buckets are; with
// TINYDDP_MPI_SHARED_MEMORY=0 (or ranks on several machines), MPI_Iallreduce.
//
// Check, then time: for each size and algorithm every rank fills its buffer with known values, one allreduce
// runs, every rank counts the elements that differ from the closed-form sum (#wrong, summed over ranks), and
// only then the timing runs: warm-up iterations, then kReps repetitions of `iters` back-to-back
// allreduce+wait, the algorithms taking turns repetition by repetition (ABAB, so that machine noise hits
// both alike); a repetition's time is the slowest rank's, and the table shows the median repetition with the
// fastest and slowest.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "dist/mpi_process_group.h"
#include "dist/thread_process_group.h"
#include "engine/tinyddp.h"

namespace tinyddp::bench {
namespace {

using Clock = std::chrono::steady_clock;
using dist::ProcessGroup;

constexpr int64_t kMinBytes = 4 << 10;    // 4 KiB: latency-bound
constexpr int64_t kMaxBytes = 64 << 20;   // 64 MiB: well past every cache, bandwidth-bound
constexpr int kSizeStep = 4;              // x4 per row, as the issue asks
constexpr int kReps = 7;                  // odd, so the median is one measured repetition
// Iterations per repetition: about 64 MiB of traffic per rank, at least 4 and at most 1000 (small sizes
// are microseconds each; 1000 keeps a row under ~50 ms on this machine).
constexpr int64_t kBytesPerRep = 64 << 20;
int iterations_for(int64_t bytes) { return static_cast<int>(std::clamp<int64_t>(kBytesPerRep / bytes, 4, 1000)); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// The roofline's buffers: page-aligned, like large tensors: on this machine (AMD EPYC, glibc's `rep movsb` for
// small copies) a copy whose destination sits 16 bytes past its source modulo 4096 runs at ~2 GB/s instead of
// ~80 GB/s, and two malloc'd vectors of the same size land exactly there. A roofline is the best case.
struct CopyBuffers {
  explicit CopyBuffers(int64_t bytes)
      : bytes(bytes), src(static_cast<char*>(std::aligned_alloc(kPage, bytes))),
        dst(static_cast<char*>(std::aligned_alloc(kPage, bytes))) {
    std::memset(src, 1, bytes);   // touched: no page faults inside the timing
    std::memset(dst, 0, bytes);
  }
  ~CopyBuffers() {
    std::free(src);
    std::free(dst);
  }
  CopyBuffers(const CopyBuffers&) = delete;
  CopyBuffers& operator=(const CopyBuffers&) = delete;
  void copy(int iters) {
    for (int i = 0; i < iters; ++i) {
      std::memcpy(dst, src, bytes);
      asm volatile("" : : "r"(dst) : "memory");   // keep every copy
    }
  }
  static constexpr size_t kPage = 4096;
  int64_t bytes;
  char *src, *dst;
};

struct Row {
  int64_t bytes = 0, count = 0;
  double time_us = 0, min_us = 0, max_us = 0, algbw = 0, busbw = 0, roofline = 0;
  int64_t wrong = 0;
};

// The value rank r puts at element i, and the sum over n ranks: small integers, exact in float32.
float fill_value(int rank, int64_t i) { return static_cast<float>(rank + 1) + static_cast<float>(i % 13); }
float expected_sum(int n, int64_t i) { return static_cast<float>(n * (n + 1) / 2) + static_cast<float>(n * (i % 13)); }

// The largest of every rank's `value` (a collective: every rank calls it).
double max_over_ranks(ProcessGroup& pg, double value) {
  Tensor t = full({1}, value, DType::f64);
  pg.allreduce({t}, dist::ReduceOp::max)->wait();
  return t.item<double>();
}
double sum_over_ranks(ProcessGroup& pg, double value) {
  Tensor t = full({1}, value, DType::f64);
  pg.allreduce({t})->wait();
  return t.item<double>();
}

// The naive allreduce, for comparison only (what the thread backend did before its ring): every rank posts its
// buffer; after a barrier rank 0 sums all n buffers in rank order into a fresh buffer and copies the sum back
// into each, while the others wait in a second barrier. The barriers stand for the backend's arrival and
// completion (a few microseconds; they matter only at the smallest sizes).
struct NaiveBoard {
  explicit NaiveBoard(int n) : buffers(n) {}
  std::vector<float*> buffers;   // per rank, set before the first barrier
};
void naive_allreduce(ProcessGroup& pg, NaiveBoard& board, Tensor& buf) {
  board.buffers[pg.rank()] = buf.data_ptr<float>();
  pg.barrier()->wait();
  if (pg.rank() == 0) {
    const int64_t count = buf.numel();
    std::vector<float> acc(board.buffers[0], board.buffers[0] + count);
    for (size_t r = 1; r < board.buffers.size(); ++r)
      for (int64_t i = 0; i < count; ++i) acc[i] = acc[i] + board.buffers[r][i];
    for (float* b : board.buffers) std::copy(acc.begin(), acc.end(), b);
  }
  pg.barrier()->wait();
}

enum class Algorithm { backend, naive, in_place };
const char* algorithm_name(Algorithm a, const std::string& backend) {
  if (a == Algorithm::naive) return "naive";
  if (a == Algorithm::in_place) return "shared memory, in place";
  if (backend == "thread") return "ring";
  return dist::mpi_shared_memory_allreduce() ? "shared memory, copied" : "MPI_Iallreduce";
}

struct Options {
  std::vector<Algorithm> algorithms;
  int64_t min_bytes = kMinBytes, max_bytes = kMaxBytes;
};

// One rank's program: check then time every size. Rank 0's rows are the result (every value in them is
// already reduced over ranks); one table per algorithm.
std::vector<std::vector<Row>> run_rank(ProcessGroup& pg, const Options& opt, NaiveBoard* board) {
  const int n = pg.size();
  const size_t na = opt.algorithms.size();
  std::vector<std::vector<Row>> rows(na);
  for (int64_t bytes = kMinBytes; bytes <= opt.max_bytes; bytes *= kSizeStep) {
    if (bytes < opt.min_bytes) continue;
    const int64_t count = bytes / 4;
    std::vector<Tensor> bufs;   // per algorithm, (count,)
    for (Algorithm a : opt.algorithms)
      bufs.push_back(a == Algorithm::in_place ? pg.allocate_bucket(count, DType::f32, Device::cpu())
                                              : empty({count}, DType::f32));
    auto allreduce = [&](size_t a) {
      if (opt.algorithms[a] == Algorithm::naive)
        naive_allreduce(pg, *board, bufs[a]);
      else
        pg.allreduce({bufs[a]})->wait();
    };

    // ---- check ----
    std::vector<int64_t> wrong(na);
    for (size_t a = 0; a < na; ++a) {
      float* p = bufs[a].data_ptr<float>();
      for (int64_t i = 0; i < count; ++i) p[i] = fill_value(pg.rank(), i);
      allreduce(a);
      for (int64_t i = 0; i < count; ++i) wrong[a] += p[i] != expected_sum(n, i);
      wrong[a] = static_cast<int64_t>(sum_over_ranks(pg, static_cast<double>(wrong[a])));
    }

    // ---- time ---- (zeros stay zeros: no overflow or denormals however many iterations run)
    for (Tensor& b : bufs) std::memset(b.raw_data(), 0, bytes);
    const int iters = iterations_for(bytes);
    std::optional<CopyBuffers> roof;   // rank 0 copies alone while the others wait (one copy per rank would halve it)
    if (pg.rank() == 0) {
      roof.emplace(bytes);
      roof->copy(iters);   // warm-up
    }
    for (size_t a = 0; a < na; ++a)
      for (int i = 0; i < std::max(2, iters / 4); ++i) allreduce(a);   // warm-up
    // Entry na is the roofline, timed in the same rotation.
    std::vector<std::vector<double>> reps(na + 1);
    for (int r = 0; r < kReps; ++r)
      for (size_t j = 0; j <= na; ++j) {
        const size_t a = (j + r) % (na + 1);   // ABAB, the first one alternating
        pg.barrier()->wait();
        const auto t0 = Clock::now();
        if (a == na) {
          if (roof) roof->copy(iters);
        } else {
          for (int i = 0; i < iters; ++i) allreduce(a);
        }
        reps[a].push_back(max_over_ranks(pg, seconds_since(t0) / iters));
      }
    const double roof_s = median(reps[na]);
    for (size_t a = 0; a < na; ++a) {
      Row row;
      row.bytes = bytes;
      row.count = count;
      const double s = median(reps[a]);
      row.time_us = s * 1e6;
      row.min_us = *std::min_element(reps[a].begin(), reps[a].end()) * 1e6;
      row.max_us = *std::max_element(reps[a].begin(), reps[a].end()) * 1e6;
      row.algbw = static_cast<double>(bytes) / s / 1e9;
      row.busbw = row.algbw * 2.0 * (n - 1) / n;
      row.roofline = static_cast<double>(bytes) / roof_s / 1e9;
      row.wrong = wrong[a];
      rows[a].push_back(row);
    }
  }
  return rows;
}

void print_table(const std::string& backend, const char* algorithm, int n, const std::vector<Row>& rows) {
  std::printf("\n# allreduce, backend %s (%s), %d ranks, float32, sum; time = median (min-max) of %d repetitions, "
              "slowest rank\n", backend.c_str(), algorithm, n, kReps);
  std::printf("# roofline = memcpy of the same size in this binary (one thread); busbw = algbw * 2(n-1)/n\n");
  std::printf("%12s %12s %6s %10s %21s %12s %12s %7s %14s %10s\n", "size(B)", "count", "type", "time(us)",
              "(min-max)", "algbw(GB/s)", "busbw(GB/s)", "#wrong", "roofline(GB/s)", "busbw/roof");
  for (const Row& r : rows) {
    char range[64];
    std::snprintf(range, sizeof range, "(%.1f-%.1f)", r.min_us, r.max_us);
    std::printf("%12lld %12lld %6s %10.1f %21s %12.3f %12.3f %7lld %14.2f %10.3f\n", static_cast<long long>(r.bytes),
                static_cast<long long>(r.count), "float", r.time_us, range, r.algbw, r.busbw,
                static_cast<long long>(r.wrong), r.roofline, r.busbw / r.roofline);
  }
  int64_t total_wrong = 0;
  for (const Row& r : rows) total_wrong += r.wrong;
  std::printf("# %s\n", total_wrong == 0 ? "All results match." : "MISMATCH: some elements are wrong (see #wrong).");
  std::fflush(stdout);
}

nlohmann::json rows_json(const std::vector<Row>& rows) {
  nlohmann::json j = nlohmann::json::array();
  for (const Row& r : rows)
    j.push_back({{"bytes", r.bytes}, {"count", r.count}, {"time_us", r.time_us}, {"min_us", r.min_us},
                 {"max_us", r.max_us}, {"algbw_gbs", r.algbw}, {"busbw_gbs", r.busbw}, {"wrong", r.wrong},
                 {"roofline_gbs", r.roofline}});
  return j;
}

}  // namespace
}  // namespace tinyddp::bench

int main(int argc, char** argv) {
  using namespace tinyddp;
  using namespace tinyddp::bench;
  CLI::App app{"allreduce bandwidth, nccl-tests style: thread backend (ring vs naive), or mpi under mpirun"};
  std::string json_path, algorithm = "both", min_size = "4K", max_size = "64M";
  int ranks = 2;
  app.add_option("--json", json_path, "also write the table as JSON to this file (rank 0)");
  app.add_option("--ranks", ranks, "thread backend: number of ranks")->check(CLI::Range(1, 64));
  app.add_option("--algorithm", algorithm, "thread backend: ring (the backend's), naive (the one it replaced), or "
                 "both, interleaved")->check(CLI::IsMember({"ring", "naive", "both"}));
  app.add_option("--min-bytes", min_size, "smallest size, 4K to 64M (x4 steps)");
  app.add_option("--max-bytes", max_size, "largest size, 4K to 64M (x4 steps)");
  CLI11_PARSE(app, argc, argv);
  auto parse_size = [](const std::string& text) {
    const char unit = text.empty() ? ' ' : text.back();
    const int64_t scale = unit == 'K' ? 1 << 10 : unit == 'M' ? 1 << 20 : 1;
    return std::stoll(scale == 1 ? text : text.substr(0, text.size() - 1)) * scale;
  };
  Options opt;
  opt.min_bytes = parse_size(min_size);
  opt.max_bytes = parse_size(max_size);

  std::vector<std::vector<Row>> rows;
  std::string backend;
  int n = 0;
  bool print = true;
  if (dist::launched_by_mpirun()) {
    auto pg = dist::mpi_world();
    opt.algorithms = {Algorithm::backend};
    if (dist::mpi_shared_memory_allreduce()) opt.algorithms.push_back(Algorithm::in_place);
    backend = "mpi";
    n = pg->size();
    print = pg->rank() == 0;
    rows = run_rank(*pg, opt, nullptr);
  } else {
    backend = "thread";
    n = ranks;
    if (algorithm != "naive") opt.algorithms.push_back(Algorithm::backend);
    if (algorithm != "ring") opt.algorithms.push_back(Algorithm::naive);
    NaiveBoard board(n);
    auto errors = dist::ThreadWorld::run(n, [&](dist::ProcessGroup& pg) {
      auto mine = run_rank(pg, opt, &board);
      if (pg.rank() == 0) rows = std::move(mine);
    });
    for (int r = 0; r < n; ++r)
      if (errors[r]) std::rethrow_exception(errors[r]);
  }
  if (print) {
    for (size_t a = 0; a < rows.size(); ++a) print_table(backend, algorithm_name(opt.algorithms[a], backend), n, rows[a]);
    if (rows.size() == 2) {   // the backend's allreduce (A) against the other (B): naive, or in place
      const char* a = algorithm_name(opt.algorithms[0], backend);
      const char* b = algorithm_name(opt.algorithms[1], backend);
      std::printf("\n# A = %s vs B = %s, interleaved: busbw / roofline, and time(B) / time(A) of the medians\n", a, b);
      std::printf("%12s %14s %14s %10s\n", "size(B)", "B bw/roof", "A bw/roof", "time B/A");
      for (size_t i = 0; i < rows[0].size(); ++i)
        std::printf("%12lld %14.3f %14.3f %10.2f\n", static_cast<long long>(rows[0][i].bytes),
                    rows[1][i].busbw / rows[1][i].roofline, rows[0][i].busbw / rows[0][i].roofline,
                    rows[1][i].time_us / rows[0][i].time_us);
    }
    if (!json_path.empty()) {
      // "rows": the backend's allreduce of a plain tensor (what bench/run_ddp.sh summarizes); "naive_rows" and
      // "in_place_rows" when timed too.
      nlohmann::json j = {{"bench", "allreduce"}, {"backend", backend}, {"ranks", n}, {"reps", kReps}};
      for (size_t a = 0; a < rows.size(); ++a)
        j[opt.algorithms[a] == Algorithm::naive      ? "naive_rows"
          : opt.algorithms[a] == Algorithm::in_place ? "in_place_rows"
                                                     : "rows"] = rows_json(rows[a]);
      std::ofstream(json_path) << j.dump(2) << "\n";
    }
  }
  for (const auto& table : rows)
    for (const Row& r : table)
      if (r.wrong != 0) return 1;
  return 0;
}
