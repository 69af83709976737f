// `tinyddp repro`: runs a plan (plan.h) on N ranks of DistributedDataParallel over the scenario model
// and records, per rank and per call, what the reducer did, then the outcome as PyTorch 1.13 would
// report it: the error (type, exact message, the call that raised it) or ok, the warnings, and whether
// the replicas still hold identical parameters.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "apps/tinyddp/repro/plan.h"
#include "dist/ddp.h"

namespace tinyddp::app {

struct ReproOptions {
  int ranks = 2;
  std::string backend = "thread";       // thread | mpi
  int iterations = 3;
  bool find_unused_parameters = false;
  bool static_graph = false;
  bool extra_unused_parameter = false;  // `unused_scale`, registered first (index 0)
  bool same_data = false;               // every rank draws the same micro-batches
  dist::DebugLevel debug = dist::DebugLevel::off;
  double bucket_cap_mb = 25.0;
  dist::UnsyncedGradPolicy unsynced_grads = dist::UnsyncedGradPolicy::warn;
  uint64_t seed = 0;
  int timeout_ms = 20000;
};

struct ReproError {
  std::string type;        // "RuntimeError" for DDP's and autograd's errors, as PyTorch raises them
  std::string message;     // the full text
  std::string raised_at;   // "backward #2 of iteration 1": the call, counted within its iteration
  int rank = 0;
};

// One call (forward, backward or step) on one rank, and what the reducer did during it.
struct CallRecord {
  int iteration = 0;
  std::string at;       // "forward #1 of iteration 1"
  std::string label;    // the step as written, e.g. "backward(a, retain)"
  bool in_no_sync = false;
  std::vector<size_t> hooks;            // parameters whose hook fired and counted
  std::vector<size_t> hooks_ignored;    // ... fired while the reducer expected none
  std::vector<size_t> marked_unused;
  std::vector<size_t> launched;         // buckets whose allreduce started
  bool finalized = false, rebuilt = false;
  // Reducer state after the call.
  bool armed = false, require_finalize = false;
  size_t ready = 0, num_params = 0;
  std::vector<std::vector<size_t>> buckets;
  std::vector<size_t> pending;
  std::string error;   // set when this call raised
};

struct RankResult {
  int rank = 0;
  std::vector<CallRecord> calls;
  std::optional<ReproError> error;
  std::vector<std::string> warnings;
  std::vector<uint64_t> param_hashes;                      // per parameter, at the end
  std::vector<std::vector<uint64_t>> grad_hashes_per_iteration;   // after each iteration's last backward
};

struct ReproResult {
  std::string scenario;   // the named scenario, or "custom"
  std::string plan;
  ReproOptions options;
  std::vector<std::string> param_names;
  std::string outcome;    // "ok" or "error"
  std::optional<ReproError> error;
  std::vector<std::string> warnings;   // rank 0's, then any other rank's that differ
  bool replicas_in_sync = true;
  std::vector<std::string> params_out_of_sync;
  std::vector<bool> grads_in_sync_per_iteration;
  std::vector<RankResult> ranks;
};

// Runs the plan. With backend "mpi" this process is one rank of the mpirun job; the result (on every
// rank) describes all ranks.
ReproResult run_repro(const std::string& scenario, const std::string& plan, const ReproOptions& options);

nlohmann::json to_json(const ReproResult& result);
void print_report(std::ostream& out, const ReproResult& result);

}  // namespace tinyddp::app
