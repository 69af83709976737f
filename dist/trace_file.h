// Trace files: what base/trace.h and dist/comm_trace.h record, as Chrome trace-event JSON (the format Perfetto and
// chrome://tracing open), one file per process, and their merge (docs/tracing.md). The commands around them
// live in apps/tinyddp/trace/; this library sits beside dist/ because TraceRecording's clock mark under
// mpirun needs the mpi process group's barrier.
//
//   tinyddp repro two-backward --trace t.json                       thread backend: one file, a process per rank
//   mpirun -np 2 tinyddp repro two-backward --backend mpi --trace t.json     t.rank0.json, t.rank1.json
//   tinyddp trace-merge -o t.json t.rank0.json t.rank1.json         one file, every rank on rank 0's clock
//   tinyddp trace-view t.json --svg t.svg [--iteration 2]           one iteration as a timeline picture
//
// The file: {"traceEvents": [...], "displayTimeUnit": "ns", "otherData": {...}}. Each event has name, cat,
// ph ("X" span with dur, "i" instant, "M" metadata), ts (microseconds), pid (the rank), tid (1: compute,
// 2: comm) and args. otherData holds "tool": "tinyddp", the command's description, and "clock_sync_us":
// the timestamp this process recorded right after a barrier with every other rank (trace-merge aligns
// the files of separate processes on it).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dist/comm_trace.h"

namespace tinyddp::dist {

// The events as a Chrome trace: process and thread names for every rank seen, then the events.
nlohmann::json chrome_trace(const std::vector<trace::Event>& events, const nlohmann::json& other_data);

// Where rank `rank` of an mpirun job writes when asked for `path`: t.json -> t.rank0.json, t -> t.rank0.json.
std::string rank_trace_path(const std::string& path, int rank);

// Reads and checks a trace file (throws with the file name on a missing file or a malformed trace).
nlohmann::json read_trace(const std::string& path);

// Joins per-process traces on one clock: each file's timestamps are shifted by (first file's clock_sync_us -
// its own), so the barrier every rank passed at startup lands at one instant.
nlohmann::json merge_traces(const std::vector<nlohmann::json>& traces, const std::vector<std::string>& names);

// `--trace FILE` for a command: records from construction to finish(), then writes FILE (thread backend,
// or no backend) or, under mpirun (backend "mpi"), one file per rank named by rank_trace_path (t.json:
// t.rank0.json, t.rank1.json, ...), after a barrier-synchronized clock mark. Commands use it as
//   std::optional<TraceRecording> rec;  if (!path.empty()) rec.emplace(path, backend, info);
//   ... run ...
//   if (rec) rec->finish();
class TraceRecording {
 public:
  TraceRecording(std::string path, std::string backend, nlohmann::json info);
  ~TraceRecording();   // stops recording if finish() was not reached (an exception)
  TraceRecording(const TraceRecording&) = delete;
  TraceRecording& operator=(const TraceRecording&) = delete;
  // Stops, writes the file and returns its path (also printed to stderr with how to open it).
  std::string finish();

 private:
  std::string path_, backend_;
  nlohmann::json info_;
  int rank_ = 0;
  bool finished_ = false;
};

}  // namespace tinyddp::dist
