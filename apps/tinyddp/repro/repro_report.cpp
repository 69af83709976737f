// The human-readable report of `tinyddp repro`: a per-iteration timeline (one line per call, ranks with
// identical behaviour merged), the outcome, and for named scenarios why it happens and what fixes it.
#include <algorithm>
#include <map>
#include <ostream>
#include <sstream>

#include "apps/tinyddp/repro/repro.h"
#include "apps/tinyddp/repro/repro_explain.h"
#include "apps/tinyddp/repro/scenarios.h"

namespace tinyddp::app {

namespace {

std::string list(const std::vector<size_t>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? " " : "") + std::to_string(v[i]);
  return s;
}

std::string first_line(const std::string& s, size_t max = 110) {
  std::string line = s.substr(0, s.find('\n'));
  return line.size() > max ? line.substr(0, max - 3) + "..." : line;
}

// What one rank did in one call, in a few words.
std::string describe(const CallRecord& c) {
  std::vector<std::string> parts;
  if (c.rebuilt) {
    std::string b;
    for (const auto& bucket : c.buckets) b += "[" + list(bucket) + "]";
    parts.push_back("buckets rebuilt from the gradient order: " + b);
  }
  if (c.label.rfind("forward", 0) == 0 && c.error.empty())
    parts.push_back(c.armed ? "reducer armed for the backward" : "not armed (no_sync): gradients will stay local");
  if (!c.marked_unused.empty()) parts.push_back("unused marked ready: " + list(c.marked_unused));
  if (!c.hooks.empty()) parts.push_back("hooks " + list(c.hooks));
  if (!c.hooks_ignored.empty()) parts.push_back("hooks ignored (no reduction expected) " + list(c.hooks_ignored));
  for (size_t b : c.launched) parts.push_back("allreduce bucket " + std::to_string(b));
  if (c.finalized) parts.push_back("finalized: gradients averaged");
  if (c.label.rfind("backward", 0) == 0 && c.error.empty() && !c.finalized && c.armed) {
    std::string waiting;
    for (size_t b = 0; b < c.pending.size(); ++b)
      if (c.pending[b] > 0) waiting += (waiting.empty() ? "" : ", ") + std::string("bucket ") + std::to_string(b) +
                                       " waits for " + std::to_string(c.pending[b]);
    parts.push_back(std::to_string(c.ready) + "/" + std::to_string(c.num_params) + " ready" +
                    (waiting.empty() ? "" : "; " + waiting));
  }
  if (!c.error.empty()) parts.push_back("RAISES: " + first_line(c.error, 90));
  if (parts.empty()) parts.push_back(c.label == "step" ? "SGD step" : "-");
  std::string s;
  for (size_t i = 0; i < parts.size(); ++i) s += (i ? "; " : "") + parts[i];
  return s;
}

std::string ranks_label(const std::vector<int>& ranks, int total) {
  if (static_cast<int>(ranks.size()) == total && total > 1) return "all ranks";
  std::string s = ranks.size() == 1 ? "rank " : "ranks ";
  for (size_t i = 0; i < ranks.size(); ++i) s += (i ? "," : "") + std::to_string(ranks[i]);
  return s;
}

}  // namespace

