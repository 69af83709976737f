#include "apps/tinyddp/repro/repro_explain.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "apps/tinyddp/repro/scenarios.h"

namespace tinyddp::app {

namespace {

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

std::string join(const std::vector<std::string>& parts, const std::string& sep = ", ") {
  std::string s;
  for (size_t i = 0; i < parts.size(); ++i) s += (i ? sep : "") + parts[i];
  return s;
}

std::string numbers(const std::set<int>& v, const std::string& one, const std::string& many) {
  std::vector<std::string> parts;
  for (int x : v) parts.push_back(std::to_string(x));
  return (v.size() == 1 ? one : many) + " " + join(parts);
}

std::string first_line(const std::string& s, size_t max) {
  std::string line = s.substr(0, s.find('\n'));
  return line.size() > max ? line.substr(0, max - 3) + "..." : line;
}

// One thing that happened, written with "{it}" for its iteration; the same text on several ranks and
// iterations is told once.
struct Event {
  std::string text;
  std::set<int> iterations, ranks;
};

// The kinds of event, for the fix.
struct Seen {
  bool twice_across_calls = false, twice_in_one_call = false, never = false, after_finalize = false,
       grad_without_hooks = false;
};

class Narrator {
 public:
  explicit Narrator(const ReproResult& r) : r_(r) {}

  void rank(const RankResult& rank) {
    Window w;
    for (const CallRecord& c : rank.calls) {
      if (starts_with(c.label, "forward")) {
        close(w, rank.rank);
        w = Window{};
        w.armed = c.armed && c.error.empty();
        w.iteration = c.iteration;
      }
      std::vector<size_t> marked = c.marked_unused;
      marked.insert(marked.end(), c.hooks.begin(), c.hooks.end());
      for (size_t p : marked) {
        const auto [it, fresh] = w.marked.emplace(p, c.at);
        // static_graph expects a parameter's hook as often as its first iteration saw it fire.
        if (!fresh && w.armed && !r_.options.static_graph) {
          const bool same_call = it->second == c.at;
          (same_call ? seen.twice_in_one_call : seen.twice_across_calls) = true;
          add("parameter " + param(p) + " was marked ready twice: " +
                  (same_call ? "both times in " + at(c.at) + " (two hooks in one backward)"
                             : "in " + at(it->second) + " and again in " + at(c.at)),
              c.iteration, rank.rank);
        }
      }
      if (starts_with(c.label, "backward") || starts_with(c.label, "grad")) w.backwards = true;
      if (starts_with(c.label, "grad") && c.hooks.empty() && c.error.empty()) {
        seen.grad_without_hooks = true;
        add(at(c.at) + " (autograd.grad) ran no DDP hook: its gradients are this rank's own, never averaged",
            c.iteration, rank.rank);
      }
      if (!c.hooks_ignored.empty() && w.finalized) {
        seen.after_finalize = true;
        add(at(c.at) + " came after the reducer finalized in " + at(w.finalized_at) + ": the hooks of " +
                std::to_string(c.hooks_ignored.size()) +
                " parameter(s) were ignored and those gradients stayed local to each rank",
            c.iteration, rank.rank);
      }
      if (c.finalized) {
        w.finalized = true;
        w.finalized_at = c.at;
      }
    }
    close(w, rank.rank);
  }

  std::vector<Event> events;
  Seen seen;

 private:
  struct Window {   // from one forward to the next: what the reducer armed by that forward saw
    bool armed = false, finalized = false, backwards = false;
    int iteration = 0;
    std::string finalized_at;
    std::map<size_t, std::string> marked;   // parameter -> the call that first marked it ready
  };

  void close(const Window& w, int rank) {
    if (!w.armed || w.finalized || !w.backwards) return;
    std::vector<std::string> never;
    for (size_t p = 0; p < r_.param_names.size(); ++p)
      if (!w.marked.count(p)) never.push_back(param(p));
    if (never.empty()) return;
    seen.never = true;
    add("no gradient reached " + join(never) +
            " after the forward of {it} (no hook fired, nothing marked them unused), so their bucket never "
            "completed and that reduction never finished",
        w.iteration, rank);
  }

