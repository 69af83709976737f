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

// What a plan runs on besides its steps: the model, DDP's arguments, the iteration counts. A named scenario
// fixes these; the command line may override each.
struct PlanOptions {
  bool find_unused_parameters = false;
  bool static_graph = false;
  bool extra_unused_parameter = false;  // `unused_scale`, registered first (index 0)
  bool buffer = false;                  // the model's `feature_scale` buffer
  bool broadcast_buffers = true;        // DDP(broadcast_buffers=...)
  std::vector<int> rank_iterations;     // uneven inputs: one count per rank; empty: `iterations` on every rank
  // The iteration loop inside `with ddp.join(divide_by_initial_world_size, enable=True,
  // throw_on_early_termination)`.
  bool join = false;
  bool join_divide_by_initial_world_size = true;
  bool join_throw_on_early_termination = false;
  // A GAN's second model: a discriminator Linear(5, 8) -> ReLU -> Linear(8, 1) on the text decoder's output,
  // with its own DDP and SGD (the plan's disc(...), disc_step, freeze(disc), d_real, d_fake, g_adv).
  bool gan = false;
  bool operator==(const PlanOptions&) const = default;
  // "find_unused_parameters, static_graph, iterations 3,2, join": what differs from the defaults.
  std::string summary() const;
};

struct ReproOptions : PlanOptions {
  int ranks = 2;
  std::string backend = "thread";       // thread | mpi
  int iterations = 3;
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
  // Raised only because a peer's program ended while this rank waited for it in a collective (the thread
  // backend's dist::PeerLeftError; gloo's "Connection closed by peer").
  bool peer_left = false;
  // A mistake in the plan, not in the program it stands for (a term before any forward, t after
  // forward(no_text), disc(...) without --gan): run_repro turns it into a PlanError (exit code 2).
  bool plan_mistake = false;
  size_t plan_pos = 0;     // where the step that raised it starts in the plan as written
};

// The iteration count of `rank` (uneven inputs give ranks different counts).
int iterations_of(const ReproOptions& o, int rank);

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
  std::vector<uint64_t> grad_hashes;   // a backward or grad call's: each parameter's .grad after it (replica_hash)
  std::string error;   // set when this call raised
};

struct RankResult {
  int rank = 0;
  std::vector<CallRecord> calls;
  std::optional<ReproError> error;
  std::vector<std::string> warnings;   // the engine's (checkpointing), then DDP's, in order
  std::vector<uint64_t> param_hashes;                      // per parameter, at the end
};

struct ReproResult {
  std::string scenario;   // the named scenario, or "custom"
  std::string plan;
  ReproOptions options;
  std::vector<std::string> param_names;
  std::string outcome;    // "ok" or "error"
  // The lowest rank's error that a peer's exit did not cause (else the lowest rank's); each rank's own is
  // in ranks[r].error.
  std::optional<ReproError> error;
  std::vector<std::string> warnings;   // each distinct text once: rank 0's first, then any other rank's
  // Each distinct warning with how often it was given, over every rank and iteration, and by which ranks. A
  // text that names the rank or iteration it was given in counts as one, with "rank <r>", "iteration <i>".
  struct WarningCount {
    std::string text;
    int count = 0;
    std::vector<int> ranks;
  };
  std::vector<WarningCount> warning_counts;
  bool replicas_in_sync = true;
  std::vector<std::string> params_out_of_sync;
  // Per iteration, as PyTorch's run is summarized (Note [Gradients in sync per iteration] in repro.cpp): whether
  // every rank's gradients agree after the iteration's last backward or grad call that all ranks completed; null
  // when no such call; an iteration with no backward, grad or step on any rank is left out.
  std::vector<std::optional<bool>> grads_in_sync_per_iteration;
  std::vector<RankResult> ranks;
};

// Runs the plan. With backend "mpi" this process is one rank of the mpirun job; the result (on every
// rank) describes all ranks. Throws PlanError for a mistake in the plan, found while parsing or on any rank
// while running (ReproError::plan_mistake).
ReproResult run_repro(const std::string& scenario, const std::string& plan, const ReproOptions& options);

// The outcome in a few words, as `--list` shows it: "ok, replicas in sync", "ok, replicas drift apart",
// "RuntimeError at backward #2 of iteration 1", or per rank when ranks end differently
// ("rank 0: RuntimeError at backward #1 of iteration 3; rank 1: ok").
std::string outcome_summary(const ReproResult& result);

nlohmann::json to_json(const ReproResult& result);
void print_report(std::ostream& out, const ReproResult& result);

}  // namespace tinyddp::app
