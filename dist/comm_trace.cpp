#include "dist/comm_trace.h"

#include <string>
#include <vector>

namespace tinyddp::trace {

namespace {
thread_local std::vector<What> tl_comm_labels;   // innermost last
}  // namespace

void comm_begin(int rank, const void* owner, uint64_t id, const char* kind, int64_t bytes) {
  if (!on()) return;
  Event e{'X', {"comm", kind, {}}, rank, kCommTrack, now_us(), 0};
  if (!tl_comm_labels.empty()) {
    const What& label = tl_comm_labels.back();
    e.what.name = std::string(kind) + " " + label.name;
    e.what.args = label.args;
  }
  e.what.args.emplace_back("collective", std::string(kind));
  e.what.args.emplace_back("bytes", bytes);
  begin_async(std::move(e), owner, id);
}

void comm_end(int rank, const void* owner, uint64_t id) { end_async(rank, owner, id); }

void CommLabel::push(What&& what) {
  tl_comm_labels.push_back(std::move(what));
  pushed_ = true;
}

void CommLabel::pop() { tl_comm_labels.pop_back(); }

}  // namespace tinyddp::trace