  std::string param(size_t p) const {
    return (p < r_.param_names.size() ? r_.param_names[p] : "parameter") + " (" + std::to_string(p) + ")";
  }
  // "backward #2 of iteration 1" -> "backward #2 of {it}", so that iterations can be merged.
  static std::string at(const std::string& call) {
    const size_t of = call.find(" of iteration ");
    return of == std::string::npos ? call : call.substr(0, of) + " of {it}";
  }
  void add(const std::string& text, int iteration, int rank) {
    auto e = std::find_if(events.begin(), events.end(), [&](const Event& x) { return x.text == text; });
    if (e == events.end()) e = events.insert(events.end(), Event{text, {}, {}});
    e->iterations.insert(iteration);
    e->ranks.insert(rank);
  }

  const ReproResult& r_;
};

std::string told(const Event& e, int ranks) {
  std::string text = e.text;
  const std::string its = numbers(e.iterations, "iteration", "iterations");
  for (size_t at = text.find("{it}"); at != std::string::npos; at = text.find("{it}"))
    text.replace(at, 4, e.iterations.size() == 1 ? its : "each iteration");
  std::string where;
  if (e.iterations.size() > 1) where = its;
  if (static_cast<int>(e.ranks.size()) < ranks) where += (where.empty() ? "" : ", ") + numbers(e.ranks, "rank", "ranks");
  else if (ranks > 1) where += (where.empty() ? "" : ", ") + std::string("on every rank");
  return text + (where.empty() ? "" : " (" + where + ")");
}

std::string outcome_sentence(const ReproResult& r) {
  if (r.error) {
    std::string s = outcome_summary(r);
    s += ": \"" + first_line(r.error->message, 140) + "\".";
    if (starts_with(r.error->message, "tinyddp: "))
      s += " That is tinyddp's own check (--unsynced-grads error); PyTorch 1.13 raises nothing there.";
    return s;
  }
  if (r.replicas_in_sync) return "No error, and the replicas end in sync.";
  return "No error, but the replicas end apart (" + join(r.params_out_of_sync) + " differ across ranks).";
}

// What the plan and these options are among the named scenarios.
const Scenario* same_scenario(const ReproResult& r, bool with_options) {
  for (const Scenario& s : scenarios())
    if (plan_text(parse_plan(s.plan)) == r.plan &&
        (!with_options || s.options == static_cast<const PlanOptions&>(r.options)))
      return &s;
  return nullptr;
}

// The run options outside the scenario's own (PlanOptions) that differ from repro's defaults.
std::string run_options_changed(const ReproOptions& o) {
  const ReproOptions d;
  std::vector<std::string> parts;
  if (o.unsynced_grads != d.unsynced_grads)
    parts.push_back(std::string("--unsynced-grads ") +
                    (o.unsynced_grads == dist::UnsyncedGradPolicy::error ? "error" : "ignore"));
  if (o.iterations != d.iterations) parts.push_back("--iterations " + std::to_string(o.iterations));
  if (o.ranks != d.ranks) parts.push_back("--ranks " + std::to_string(o.ranks));
  if (o.same_data) parts.push_back("--same-data");
  if (o.bucket_cap_mb != d.bucket_cap_mb) parts.push_back("--bucket-cap-mb");
  if (o.seed != d.seed) parts.push_back("the seed");
  return join(parts);
}

struct Alternative {
  std::string flags;
  ReproOptions options;
};

std::vector<Alternative> alternatives_of(const ReproOptions& o) {
  std::vector<Alternative> alts;
  auto add = [&](const std::string& flags, auto change) {
    ReproOptions x = o;
    change(x);
    alts.push_back({flags, x});
  };
  add(o.find_unused_parameters ? "--no-find-unused-parameters" : "--find-unused-parameters",
      [](ReproOptions& x) { x.find_unused_parameters = !x.find_unused_parameters; });
  add(o.static_graph ? "--no-static-graph" : "--static-graph", [](ReproOptions& x) { x.static_graph = !x.static_graph; });
  if (!o.rank_iterations.empty() && !o.join) add("--join", [](ReproOptions& x) { x.join = true; });
  if (o.buffer && o.broadcast_buffers) add("--no-broadcast-buffers", [](ReproOptions& x) { x.broadcast_buffers = false; });
  return alts;
}

}  // namespace

std::string derived_why(const ReproResult& r) {
  Narrator n(r);
  for (const RankResult& rank : r.ranks) n.rank(rank);
  std::string why = outcome_sentence(r);
  for (const Event& e : n.events) why += " " + [&] {
      std::string s = told(e, r.options.ranks);
      s[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(s[0])));
      return s + ".";
    }();
  return why;
}

