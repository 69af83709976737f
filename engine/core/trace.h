// Tracing: a process-wide recorder of spans and instant events, for per-rank timelines of the forward, the
// backward, the reducer and the communication (docs/tracing.md). apps/tinyddp/trace_file.h writes what it
// records as Chrome trace-event JSON (Perfetto, chrome://tracing) and draws it as an SVG.
//
//   trace::start();                                       // clears, then records (process-wide)
//   trace::RankScope rank(pg.rank());                     // this thread's events belong to rank r
//   { auto s = trace::span([&] { return trace::What{"autograd", node.name(), {{"seq", 12}}}; }); ... }
//   trace::instant([&] { return trace::What{"error", "RuntimeError", {{"message", text}}}; });
//   trace::stop();  std::vector<trace::Event> events = trace::snapshot();
//
// Off (the default), every site costs one relaxed atomic load and a branch: the lambda that describes the
// event is not called, nothing is allocated and no clock is read. On, an event costs a clock read, the
// strings of its name and arguments, and a push into the recording thread's own buffer.
//
// Tracks. An event's process (pid) is a rank: the thread-local current rank (RankScope; 0 when none is
// set), so the thread backend, whose ranks are threads of one process, puts every rank in one file. Its
// thread track (tid) is an execution context, not an OS thread:
//   kComputeTrack  the rank's own thread: forward, backward (autograd nodes, AccumulateGrad, reducer
//                  hooks), finalize, optimizer step
//   kCommTrack     collectives in flight, from launch to completion (comm_begin/comm_end, by the backends)
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

constexpr int kComputeTrack = 1;
constexpr int kCommTrack = 2;

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
  int pid = 0;           // rank
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
// Every recorded event, stably sorted by start time (events of one thread keep their order). Collectives
// launched but never completed appear as instants named after them with "completed": false.
std::vector<Event> snapshot();
// Microseconds since this process's trace epoch (the first call of now_us or start in the process).
double now_us();

// The thread's current rank, the pid of the events it records.
int current_rank();
class RankScope {
 public:
  explicit RankScope(int rank);
  ~RankScope();
  RankScope(const RankScope&) = delete;
  RankScope& operator=(const RankScope&) = delete;

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

// ---- collectives (process-group backends) ----
// A collective of rank `rank` started; `key` identifies it until comm_end (owner: the backend object that
// tracks it, id: a sequence number or 0). The span is drawn on the comm track of that rank, named after the
// innermost CommLabel of the launching thread if there is one ("allreduce bucket 0"), else after `kind`.
void comm_begin(int rank, const void* owner, uint64_t id, const char* kind, int64_t bytes);
// The collective completed on rank `rank` (recorded by whichever thread saw it complete).
void comm_end(int rank, const void* owner, uint64_t id);

// While alive, collectives launched by this thread are named and annotated by `what` (the reducer labels a
// bucket's allreduce with its index and parameters). Nests; cheap when tracing is off.
class CommLabel {
 public:
  template <typename Describe>
  explicit CommLabel(Describe&& describe) {
    if (on()) push(describe());
  }
  ~CommLabel() {
    if (pushed_) pop();
  }
  CommLabel(const CommLabel&) = delete;
  CommLabel& operator=(const CommLabel&) = delete;

 private:
  void push(What&& what);
  void pop();
  bool pushed_ = false;
};

// ---- clock alignment across processes (mpirun) ----
// Record now as this process's reference point; call it on every rank right after a barrier, so that the
// reference points of all processes name (nearly) the same instant. tinyddp trace-merge aligns on them.
void mark_clock_sync();
// The reference point, or a negative value when none was marked since start().
double clock_sync_us();

}  // namespace tinyddp::trace
