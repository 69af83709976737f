#include "dist/trace_file.h"

#include <cmath>
#include <fstream>
#include <iostream>
#include <set>

#include "dist/mpi_process_group.h"
#include "base/error.h"

namespace tinyddp::dist {

namespace {

// Nanosecond resolution is all a steady clock offers; more digits only make the file longer.
double round_ns(double us) { return std::round(us * 1000.0) / 1000.0; }

nlohmann::json arg_json(const trace::Arg& a) {
  return std::visit([](const auto& v) { return nlohmann::json(v); }, a);
}

const char* thread_label(int tid) {
  return tid == trace::kCommTrack ? "comm: collectives in flight" : "compute: forward, backward, hooks, step";
}

}  // namespace

nlohmann::json chrome_trace(const std::vector<trace::Event>& events, const nlohmann::json& other_data) {
  nlohmann::json out = nlohmann::json::array();
  std::set<int> pids;
  for (const trace::Event& e : events) pids.insert(e.pid);
  for (int pid : pids) {
    out.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", pid}, {"tid", 0}, {"args", {{"name", "rank " + std::to_string(pid)}}}});
    out.push_back({{"name", "process_sort_index"}, {"ph", "M"}, {"pid", pid}, {"tid", 0}, {"args", {{"sort_index", pid}}}});
    for (int tid : {trace::kComputeTrack, trace::kCommTrack}) {
      out.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", pid}, {"tid", tid}, {"args", {{"name", thread_label(tid)}}}});
      out.push_back({{"name", "thread_sort_index"}, {"ph", "M"}, {"pid", pid}, {"tid", tid}, {"args", {{"sort_index", tid}}}});
    }
  }
  for (const trace::Event& e : events) {
    nlohmann::json args = nlohmann::json::object();
    for (const auto& [key, value] : e.what.args) args[key] = arg_json(value);
    nlohmann::json j = {{"name", e.what.name}, {"cat", e.what.category}, {"ph", std::string(1, e.phase)},
                        {"ts", round_ns(e.ts_us)}, {"pid", e.pid}, {"tid", e.tid}, {"args", args}};
    if (e.phase == 'X') j["dur"] = round_ns(e.dur_us);
    if (e.phase == 'i') j["s"] = "t";   // an instant on its thread track
    out.push_back(std::move(j));
  }
  nlohmann::json other = other_data.is_object() ? other_data : nlohmann::json::object();
  other["tool"] = "tinyddp";
  return {{"traceEvents", out}, {"displayTimeUnit", "ns"}, {"otherData", other}};
}

std::string rank_trace_path(const std::string& path, int rank) {
  const std::string stem = path.size() > 5 && path.ends_with(".json") ? path.substr(0, path.size() - 5) : path;
  return stem + ".rank" + std::to_string(rank) + ".json";
}

nlohmann::json read_trace(const std::string& path) {
  std::ifstream in(path);
  TINYDDP_CHECK(in.good(), "cannot read the trace file '", path, "'.");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw Error("'" + path + "' is not JSON: " + e.what());
  }
  TINYDDP_CHECK(j.is_object() && j.contains("traceEvents") && j["traceEvents"].is_array(), "'", path,
                "' is not a Chrome trace: expected an object with a \"traceEvents\" array (write one with "
                "`tinyddp repro NAME --trace FILE`).");
  return j;
}

nlohmann::json merge_traces(const std::vector<nlohmann::json>& traces, const std::vector<std::string>& names) {
  TINYDDP_CHECK(!traces.empty(), "trace-merge: no input files.");
  auto sync_of = [&](size_t i) {
    const auto& other = traces[i].value("otherData", nlohmann::json::object());
    TINYDDP_CHECK(other.contains("clock_sync_us") && other["clock_sync_us"].get<double>() >= 0, "trace-merge: '",
                  names[i], "' has no clock_sync_us in its otherData; record it with `--trace` under mpirun.");
    return other["clock_sync_us"].get<double>();
  };
  const double reference = sync_of(0);
  nlohmann::json events = nlohmann::json::array();
  std::set<std::pair<int, std::string>> metadata_seen;   // (pid, the metadata event) once
  nlohmann::json offsets = nlohmann::json::array();
  std::set<int> pids_by_file;
  for (size_t i = 0; i < traces.size(); ++i) {
    const double offset = reference - sync_of(i);
    offsets.push_back(round_ns(offset));
    std::set<int> pids;
    for (const auto& e : traces[i]["traceEvents"]) {
      if (e.value("ph", "") == "M") {
        if (metadata_seen.insert({e.value("pid", 0), e.dump()}).second) events.push_back(e);
        continue;
      }
      nlohmann::json shifted = e;
      shifted["ts"] = round_ns(e["ts"].get<double>() + offset);
      pids.insert(e.value("pid", 0));
      events.push_back(std::move(shifted));
    }
    for (int pid : pids)
      TINYDDP_CHECK(pids_by_file.insert(pid).second, "trace-merge: rank ", pid, " appears in more than one input ('",
                    names[i], "' is the second); merge the files of one run, one per rank.");
  }
  std::stable_sort(events.begin(), events.end(), [](const nlohmann::json& a, const nlohmann::json& b) {
    const bool ma = a.value("ph", "") == "M", mb = b.value("ph", "") == "M";
    if (ma != mb) return ma;
    return !ma && a["ts"].get<double>() < b["ts"].get<double>();
  });
  nlohmann::json other = traces[0].value("otherData", nlohmann::json::object());
  other.erase("rank");
  other["merged_from"] = names;
  other["clock_offsets_us"] = offsets;
  other["ranks"] = pids_by_file.size();
  return {{"traceEvents", events}, {"displayTimeUnit", "ns"}, {"otherData", other}};
}

TraceRecording::TraceRecording(std::string path, std::string backend, nlohmann::json info)
    : path_(std::move(path)), backend_(std::move(backend)), info_(std::move(info)) {
  trace::start();
  if (backend_ == "mpi") {
    // Every rank passes the barrier at (nearly) the same instant: the reference point trace-merge aligns.
    auto pg = mpi_world();
    rank_ = pg->rank();
    trace::RankScope scope(rank_);
    pg->barrier()->wait();
    trace::mark_clock_sync();
  } else {
    trace::mark_clock_sync();   // one process, one clock: the mark only makes the file self-describing
  }
}

TraceRecording::~TraceRecording() {
  if (!finished_) trace::stop();
}

std::string TraceRecording::finish() {
  trace::stop();
  finished_ = true;
  const std::vector<trace::Event> events = trace::snapshot();
  nlohmann::json other = info_;
  other["backend"] = backend_;
  other["clock_sync_us"] = round_ns(trace::clock_sync_us());
  const std::string out = backend_ == "mpi" ? rank_trace_path(path_, rank_) : path_;
  if (backend_ == "mpi") other["rank"] = rank_;
  std::ofstream f(out);
  TINYDDP_CHECK(f.good(), "--trace: cannot write '", out, "'.");
  f << chrome_trace(events, other).dump() << "\n";
  TINYDDP_CHECK(f.good(), "--trace: writing '", out, "' failed.");
  std::cerr << "tinyddp: trace written to " + out + " (" + std::to_string(events.size()) +
                   " events): open it at https://ui.perfetto.dev or chrome://tracing, or draw an iteration with "
                   "`tinyddp trace-view " + out + " --svg OUT.svg`" +
                   (backend_ == "mpi" ? "; join the ranks' files with `tinyddp trace-merge -o OUT.json FILE.rank0.json FILE.rank1.json ...`" : "") + "\n";
  return out;
}

}  // namespace tinyddp::dist
