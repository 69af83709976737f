// Shared by the trace tests: run a repro with tracing on and read the trace back as its file holds it.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "apps/tinyddp/repro/repro.h"
#include "dist/trace_file.h"
#include "dist/comm_trace.h"

namespace tinyddp::app::testing {

// One non-metadata event of a trace file.
struct TraceEv {
  std::string name, cat, ph;
  double ts = 0, dur = 0;
  int pid = 0, tid = 0;
  nlohmann::json args;
  double end() const { return ts + dur; }
  int64_t i(const char* key) const { return args.value(key, int64_t{-1}); }
};

inline std::vector<TraceEv> trace_events(const nlohmann::json& trace) {
  std::vector<TraceEv> out;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "M") continue;
    out.push_back({e["name"], e["cat"], e["ph"], e["ts"], e.value("dur", 0.0), e["pid"], e["tid"], e["args"]});
  }
  return out;
}

// Runs the plan with tracing on; returns the trace as chrome_trace writes it (parsed back from its text).
inline nlohmann::json traced_repro(const std::string& scenario, const std::string& plan, const ReproOptions& o,
                                   ReproResult* result) {
  trace::start();
  *result = run_repro(scenario, plan, o);
  trace::stop();
  return nlohmann::json::parse(dist::chrome_trace(trace::snapshot(), {{"scenario", scenario}, {"plan", plan}}).dump());
}

}  // namespace tinyddp::app::testing
