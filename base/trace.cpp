#include "base/trace.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>

namespace tinyddp::trace {

namespace {

using Clock = std::chrono::steady_clock;

Clock::time_point epoch() {
  static const Clock::time_point t0 = Clock::now();
  return t0;
}

// Each thread records into its own buffer (its mutex is only contended by snapshot and start); the
// registry keeps every buffer, also of threads that have ended, until the next start().
struct ThreadBuffer {
  std::mutex mu;
  std::vector<Event> events;
};

struct Registry {
  std::mutex mu;
  std::vector<std::shared_ptr<ThreadBuffer>> buffers;
  // Async spans in flight: (pid, owner, id) -> the span to complete.
  std::map<std::tuple<int, const void*, uint64_t>, Event> open_async;
  double clock_sync_us = -1;
};

Registry& registry() {
  static Registry* r = new Registry();   // never destroyed: threads may record during static destruction
  return *r;
}

ThreadBuffer& thread_buffer() {
  thread_local std::shared_ptr<ThreadBuffer> buffer = [] {
    auto b = std::make_shared<ThreadBuffer>();
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mu);
    r.buffers.push_back(b);
    return b;
  }();
  return *buffer;
}

thread_local int tl_pid = 0;

}  // namespace

double now_us() { return std::chrono::duration<double, std::micro>(Clock::now() - epoch()).count(); }

namespace detail {

void record(Event&& event) {
  ThreadBuffer& b = thread_buffer();
  std::lock_guard<std::mutex> lock(b.mu);
  b.events.push_back(std::move(event));
}

struct OpenSpan {
  What what;
  double ts_us;
  int pid;
  int uncaught;   // exceptions in flight at the start: more at the end means one is unwinding this span
};

OpenSpan* begin_span(What&& what) {
  return new OpenSpan{std::move(what), now_us(), tl_pid, std::uncaught_exceptions()};
}

void end_span(OpenSpan* open) {
  std::unique_ptr<OpenSpan> owned(open);
  if (!on()) return;   // stopped while the span was open
  const double end = now_us();
  if (std::uncaught_exceptions() > open->uncaught) open->what.args.emplace_back("exception", true);
  record({'X', std::move(open->what), open->pid, kComputeTrack, open->ts_us, end - open->ts_us});
}

void record_instant(What&& what) { record({'i', std::move(what), tl_pid, kComputeTrack, now_us(), 0}); }

}  // namespace detail

void start() {
  epoch();
  Registry& r = registry();
  {
    std::lock_guard<std::mutex> lock(r.mu);
    // Drop the buffers of threads that have ended (only the registry holds them), clear the others.
    std::erase_if(r.buffers, [](const std::shared_ptr<ThreadBuffer>& b) { return b.use_count() == 1; });
    for (auto& b : r.buffers) {
      std::lock_guard<std::mutex> block(b->mu);
      b->events.clear();
    }
    r.open_async.clear();
    r.clock_sync_us = -1;
  }
  detail::g_on.store(true, std::memory_order_relaxed);
}

void stop() { detail::g_on.store(false, std::memory_order_relaxed); }

std::vector<Event> snapshot() {
  Registry& r = registry();
  std::vector<Event> out;
  std::lock_guard<std::mutex> lock(r.mu);
  for (auto& b : r.buffers) {
    std::lock_guard<std::mutex> block(b->mu);
    out.insert(out.end(), b->events.begin(), b->events.end());
  }
  for (const auto& [key, open] : r.open_async) {
    Event e = open;
    e.phase = 'i';
    e.what.args.emplace_back("completed", false);
    out.push_back(std::move(e));
  }
  std::stable_sort(out.begin(), out.end(), [](const Event& a, const Event& b) { return a.ts_us < b.ts_us; });
  return out;
}

int current_process() { return tl_pid; }

ProcessScope::ProcessScope(int pid) : previous_(tl_pid) { tl_pid = pid; }
ProcessScope::~ProcessScope() { tl_pid = previous_; }

void begin_async(Event&& event, const void* owner, uint64_t id) {
  if (!on()) return;
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  const int pid = event.pid;
  r.open_async[{pid, owner, id}] = std::move(event);
}

void end_async(int pid, const void* owner, uint64_t id) {
  if (!on()) return;
  const double end = now_us();
  Event e;
  {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mu);
    auto it = r.open_async.find({pid, owner, id});
    if (it == r.open_async.end()) return;   // began before start()
    e = std::move(it->second);
    r.open_async.erase(it);
  }
  e.dur_us = end - e.ts_us;
  detail::record(std::move(e));
}

void mark_clock_sync() {
  const double t = now_us();
  {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mu);
    r.clock_sync_us = t;
  }
  if (on()) detail::record({'i', {"clock", "clock sync", {}}, tl_pid, kComputeTrack, t, 0});
}

double clock_sync_us() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  return r.clock_sync_us;
}

}  // namespace tinyddp::trace
