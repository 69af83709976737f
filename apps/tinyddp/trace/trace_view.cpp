#include "apps/tinyddp/trace/trace_view.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "apps/tinyddp/svg.h"
#include "base/error.h"
#include "dist/comm_trace.h"

namespace tinyddp::app {

namespace {

// Layout, in SVG pixels. The fonts are 11 px sans-serif, about 6.5 px per character.
constexpr double kLeft = 150, kRight = 24, kTop = 74;        // plot area margins (title, subtitle, axis above)
constexpr double kLaneH = 20, kLaneGap = 3, kRankHeader = 22, kRankGap = 18;
constexpr double kCharW = 6.8;   // a little wide, so that a label never spills out of its box

struct Ev {
  std::string name, cat;
  char ph = 'X';
  double ts = 0, dur = 0;
  int pid = 0, tid = 0;
  nlohmann::json args;
  double end() const { return ts + dur; }
};

enum Lane { kCalls, kAutograd, kHooks, kReducer, kComm, kNumLanes, kNone, kMarker };
const char* const kLaneNames[kNumLanes] = {"calls", "autograd", "reducer hooks", "reducer", "comm"};

Lane lane_of(const Ev& e) {
  if (e.tid == trace::kCommTrack || e.cat == "comm") return kComm;
  if (e.cat == "call") return kCalls;
  if (e.cat == "autograd" || e.cat == "accumulate_grad") return kAutograd;
  if (e.cat == "hook") return kHooks;
  if (e.cat == "bucket" || e.cat == "reducer" || e.cat == "wait") return kReducer;
  if (e.cat == "error" || e.cat == "warning") return kMarker;
  return kNone;
}

std::string us_label(double us) {
  if (us >= 10000) return num(us / 1000) + " ms";
  std::ostringstream os;
  os << std::round(us * 10) / 10 << " µs";
  return os.str();
}

double nice_step(double range, int target) {
  const double raw = range / target;
  const double mag = std::pow(10, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (raw <= m * mag) return m * mag;
  return 10 * mag;
}

int64_t arg_int(const Ev& e, const char* key, int64_t fallback = -1) {
  auto it = e.args.find(key);
  return it != e.args.end() && it->is_number() ? it->get<int64_t>() : fallback;
}
bool arg_bool(const Ev& e, const char* key, bool fallback) {
  auto it = e.args.find(key);
  return it != e.args.end() && it->is_boolean() ? it->get<bool>() : fallback;
}
std::string arg_str(const Ev& e, const char* key) {
  auto it = e.args.find(key);
  return it != e.args.end() && it->is_string() ? it->get<std::string>() : "";
}

// The first sentence of a message, and the sentence naming parameters when there is one: what a reader needs
// from PyTorch's long texts.
std::string gist(const std::string& message) {
  std::string first = message.substr(0, message.find_first_of("\n"));
  if (auto dot = first.find(". "); dot != std::string::npos) first = first.substr(0, dot + 1);
  std::smatch m;
  static const std::regex names(
      R"((Parameter at index \d+[^.]*?marked as ready twice)|(Parameter indices which did not receive grad for rank \d+: [\d ]+)|(unsynchronized gradients on rank \d+ for \d+ parameter\(s\))|(Parameter\(s\)[^.]*?unused during first iteration))");
  if (std::regex_search(message, m, names) && first.find(m.str()) == std::string::npos) first += " … " + m.str();
  if (first.size() > 260) first = first.substr(0, 257) + "…";
  return first;
}

std::vector<std::string> wrap(const std::string& text, size_t width) {
  std::vector<std::string> lines;
  std::istringstream words(text);
  std::string word, line;
  while (words >> word) {
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      lines.push_back(line);
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  if (!line.empty()) lines.push_back(line);
  return lines;
}

struct Style {
  std::string fill, stroke = "none", text = "#111";
  double stroke_w = 1;
  std::string extra;
};

Style span_style(const Ev& e, Lane lane) {
  const bool threw = arg_bool(e, "exception", false);
  Style s;
  switch (lane) {
    case kCalls:
      s.fill = e.name.starts_with("forward")    ? "#9ecae1"
               : e.name.starts_with("backward") ? "#6baed6"
               : e.name == "optimizer step"     ? "#a1d99b"
                                                : "#e0e0e0";   // the program's own bookkeeping
      break;
    case kAutograd: s.fill = e.cat == "accumulate_grad" ? "#fd8d3c" : "#fdd0a2"; s.stroke = "#e6550d"; s.stroke_w = 0.5; break;
    case kHooks:
      if (!arg_bool(e, "armed", true)) {
        s.fill = "#e0e0e0", s.stroke = "#888", s.extra = " stroke-dasharray=\"3,2\"", s.text = "#555";
      } else if (!arg_bool(e, "grad", true)) {
        s.fill = "#ffffff", s.stroke = "#31a354", s.text = "#31a354";
      } else {
        s.fill = "#74c476", s.stroke = "#31a354";
      }
      break;
    case kReducer:
      s.fill = e.cat == "wait" ? "#756bb1" : e.name == "finalize" ? "#bcbddc" : "#efedf5";
      s.text = e.cat == "wait" ? "#fff" : "#111";
      if (e.name == "delay_all_reduce") s.stroke = "#9e9ac8";
      break;
    case kComm:
      if (e.args.contains("bucket")) s.fill = "#3182bd", s.text = "#fff";
      else s.fill = "#bdbdbd";
      break;
    default: s.fill = "#ccc";
  }
  if (threw) s.stroke = "#d62728", s.stroke_w = 2;
  return s;
}

std::string short_label(const Ev& e, Lane lane) {
  if (lane == kHooks) return std::to_string(arg_int(e, "param"));
  if (lane == kComm) return e.name;
  if (lane == kAutograd && e.name.ends_with("Backward0")) return e.name.substr(0, e.name.size() - 9);
  if (lane == kAutograd && e.name == "AccumulateGrad") return "Acc";
  return e.name;
}

std::string tooltip(const Ev& e) {
  std::string t = e.name + " [" + e.cat + "]";
  if (e.ph == 'X') t += " " + us_label(e.dur);
  if (!e.args.empty()) t += " " + e.args.dump();
  return t;
}

// ---- the steps of render_trace_svg, in order ----

// The trace's spans and instants (metadata only names the processes), and the ranks that have events.
struct Trace {
  std::vector<Ev> events;
  std::map<int, std::string> process_names;
  std::vector<int> ranks;   // sorted
};

Trace read_events(const nlohmann::json& trace_json) {
  TINYDDP_CHECK(trace_json.contains("traceEvents"), "trace-view: not a Chrome trace (no traceEvents).");
  Trace t;
  for (const auto& j : trace_json["traceEvents"]) {
    const std::string ph = j.value("ph", "X");
    if (ph == "M") {
      if (j.value("name", "") == "process_name") t.process_names[j.value("pid", 0)] = j["args"].value("name", "");
      continue;
    }
    if (ph != "X" && ph != "i") continue;
    Ev e;
    e.name = j.value("name", "");
    e.cat = j.value("cat", "");
    e.ph = ph[0];
    e.ts = j.value("ts", 0.0);
    e.dur = j.value("dur", 0.0);
    e.pid = j.value("pid", 0);
    e.tid = j.value("tid", 0);
    e.args = j.value("args", nlohmann::json::object());
    t.events.push_back(std::move(e));
  }
  for (const Ev& e : t.events)
    if (std::find(t.ranks.begin(), t.ranks.end(), e.pid) == t.ranks.end()) t.ranks.push_back(e.pid);
  std::sort(t.ranks.begin(), t.ranks.end());
  TINYDDP_CHECK(!t.ranks.empty(), "trace-view: the trace has no events.");
  return t;
}

// What one iteration shows: per rank, the events inside its window, and the time range drawn (µs).
struct Window {
  bool has_iterations = false;   // false: the trace has no iteration spans and is drawn whole
  std::map<int, std::vector<const Ev*>> shown;   // every rank has an entry, maybe empty
  double t0 = 0, t1 = 0;   // the drawn range, padded by `pad` on both sides
  double pad = 0;
};

// Per rank, from the start of iteration K to the start of iteration K+1 (or the rank's last event: an error
// raised by iteration K comes after its span has unwound).
Window select_iteration(const Trace& t, int iteration) {
  const double inf = std::numeric_limits<double>::infinity();
  Window w;
  std::map<int, std::pair<double, double>> windows;
  std::set<int64_t> iterations_seen;
  for (int r : t.ranks) {
    std::vector<const Ev*> its;
    for (const Ev& e : t.events)
      if (e.pid == r && e.cat == "iteration" && e.ph == 'X') its.push_back(&e);
    w.has_iterations |= !its.empty();
    std::sort(its.begin(), its.end(), [](const Ev* a, const Ev* b) { return a->ts < b->ts; });
    for (size_t k = 0; k < its.size(); ++k) {
      iterations_seen.insert(arg_int(*its[k], "iteration"));
      if (arg_int(*its[k], "iteration") == iteration)
        windows[r] = {its[k]->ts, k + 1 < its.size() ? its[k + 1]->ts : inf};
    }
  }
  if (!w.has_iterations) {
    for (int r : t.ranks) windows[r] = {-inf, inf};
  } else if (windows.empty()) {
    std::string seen;
    for (int64_t k : iterations_seen) seen += (seen.empty() ? "" : ", ") + std::to_string(k);
    throw Error("trace-view: iteration " + std::to_string(iteration) + " is not in the trace; it has " +
                (seen.empty() ? "none" : "iterations " + seen) + ".");
  }
  for (int r : t.ranks) w.shown[r];
  double t0 = inf, t1 = -inf;
  for (const Ev& e : t.events) {
    auto win = windows.find(e.pid);
    if (win == windows.end() || e.cat == "iteration" || e.cat == "clock") continue;
    const auto [ws, we] = win->second;
    if (!(e.ts < we && (e.end() >= ws))) continue;
    if (e.ph == 'i' && e.ts < ws) continue;
    w.shown[e.pid].push_back(&e);
    t0 = std::min(t0, std::max(e.ts, ws));
    t1 = std::max(t1, std::min(e.end(), we));
  }
  for (auto& [r, win] : windows)
    if (std::isfinite(win.first)) t0 = std::min(t0, win.first);
  TINYDDP_CHECK(std::isfinite(t0) && std::isfinite(t1), "trace-view: nothing to draw in iteration ", iteration, ".");
  if (t1 <= t0) t1 = t0 + 1;
  w.pad = (t1 - t0) * 0.01;
  w.t0 = t0 - w.pad;
  w.t1 = t1 + w.pad;
  return w;
}

// Collectives overlap (a bucket's allreduce is still in flight when the next launches): the comm lane gets
// one sub-row per collective in flight at once, packed greedily, the same number in every rank's row.
struct CommRows {
  std::map<const Ev*, int> row_of;
  int rows = 1;
};

CommRows pack_comm_rows(const Trace& t, const Window& w) {
  const double inf = std::numeric_limits<double>::infinity();
  CommRows c;
  for (int r : t.ranks) {
    std::vector<const Ev*> comms;
    for (const Ev* e : w.shown.at(r))
      if (lane_of(*e) == kComm) comms.push_back(e);
    std::stable_sort(comms.begin(), comms.end(), [](const Ev* a, const Ev* b) { return a->ts < b->ts; });
    std::vector<double> row_end;
    for (const Ev* e : comms) {
      const double end = e->ph == 'i' ? inf : e->end();
      size_t row = 0;
      while (row < row_end.size() && row_end[row] > e->ts) ++row;
      if (row == row_end.size()) row_end.push_back(end);
      row_end[row] = end;
      c.row_of[e] = static_cast<int>(row);
    }
    c.rows = std::max(c.rows, static_cast<int>(row_end.size()));
  }
  return c;
}

// Markers (errors, warnings), numbered in time order and listed under the legend. Identical messages of
// several ranks share one note.
struct Notes {
  std::vector<std::pair<std::string, std::vector<int>>> texts;   // text, ranks
  std::map<const Ev*, int> number_of;                             // a marker's note, from 1
};

Notes collect_notes(const Trace& t, const Window& w) {
  std::vector<const Ev*> markers;
  for (int r : t.ranks)
    for (const Ev* e : w.shown.at(r))
      if (lane_of(*e) == kMarker) markers.push_back(e);
  std::stable_sort(markers.begin(), markers.end(), [](const Ev* a, const Ev* b) { return a->ts < b->ts; });
  Notes notes;
  for (const Ev* m : markers) {
    const Ev& e = *m;
    const std::string text = e.cat == "error" ? e.name + " at " + arg_str(e, "raised_at") + ": " + gist(arg_str(e, "message"))
                                              : "warning: " + gist(arg_str(e, "message"));
    // Ranks' messages often differ only by the rank they name: one note for all, naming "rank r".
    static const std::regex rank_number(R"(([Rr]ank) \d+)");
    const std::string key = std::regex_replace(text, rank_number, "$1 r");
    size_t k = 0;
    while (k < notes.texts.size() && std::regex_replace(notes.texts[k].first, rank_number, "$1 r") != key) ++k;
    if (k == notes.texts.size()) notes.texts.push_back({text, {}});
    else notes.texts[k].first = key;
    notes.texts[k].second.push_back(e.pid);
    notes.number_of[m] = static_cast<int>(k) + 1;
  }
  return notes;
}

// Where things go: the time axis's mapping and the heights of a rank's row.
struct Layout {
  double width = 0, plot_w = 0;
  double t0 = 0, t1 = 0;   // the drawn range (µs)
  int comm_rows = 1;
  double comm_row_h = 0, comm_h = 0, rank_h = 0;

  Layout(double width_px, const Window& w, const CommRows& comm)
      : width(width_px), plot_w(width_px - kLeft - kRight), t0(w.t0), t1(w.t1), comm_rows(comm.rows) {
    comm_row_h = comm_rows == 1 ? kLaneH : 16;
    comm_h = comm_rows * comm_row_h;
    rank_h = kRankHeader + static_cast<int>(kComm) * (kLaneH + kLaneGap) + comm_h + kLaneGap;
  }
  double x(double t) const { return kLeft + (std::clamp(t, t0, t1) - t0) / (t1 - t0) * plot_w; }
};

// Title (what was run) and subtitle (the plan and options, when the trace's otherData has them).
void draw_title(Svg& svg, const nlohmann::json& trace_json, const Trace& t, const Window& w, int iteration) {
  const nlohmann::json other = trace_json.value("otherData", nlohmann::json::object());
  std::string title = "tinyddp trace";
  if (other.contains("scenario")) title += " · " + other["scenario"].get<std::string>();
  title += w.has_iterations ? " · iteration " + std::to_string(iteration) : " · whole trace";
  title += " · " + std::to_string(t.ranks.size()) + (t.ranks.size() == 1 ? " rank" : " ranks");
  if (other.contains("backend")) title += " (" + other["backend"].get<std::string>() + " backend)";
  svg.text(12, 22, title, " font-size=\"15\" font-weight=\"bold\"");
  std::string subtitle;
  if (other.contains("plan")) subtitle += "plan: " + other["plan"].get<std::string>();
  if (other.contains("options")) subtitle += (subtitle.empty() ? "" : "   ") + other["options"].get<std::string>();
  if (!subtitle.empty()) svg.text(12, 40, subtitle, " fill=\"#444\"");
}

// The time axis above the rows (0 at the window's start) and its grid lines down through them.
void draw_time_axis(Svg& svg, const Layout& L, const Window& w, double rows_h) {
  const double step = nice_step(L.t1 - L.t0, 10);
  const double axis_y = kTop - 10;
  svg.line(kLeft, axis_y, kLeft + L.plot_w, axis_y, "#444");
  svg.text(kLeft - 8, axis_y + 4, "time", " text-anchor=\"end\" fill=\"#444\"");
  const double origin = L.t0 + w.pad;
  for (double t = origin; t <= L.t1 + 1e-9; t += step) {
    const double x = L.x(t);
    svg.line(x, axis_y - 4, x, axis_y, "#444");
    svg.line(x, kTop - 4, x, kTop + rows_h - kRankGap, "#eeeeee");
    svg.text(x, axis_y - 7, us_label(t - origin), " text-anchor=\"middle\" fill=\"#444\"");
  }
}

// One rank's row, from its top edge: the lanes' backgrounds and names, then what happened in them.
class RankRow {
 public:
  RankRow(Svg& svg, const Layout& L, const CommRows& comm, double top) : svg_(svg), L_(L), comm_(comm), top_(top) {}

  double lane_y(int lane) const { return top_ + kRankHeader + lane * (kLaneH + kLaneGap); }

  void draw_lanes(const std::string& name, bool empty) {
    svg_.text(12, top_ + 15, name, " font-size=\"13\" font-weight=\"bold\"");
    svg_.line(kLeft, top_ + kRankHeader - 3, kLeft + L_.plot_w, top_ + kRankHeader - 3, "#999", 0.5);
    for (int lane = 0; lane < kNumLanes; ++lane) {
      svg_.rect(kLeft, lane_y(lane), L_.plot_w, lane == kComm ? L_.comm_h : kLaneH, lane % 2 ? "#fafafa" : "#f4f4f4");
      svg_.text(kLeft - 8, lane_y(lane) + 14, kLaneNames[lane], " text-anchor=\"end\" fill=\"#555\"");
    }
    if (empty)
      svg_.text(kLeft + 8, lane_y(0) + 14, "no events in this iteration (the rank had stopped)", " fill=\"#d62728\"");
  }

  // Spans, parents before children (longer first), so nested spans draw on top; then their labels, after
  // every box, so that no later box covers one.
  void draw_spans(const std::vector<const Ev*>& shown) {
    std::vector<const Ev*> spans;
    for (const Ev* e : shown)
      if (e->ph == 'X' && lane_of(*e) < kNumLanes) spans.push_back(e);
    std::stable_sort(spans.begin(), spans.end(), [](const Ev* a, const Ev* b) { return a->dur > b->dur; });
    struct Label {
      double x0, x1, text_x, text_y;   // the span's extent, where the text goes
      Lane lane;
      std::string text, color;
      const Ev* e;
    };
    std::vector<Label> labels;
    for (const Ev* e : spans) {
      const Lane lane = lane_of(*e);
      const Style s = span_style(*e, lane);
      double y = lane_y(lane), h = kLaneH;
      if (lane == kReducer && e->cat == "wait") y += kLaneH - 6, h = 5;   // a strip under its finalize's label
      if (lane == kComm)
        y += comm_row(e) * L_.comm_row_h + (L_.comm_rows > 1 ? 1 : 0), h = L_.comm_row_h - (L_.comm_rows > 1 ? 2 : 0);
      const double x0 = L_.x(e->ts), x1 = L_.x(e->end());
      svg_.rect(x0, y, x1 - x0, h, s.fill, s.stroke, s.stroke_w, s.extra, tooltip(*e));
      std::string label = e->name;
      if (lane == kComm) label = e->name + " (" + std::to_string(arg_int(*e, "bytes", 0)) + " B)";
      if (lane == kHooks) label = std::to_string(arg_int(*e, "param")) + ": " + arg_str(*e, "name");
      if (label.size() * kCharW + 6 > x1 - x0) label = short_label(*e, lane);
      const double text_y = lane == kReducer && e->name == "finalize" ? y + 11 : y + h / 2 + 4;
      if (label.size() * kCharW + 4 <= x1 - x0 && e->cat != "wait")
        labels.push_back({x0, x1, (x0 + x1) / 2, text_y, lane, label, s.text, e});
    }
    for (const Label& l : labels) {
      // A label over a nested (shorter) box of its lane would be hidden or confusing: the inner one speaks.
      const double half = l.text.size() * kCharW / 2;
      bool covered = false;
      for (const Ev* o : spans)
        covered |= o != l.e && o->cat != "wait" && lane_of(*o) == l.lane && o->dur < l.e->dur &&
                   !(l.lane == kComm && comm_row(o) != comm_row(l.e)) && L_.x(o->ts) < l.text_x + half &&
                   L_.x(o->end()) > l.text_x - half;
      if (!covered) svg_.text(l.text_x, l.text_y, l.text, " text-anchor=\"middle\" fill=\"" + l.color + "\"");
    }
  }

  // Instants: bucket ready / launched, unused marks, rebuilds, collectives that never completed.
  void draw_instants(const std::vector<const Ev*>& shown) {
    double last_launch_label_x = -1e9;
    for (const Ev* e : shown) {
      if (e->ph != 'i') continue;
      const Lane lane = lane_of(*e);
      const double x = L_.x(e->ts);
      if (lane == kReducer) {
        const double y = lane_y(kReducer);
        if (e->name == "bucket ready") {
          std::ostringstream d;
          d << "M" << num(x) << " " << num(y + 1) << " l4 5 l-4 5 l-4 -5 z";
          svg_.path(d.str(), "#ffffff", "#08519c", tooltip(*e));
        } else if (e->name.starts_with("launch bucket")) {
          std::ostringstream d;
          d << "M" << num(x - 5) << " " << num(y + 9) << " l10 0 l-5 9 z";
          svg_.path(d.str(), "#08519c", "#08519c", tooltip(*e));
          if (x - last_launch_label_x >= 22) {   // crowded launches: their comm spans carry the index
            svg_.text(x + 6, y + 18, "b" + std::to_string(arg_int(*e, "bucket")), " fill=\"#08519c\" font-size=\"10\"");
            last_launch_label_x = x;
          }
        } else if (e->name == "marked unused") {
          svg_.text(x, y + 14, "×" + std::to_string(arg_int(*e, "param")),
                    " text-anchor=\"middle\" fill=\"#636363\" font-size=\"10\"");
        } else if (e->name == "buckets rebuilt") {
          svg_.text(x + 2, y + 14, "⚑ rebuilt", " fill=\"#636363\" font-size=\"10\"");
        }
      } else if (lane == kComm && !arg_bool(*e, "completed", true)) {
        const double y = lane_y(kComm) + comm_row(e) * L_.comm_row_h;
        svg_.rect(x, y + 2, L_.x(L_.t1) - x, L_.comm_row_h - 4, "#fde0dd", "#d62728", 1.5, " stroke-dasharray=\"5,3\"",
                  tooltip(*e));
        svg_.text(x + 4, y + L_.comm_row_h / 2 + 4, e->name + ": never completed", " fill=\"#d62728\"");
      }
    }
  }

  // Error and warning markers over the lanes, with their note numbers.
  void draw_markers(const std::vector<const Ev*>& shown, const Notes& notes) {
    for (const Ev* e : shown) {
      if (lane_of(*e) != kMarker) continue;
      const bool error = e->cat == "error";
      const std::string color = error ? "#d62728" : "#ff7f0e";
      const double x = L_.x(e->ts);
      svg_.line(x, top_ + kRankHeader - 6, x, lane_y(kComm) + L_.comm_h, color, error ? 2.5 : 1.5,
                error ? "" : " stroke-dasharray=\"4,2\"");
      svg_.out << "<circle cx=\"" << num(x) << "\" cy=\"" << num(top_ + 10) << "\" r=\"8\" fill=\"" << color
               << "\"><title>" << xml_escape(arg_str(*e, "message")) << "</title></circle>\n";
      svg_.text(x, top_ + 14, std::to_string(notes.number_of.at(e)),
                " text-anchor=\"middle\" fill=\"#fff\" font-size=\"10\" font-weight=\"bold\"");
    }
  }

 private:
  int comm_row(const Ev* e) const {
    const auto it = comm_.row_of.find(e);
    return it == comm_.row_of.end() ? 0 : it->second;
  }

  Svg& svg_;
  const Layout& L_;
  const CommRows& comm_;
  double top_;
};

// The legend's keys, from `legend_y`; returns the y of its last line.
double draw_legend(Svg& svg, double width, double legend_y) {
  struct Key {
    std::string label, fill, stroke, extra;
  };
  const std::vector<Key> keys = {
      {"forward", "#9ecae1", "none", ""},      {"backward", "#6baed6", "none", ""},
      {"optimizer step", "#a1d99b", "none", ""}, {"autograd node", "#fdd0a2", "#e6550d", ""},
      {"AccumulateGrad", "#fd8d3c", "#e6550d", ""}, {"hook (param index)", "#74c476", "#31a354", ""},
      {"hook, no gradient", "#ffffff", "#31a354", ""}, {"hook ignored", "#e0e0e0", "#888", " stroke-dasharray=\"3,2\""},
      {"raised", "#ffffff", "#d62728", ""},      {"finalize", "#bcbddc", "none", ""},
      {"wait", "#756bb1", "none", ""},           {"allreduce of a bucket", "#3182bd", "none", ""},
      {"other collective", "#bdbdbd", "none", ""}};
  double lx = 12, ly = legend_y + 8;
  svg.out << "<g class=\"legend\">\n";
  for (const Key& k : keys) {
    const double w = 16 + k.label.size() * kCharW + 16;
    if (lx + w > width - 12) lx = 12, ly += 18;
    svg.rect(lx, ly, 12, 12, k.fill, k.stroke, k.label == "raised" ? 2 : 1, k.extra);
    svg.text(lx + 16, ly + 10, k.label);
    lx += w;
  }
  // The markers' keys.
  if (lx + 360 > width - 12) lx = 12, ly += 18;
  svg.path("M" + num(lx + 6) + " " + num(ly + 1) + " l5 5 l-5 5 l-5 -5 z", "#ffffff", "#08519c", "bucket ready");
  svg.text(lx + 16, ly + 10, "bucket ready");
  lx += 100;
  svg.path("M" + num(lx + 1) + " " + num(ly + 1) + " l10 0 l-5 9 z", "#08519c", "#08519c", "bucket launched");
  svg.text(lx + 16, ly + 10, "launched (b = bucket)");
  lx += 150;
  svg.out << "<circle cx=\"" << num(lx + 6) << "\" cy=\"" << num(ly + 6) << "\" r=\"6\" fill=\"#d62728\"/>\n";
  svg.text(lx + 16, ly + 10, "error");
  lx += 56;
  svg.out << "<circle cx=\"" << num(lx + 6) << "\" cy=\"" << num(ly + 6) << "\" r=\"6\" fill=\"#ff7f0e\"/>\n";
  svg.text(lx + 16, ly + 10, "warning");
  svg.out << "</g>\n";
  return ly;
}

// The notes (the errors' and warnings' messages, wrapped), from `y`; returns the y below the last line.
double draw_notes(Svg& svg, const Notes& notes, double y, size_t chars_per_line) {
  svg.out << "<g class=\"notes\">\n";
  for (size_t k = 0; k < notes.texts.size(); ++k) {
    const std::string& text = notes.texts[k].first;
    std::vector<int> rs = notes.texts[k].second;
    std::sort(rs.begin(), rs.end());
    std::string who = "rank";
    if (rs.size() > 1) who += "s";
    for (size_t i = 0; i < rs.size(); ++i) who += (i ? ", " : " ") + std::to_string(rs[i]);
    const auto lines = wrap(who + ": " + text, chars_per_line - 12);
    const bool error = text.find("warning: ") != 0;
    svg.out << "<circle cx=\"20\" cy=\"" << num(y - 4) << "\" r=\"7\" fill=\"" << (error ? "#d62728" : "#ff7f0e")
            << "\"/>\n";
    svg.text(20, y, std::to_string(k + 1), " text-anchor=\"middle\" fill=\"#fff\" font-size=\"10\" font-weight=\"bold\"");
    for (const std::string& l : lines) {
      svg.text(34, y, l);
      y += 15;
    }
  }
  svg.out << "</g>\n";
  return y;
}

}  // namespace

std::string render_trace_svg(const nlohmann::json& trace_json, const TraceViewOptions& options) {
  const Trace t = read_events(trace_json);
  const Window w = select_iteration(t, options.iteration);
  const CommRows comm = pack_comm_rows(t, w);
  const Notes notes = collect_notes(t, w);
  const Layout L(options.width_px, w, comm);
  const double rows_h = t.ranks.size() * (L.rank_h + kRankGap);

  Svg svg;   // the body; the header, which needs the final height, goes in front at the end
  draw_title(svg, trace_json, t, w, options.iteration);
  draw_time_axis(svg, L, w, rows_h);
  for (size_t ri = 0; ri < t.ranks.size(); ++ri) {
    const int r = t.ranks[ri];
    const std::vector<const Ev*>& shown = w.shown.at(r);
    const auto name = t.process_names.find(r);
    svg.out << "<g class=\"rank-row\" data-rank=\"" << r << "\">\n";
    RankRow row(svg, L, comm, kTop + ri * (L.rank_h + kRankGap));
    row.draw_lanes(name != t.process_names.end() ? name->second : "rank " + std::to_string(r), shown.empty());
    row.draw_spans(shown);
    row.draw_instants(shown);
    row.draw_markers(shown, notes);
    svg.out << "</g>\n";
  }
  const double legend_last_y = draw_legend(svg, L.width, kTop + rows_h + 6);
  const double notes_end_y =
      draw_notes(svg, notes, legend_last_y + 34, static_cast<size_t>((L.width - 60) / kCharW));
  svg.out << "</svg>\n";

  const double height = notes.texts.empty() ? legend_last_y + 24 : notes_end_y + 4;
  Svg head;
  head.out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << L.width << "\" height=\"" << num(height)
           << "\" viewBox=\"0 0 " << L.width << " " << num(height)
           << "\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" font-size=\"11\">\n";
  head.rect(0, 0, L.width, height, "#ffffff");
  return head.out.str() + svg.out.str();
}

}  // namespace tinyddp::app