Explanation explain(const ReproResult& r, bool try_alternatives) {
  Explanation x;
  const PlanOptions& plan_options = r.options;
  const Scenario* named = find_scenario(r.scenario);
  const Scenario* same = same_scenario(r, true);
  if (!named && same) {
    x.note = "This plan with these options is the named scenario '" + same->name + "' (`tinyddp repro " + same->name + "`).";
  } else if (!named) {
    if (const Scenario* plan_only = same_scenario(r, false)) {
      const std::string theirs = plan_only->options.summary();
      x.note = "This is the plan of the named scenario '" + plan_only->name + "', which runs it with " +
               (theirs.empty() ? std::string("DDP's defaults") : theirs) + ".";
    }
  }
  const Scenario* written = named ? named : same;
  const std::string outcome = outcome_summary(r);
  if (written && written->options == plan_options && written->outcome == outcome) {
    x.scenario = written->name;
    x.why = written->why;
    x.fix = written->fix;
    return x;
  }
  if (written && written->options == plan_options) {
    const std::string changed = run_options_changed(r.options);
    x.note += std::string(x.note.empty() ? "" : " ") + "Scenario '" + written->name + "' ends \"" + written->outcome +
              "\"" + (changed.empty() ? "" : " without " + changed) + "; this run ends \"" + outcome +
              "\", so the why below is derived from this run, not the scenario's.";
  } else if (named) {
    const std::string theirs = named->options.summary(), mine = plan_options.summary();
    x.note = "Scenario '" + named->name + "' is explained for " + (theirs.empty() ? "DDP's defaults" : theirs) +
             "; this run has " + (mine.empty() ? "DDP's defaults" : mine) +
             ", so the why below is derived from this run, not the scenario's.";
  }
  x.why = derived_why(r);
  if (!r.error && r.replicas_in_sync) return x;

  Narrator n(r);
  for (const RankResult& rank : r.ranks) n.rank(rank);
  std::vector<std::string> fixes;
  if (n.seen.twice_across_calls || n.seen.after_finalize)
    fixes.push_back("call backward once per forward, on the sum of the task losses (`tinyddp repro combined-loss`), "
                    "or give each backward its own forward");
  if (n.seen.twice_in_one_call)
    fixes.push_back("a parameter reached twice in one backward (a reused layer under reentrant checkpointing) needs "
                    "--static-graph or forward(ckpt_nr)");
  if (n.seen.never && !r.options.find_unused_parameters)
    fixes.push_back("--find-unused-parameters, so that DDP marks the parameters without a gradient ready, or use "
                    "every output in the loss");
  if (n.seen.grad_without_hooks)
    fixes.push_back("backward() instead of autograd.grad, or allreduce the gradients yourself before the step");
  if (try_alternatives && r.options.backend == "thread") {
    std::vector<std::string> works;
    for (const Alternative& alt : alternatives_of(r.options)) {
      try {
        const std::string got = outcome_summary(run_repro("custom", r.plan, alt.options));
        x.alternatives.push_back(alt.flags + ": " + got);
        if (got == "ok, replicas in sync") works.push_back(alt.flags);
      } catch (const std::exception& e) {
        x.alternatives.push_back(alt.flags + ": refused (" + first_line(e.what(), 80) + ")");
      }
    }
    if (!works.empty())
      fixes = {"this plan runs with the replicas in sync with " + join(works, " or ") + " (see 'tried' below)"};
    else
      fixes.push_back("no single DDP option toggled here makes this plan end in sync (see 'tried' below): change the "
                      "plan");
  }
  for (size_t i = 0; i < fixes.size(); ++i) x.fix += (i ? "; " : "") + fixes[i];
  if (!x.fix.empty()) {
    x.fix[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(x.fix[0])));
    x.fix += ".";
  }
  return x;
}

}  // namespace tinyddp::app
