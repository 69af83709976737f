// Shared by the tests that run the PyTorch golden runs (tests/golden/ddp_scenarios.json and ddp_patterns.json,
// made by gen_ddp_scenarios.py and gen_ddp_patterns.py): reading a file, and a run's options as ReproOptions.
#pragma once

#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "apps/tinyddp/repro/repro.h"

namespace tinyddp::app::testing {

// The golden file tests/golden/NAME, read once per process (tests run from the repository root).
inline nlohmann::json read_golden(const std::string& name) {
  std::ifstream f("tests/golden/" + name);
  if (!f.good()) throw std::runtime_error("tests/golden/" + name + " not found: run the tests from the repository root");
  return nlohmann::json::parse(f);
}

// A golden run's options; keys a file predates take their defaults.
inline ReproOptions options_of(const nlohmann::json& o) {
  ReproOptions r;
  r.find_unused_parameters = o["find_unused_parameters"];
  r.static_graph = o["static_graph"];
  r.extra_unused_parameter = o["extra_unused_parameter"];
  r.same_data = o["same_data"];
  if (o["iterations"].is_array()) r.rank_iterations = o["iterations"].get<std::vector<int>>();
  else r.iterations = o["iterations"];
  r.bucket_cap_mb = o["bucket_cap_mb"];
  r.buffer = o.value("buffer", false);
  r.broadcast_buffers = o.value("broadcast_buffers", true);
  r.join = o.value("join", false);
  r.join_divide_by_initial_world_size = o.value("join_divide_by_initial_world_size", true);
  r.join_throw_on_early_termination = o.value("join_throw_on_early_termination", false);
  r.gan = o.value("gan", false);
  const std::string d = o["debug"];
  r.debug = d == "INFO" ? dist::DebugLevel::info : d == "DETAIL" ? dist::DebugLevel::detail : dist::DebugLevel::off;
  r.timeout_ms = 10000;
  return r;
}

// Whether ranks of this run end differently or wait on a peer that left (a multi-process backend cannot
// release them, so mpirun runs skip these).
inline bool ranks_diverge(const nlohmann::json& run) {
  if (!run.contains("outcome_by_rank")) return false;
  for (const auto& [rank, outcome] : run["outcome_by_rank"].items())
    if (outcome != run["outcome_by_rank"]["0"]) return true;
  return !run["hung_ranks"].empty();
}

}  // namespace tinyddp::app::testing
