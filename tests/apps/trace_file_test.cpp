// Trace files: the Chrome trace-event format and its required fields, what is recorded (and that nothing is
// when tracing is off), per-rank file names, and trace-merge's clock alignment.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>

#include "apps/tinyddp/repro/scenarios.h"
#include "trace_test_util.h"

namespace tinyddp::app {
namespace {

using testing::TraceEv;
using testing::trace_events;

nlohmann::json combined_loss_trace(ReproResult* result) {
  const Scenario& s = *find_scenario("combined-loss");
  return testing::traced_repro(s.name, s.plan, ReproOptions{}, result);
}

TEST(TraceFile, CarriesTheRequiredFields) {
  ReproResult result;
  const nlohmann::json t = combined_loss_trace(&result);
  ASSERT_TRUE(t["traceEvents"].is_array());
  EXPECT_EQ(t["otherData"]["tool"], "tinyddp");
  std::set<std::pair<int, int>> named_threads;
  std::set<int> named_processes;
  for (const auto& e : t["traceEvents"]) {
    SCOPED_TRACE(e.dump());
    for (const char* key : {"name", "ph", "pid", "tid", "args"}) ASSERT_TRUE(e.contains(key)) << key;
    EXPECT_TRUE(e["name"].is_string());
    EXPECT_TRUE(e["args"].is_object());
    const std::string ph = e["ph"];
    if (ph == "M") {
      if (e["name"] == "process_name") named_processes.insert(e["pid"].get<int>());
      if (e["name"] == "thread_name") named_threads.insert({e["pid"].get<int>(), e["tid"].get<int>()});
      continue;
    }
    ASSERT_TRUE(ph == "X" || ph == "i");
    ASSERT_TRUE(e.contains("cat") && e["cat"].is_string());
    ASSERT_TRUE(e.contains("ts") && e["ts"].is_number());
    EXPECT_GE(e["ts"].get<double>(), 0);
    if (ph == "X") {
      ASSERT_TRUE(e.contains("dur") && e["dur"].is_number());
      EXPECT_GE(e["dur"].get<double>(), 0);
    } else {
      EXPECT_EQ(e["s"], "t");
    }
    const int pid = e["pid"], tid = e["tid"];
    EXPECT_TRUE(pid == 0 || pid == 1);
    EXPECT_TRUE(tid == trace::kComputeTrack || tid == trace::kCommTrack);
  }
  // One process per rank, each with its two tracks named.
  EXPECT_EQ(named_processes, (std::set<int>{0, 1}));
  for (int pid : {0, 1})
    for (int tid : {trace::kComputeTrack, trace::kCommTrack}) EXPECT_TRUE(named_threads.count({pid, tid}));
}

TEST(TraceFile, RecordsEveryKindOfEvent) {
  ReproResult result;
  const auto events = trace_events(combined_loss_trace(&result));
  std::map<std::string, int> per_category;
  for (const TraceEv& e : events) ++per_category[e.cat];
  // Per rank and iteration: forward, backward, step (3 x 3 x 2 calls); 10 AccumulateGrad and 10 hooks.
  EXPECT_EQ(per_category["call"], 18);
  EXPECT_EQ(per_category["iteration"], 6);
  EXPECT_EQ(per_category["accumulate_grad"], 60);
  EXPECT_EQ(per_category["hook"], 60);
  EXPECT_GT(per_category["autograd"], 60);
  EXPECT_EQ(per_category["wait"], 6);   // one bucket per finalize
  for (const TraceEv& e : events) {
    if (e.cat == "call") {
      EXPECT_EQ(e.tid, trace::kComputeTrack);
    }
    if (e.cat == "autograd") {
      EXPECT_GE(e.i("seq"), 0);
    }
    if (e.cat == "hook") {
      EXPECT_GE(e.i("param"), 0);
      EXPECT_EQ(e.args["name"], result.param_names.at(e.i("param")));
    }
    if (e.cat == "comm" && e.args.contains("bucket")) {
      EXPECT_EQ(e.name, "allreduce bucket 0");
      EXPECT_EQ(e.i("bytes"), 772);   // the scenario model's 193 float32 parameters
      EXPECT_EQ(e.args["params"].size(), 10u);
    }
  }
  int finalizes = 0;
  for (const TraceEv& e : events) finalizes += e.name == "finalize";
  EXPECT_EQ(finalizes, 6);
}

TEST(TraceFile, WarningsAreInstantsWithTheirMessage) {
  const Scenario& s = *find_scenario("find-unused");
  ReproResult result;
  ReproOptions o;
  o.find_unused_parameters = true;
  const auto events = trace_events(testing::traced_repro(s.name, s.plan, o, &result));
  std::set<std::string> traced;
  for (const TraceEv& e : events)
    if (e.cat == "warning") traced.insert(e.args["message"].get<std::string>());
  ASSERT_FALSE(result.warnings.empty());
  for (const std::string& w : result.warnings) EXPECT_TRUE(traced.count(w)) << w;
}

TEST(TraceFile, OffRecordsNothing) {
  trace::start();
  trace::stop();
  const Scenario& s = *find_scenario("two-backward");
  run_repro(s.name, s.plan, ReproOptions{});
  EXPECT_TRUE(trace::snapshot().empty());
}

TEST(TraceFile, PerRankPaths) {
  EXPECT_EQ(dist::rank_trace_path("t.json", 0), "t.rank0.json");
  EXPECT_EQ(dist::rank_trace_path("out/run.json", 3), "out/run.rank3.json");
  EXPECT_EQ(dist::rank_trace_path("trace", 1), "trace.rank1.json");
}

TEST(TraceFile, RecordingWritesAReadableFile) {
  const std::string path = (std::filesystem::temp_directory_path() / "tinyddp_trace_file_test.json").string();
  {
    dist::TraceRecording rec(path, "thread", {{"scenario", "combined-loss"}});
    const Scenario& s = *find_scenario("combined-loss");
    run_repro(s.name, s.plan, ReproOptions{});
    EXPECT_EQ(rec.finish(), path);
  }
  const nlohmann::json t = dist::read_trace(path);
  EXPECT_EQ(t["otherData"]["scenario"], "combined-loss");
  EXPECT_EQ(t["otherData"]["backend"], "thread");
  EXPECT_GE(t["otherData"]["clock_sync_us"].get<double>(), 0);
  EXPECT_GT(t["traceEvents"].size(), 100u);
  std::remove(path.c_str());
  EXPECT_THROW(dist::read_trace(path), Error);
}

// Two processes' files whose clocks started 5 ms apart: after the merge, the barrier mark of both is at one
// instant and every event keeps its distance to it.
TEST(TraceMerge, AlignsTheFilesOnTheirClockSync) {
  auto file = [](int rank, double sync, double event_ts) {
    trace::Event mark{'i', {"clock", "clock sync", {}}, rank, trace::kComputeTrack, sync, 0};
    trace::Event fwd{'X', {"call", "forward", {}}, rank, trace::kComputeTrack, event_ts, 10};
    return dist::chrome_trace({mark, fwd}, {{"clock_sync_us", sync}, {"rank", rank}});
  };
  const nlohmann::json merged = dist::merge_traces({file(0, 100, 130), file(1, 5100, 5125)}, {"a.rank0.json", "a.rank1.json"});
  std::map<std::string, double> ts;   // "pid name" -> ts
  int metadata = 0;
  for (const auto& e : merged["traceEvents"]) {
    if (e["ph"] == "M") {
      ++metadata;
      continue;
    }
    ts[std::to_string(e["pid"].get<int>()) + " " + e["name"].get<std::string>()] = e["ts"];
  }
  EXPECT_DOUBLE_EQ(ts["0 clock sync"], 100);
  EXPECT_DOUBLE_EQ(ts["1 clock sync"], 100);
  EXPECT_DOUBLE_EQ(ts["0 forward"], 130);
  EXPECT_DOUBLE_EQ(ts["1 forward"], 125);
  EXPECT_EQ(metadata, 2 * 6);   // process name and sort index, two threads' names and sort indices, per rank
  EXPECT_EQ(merged["otherData"]["ranks"], 2);
  EXPECT_FALSE(merged["otherData"].contains("rank"));
  EXPECT_EQ(merged["otherData"]["clock_offsets_us"], nlohmann::json::array({0.0, -5000.0}));
  // The same rank twice, or a file without a clock mark, is refused.
  EXPECT_THROW(dist::merge_traces({file(0, 100, 130), file(0, 200, 230)}, {"x", "y"}), Error);
  EXPECT_THROW(dist::merge_traces({dist::chrome_trace({}, {})}, {"z"}), Error);
}

}  // namespace
}  // namespace tinyddp::app