void print_report(std::ostream& out, const ReproResult& r) {
  const ReproOptions& o = r.options;
  // The story and explanation hold for the scenario as named, not when its options were changed.
  const Scenario* scenario = find_scenario(r.scenario);
  if (scenario && !(scenario->options == static_cast<const PlanOptions&>(o))) scenario = nullptr;
  std::string iterations = std::to_string(o.iterations);
  if (!o.rank_iterations.empty()) {
    iterations.clear();
    for (size_t i = 0; i < o.rank_iterations.size(); ++i) iterations += (i ? "," : "") + std::to_string(o.rank_iterations[i]);
    iterations += " (per rank)";
  }
  out << "tinyddp repro " << r.scenario << "\n  plan: " << r.plan << "\n  " << o.ranks << " ranks (" << o.backend
      << " backend), " << iterations << " iterations, find_unused_parameters=" << (o.find_unused_parameters ? "True" : "False")
      << ", static_graph=" << (o.static_graph ? "True" : "False") << ", TORCH_DISTRIBUTED_DEBUG=" << dist::debug_level_name(o.debug)
      << "\n";
  if (o.buffer) out << "  model buffer feature_scale, broadcast_buffers=" << (o.broadcast_buffers ? "True" : "False") << "\n";
  if (o.gan) out << "  a GAN: the scenario model is the generator; a discriminator with its own DDP and SGD scores t\n";
  if (o.join)
    out << "  iterations inside ddp.join(divide_by_initial_world_size="
        << (o.join_divide_by_initial_world_size ? "True" : "False")
        << ", throw_on_early_termination=" << (o.join_throw_on_early_termination ? "True" : "False") << ")\n";
  if (scenario) out << "  " << scenario->story << "\n";
  out << "  parameters:";
  for (size_t i = 0; i < r.param_names.size(); ++i) out << (i % 5 == 0 ? "\n    " : "   ") << i << " " << r.param_names[i];
  out << "\n";

  size_t calls = 0;
  for (const RankResult& rank : r.ranks) calls = std::max(calls, rank.calls.size());
  int iteration = 0;
  for (size_t i = 0; i < calls; ++i) {
    // Group ranks by the call they made at position i and what it did (rank(R){...} blocks make ranks' calls
    // differ at the same position).
    // In rank order of each group's first rank.
    std::vector<std::pair<std::pair<std::string, std::string>, std::vector<int>>> groups;
    int it = 0;
    for (const RankResult& rank : r.ranks) {
      if (i >= rank.calls.size()) continue;
      const CallRecord& c = rank.calls[i];
      it = c.iteration;
      const std::pair<std::string, std::string> key{c.label + (c.in_no_sync ? " [no_sync]" : ""), describe(c)};
      auto group = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == key; });
      if (group == groups.end()) group = groups.insert(groups.end(), {key, {}});
      group->second.push_back(rank.rank);
    }
    if (it != iteration) {
      iteration = it;
      out << "\niteration " << it << "\n";
    }
    std::string previous_label;
    for (const auto& [key, ranks] : groups) {
      const auto& [label, what] = key;
      std::string l = "  " + (label != previous_label ? label : std::string());
      l.resize(std::max<size_t>(l.size(), 30), ' ');
      out << l << ranks_label(ranks, o.ranks) << ": " << what << "\n";
      previous_label = label;
    }
  }

  out << "\noutcome: " << r.outcome;
  if (r.error) {
    auto same_as_first = [&](const RankResult& rank) {
      // The same error at the same call (its text may name the rank).
      return rank.error && rank.error->type == r.error->type && rank.error->raised_at == r.error->raised_at &&
             rank.error->peer_left == r.error->peer_left;
    };
    std::vector<int> raised;
    for (const RankResult& rank : r.ranks)
      if (same_as_first(rank)) raised.push_back(rank.rank);
    out << ": " << r.error->type << " raised at " << r.error->raised_at << " on " << ranks_label(raised, o.ranks) << "\n";
    std::istringstream lines(r.error->message);
    for (std::string line; std::getline(lines, line);) out << "  | " << line << "\n";
    // Ranks that ended differently from the first error: each one's own outcome.
    for (const RankResult& rank : r.ranks) {
      if (same_as_first(rank)) continue;
      out << "rank " << rank.rank << ": ";
      if (!rank.error) {
        out << "ok\n";
        continue;
      }
      out << rank.error->type << " raised at " << rank.error->raised_at << "\n";
      std::istringstream rank_lines(rank.error->message);
      for (std::string line; std::getline(rank_lines, line);) out << "  | " << line << "\n";
    }
  } else {
    out << "\n";
  }
  // One line per distinct warning (its first line, shortened); --json has every text in full.
  bool shortened = false;
  for (const auto& w : r.warning_counts) {
    const std::string line = first_line(w.text, 160);
    shortened |= line != w.text;
    out << "warning (" << w.count << "x, " << ranks_label(w.ranks, o.ranks) << "): " << line << "\n";
  }
  if (shortened) out << "  (warnings shortened to one line; --json has each in full)\n";
  out << "replicas_in_sync: " << (r.replicas_in_sync ? "true" : "false");
  if (!r.replicas_in_sync) {
    out << " (differ: ";
    for (size_t i = 0; i < r.params_out_of_sync.size(); ++i) out << (i ? ", " : "") << r.params_out_of_sync[i];
    out << ")";
  }
  out << "\n";
  // The scenario's written why only where it holds; otherwise one derived from this run (repro_explain.h).
  const Explanation x = explain(r);
  if (!x.note.empty()) out << "\nnote: " << x.note << "\n";
  out << "\nwhy: " << x.why << "\n";
  if (!x.fix.empty()) out << "fix: " << x.fix << "\n";
  for (const std::string& alt : x.alternatives) out << "tried: " << alt << "\n";
}

}  // namespace tinyddp::app
