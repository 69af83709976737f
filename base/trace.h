// Tracing: a process-wide recorder of spans and instant events, for timelines of the forward, the backward
// and whatever the layers above add (docs/tracing.md). This is the rank-free core: it knows threads, tracks
// and a "process" number per event, nothing about ranks or collectives. dist/comm_trace.h adds those (a
// rank is a trace process; collectives in flight are async spans on their own track), and
// dist/trace_file.h writes what is recorded as Chrome trace-event JSON (Perfetto, chrome://tracing).
//
//   trace::start();                                       // clears, then records (process-wide)
//   trace::ProcessScope lane(r);                          // this thread's events belong to process lane r
//   { auto s = trace::span([&] { return trace::What{"autograd", node.name(), {{"seq", 12}}}; }); ... }
//   trace::instant([&] { return trace::What{"error", "RuntimeError", {{"message", text}}}; });
//   trace::stop();  std::vector<trace::Event> events = trace::snapshot();
//
// Off (the default), every site costs one relaxed atomic load and a branch: the lambda that describes the
// event is not called, nothing is allocated and no clock is read. On, an event costs a clock read, the
// strings of its name and arguments, and a push into the recording thread's own buffer.
//
// Tracks. An event's process (pid) is the thread-local current process lane (ProcessScope; 0 when none is
// set), so threads that stand for separate processes (the thread backend's ranks) share one file. Its
// thread track (tid) is an execution context, not an OS thread: kComputeTrack is the lane's own thread
// (spans and instants); layers above add tracks of their own for async spans (begin_async/end_async).
// Timestamps are microseconds (fractional) of one steady clock, shared by every thread of the process;
// mark_clock_sync() records a reference point for merging the files of separate processes.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace tinyddp::trace {

constexpr int kComputeTrack = 1;   // the lane's own thread: spans and instants

using Arg = std::variant<int64_t, double, bool, std::string, std::vector<int64_t>>;
using Args = std::vector<std::pair<std::string, Arg>>;

// What an event is: category (a lane in the timeline view, a filter in Perfetto), name, arguments.
struct What {
  std::string category;
  std::string name;
  Args args;
};

struct Event {
  char phase = 'X';      // 'X' a span, 'i' an instant
  What what;
  int pid = 0;           // process lane (a rank, for dist/)
  int tid = kComputeTrack;
  double ts_us = 0;      // start, microseconds since the process's trace epoch
  double dur_us = 0;     // spans only
};

namespace detail {
inline std::atomic<bool> g_on{false};
void record(Event&& event);
struct OpenSpan;                         // what a running span needs at its end (trace.cpp)
OpenSpan* begin_span(What&& what);
void end_span(OpenSpan* open);           // records the span and frees `open`
void record_instant(What&& what);
}  // namespace detail

// Whether events are being recorded. The only cost of a trace site when tracing is off.
inline bool on() { return detail::g_on.load(std::memory_order_relaxed); }

void start();   // clears every buffer, then records
void stop();    // stops recording; the events stay until the next start()
// Every recorded event, stably sorted by start time (events of one thread keep their order). Async spans
// begun but never ended appear as instants with the argument "completed": false.
std::vector<Event> snapshot();
// Microseconds since this process's trace epoch (the first call of now_us or start in the process).
double now_us();

// The thread's current process lane, the pid of the events it records. Nests; restores the previous lane.
int current_process();
class ProcessScope {
 public:
  explicit ProcessScope(int pid);
  ~ProcessScope();
  ProcessScope(const ProcessScope&) = delete;
  ProcessScope& operator=(const ProcessScope&) = delete;

 private:
  int previous_;
};

// A span on the compute track, from construction to destruction. A span ended by an exception carries the
// argument "exception": true (what it was doing when something threw through it). Off, it is one null pointer.
class Span {
 public:
  Span() = default;
  explicit Span(What&& what) : open_(detail::begin_span(std::move(what))) {}
  Span(Span&& other) noexcept : open_(std::exchange(other.open_, nullptr)) {}
  Span& operator=(Span&&) = delete;
  ~Span() {
    if (open_) detail::end_span(open_);
  }

 private:
  detail::OpenSpan* open_ = nullptr;
};

// `describe` (returning What) runs only when tracing is on.
template <typename Describe>
Span span(Describe&& describe) {
  if (!on()) return Span();
  return Span(describe());
}
template <typename Describe>
void instant(Describe&& describe) {
  if (on()) detail::record_instant(describe());
}

// ---- async spans: begun on one thread, ended on any (a collective in flight) ----
// `event` (phase 'X', its pid, tid, what and ts_us filled in by the caller) stays open under the key
// (event.pid, owner, id) until end_async with the same key records it with its duration. owner: the object
// that tracks it; id: a sequence number or 0. Both are no-ops when tracing is off.
void begin_async(Event&& event, const void* owner, uint64_t id);
void end_async(int pid, const void* owner, uint64_t id);

// ---- clock alignment across processes (mpirun) ----
// Record now as this process's reference point; call it in every process right after a barrier, so that the
// reference points of all processes name (nearly) the same instant. tinyddp trace-merge aligns on them.
void mark_clock_sync();
// The reference point, or a negative value when none was marked since start().
double clock_sync_us();

}  // namespace tinyddp::trace
