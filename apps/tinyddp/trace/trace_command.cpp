// `tinyddp trace-merge` and `tinyddp trace-view`: the command line around dist/trace_file.h and trace_view.h.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "apps/tinyddp/cli_checks.h"
#include "apps/tinyddp/cli_errors.h"
#include "apps/tinyddp/commands.h"
#include "apps/tinyddp/trace/trace_view.h"
#include "base/error.h"
#include "dist/trace_file.h"

namespace tinyddp::app {

namespace {

struct TraceArgs {
  std::string merge_out;
  std::vector<std::string> merge_in;
  std::string view_in, view_svg;
  TraceViewOptions view;
};

// Whether writing `out` would replace `in`: the same file (a link or another spelling of it) or, where `out`
// does not exist yet, the same normalized path.
bool same_file(const std::string& out, const std::string& in) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::equivalent(out, in, ec)) return true;
  const auto normal = [](const std::string& p) {
    std::error_code e;
    const fs::path c = fs::weakly_canonical(p, e);
    return e ? fs::absolute(p).lexically_normal() : c;
  };
  return normal(out) == normal(in);
}

// trace-merge's command line: an output named with -o that is none of the inputs, and two or more inputs
// (merging never writes over a rank's trace; issue 14 lost rank 0's trace to `trace-merge t.rank0.json ...`).
void check_merge_args(const TraceArgs& a) {
  const std::string example = "tinyddp trace-merge -o t.json t.rank0.json t.rank1.json";
  TINYDDP_USAGE_CHECK(!a.merge_out.empty(), "trace-merge: name the merged file with -o OUT (", example,
                      "); the inputs are the per-rank traces and are never written.");
  TINYDDP_USAGE_CHECK(a.merge_in.size() >= 2, "trace-merge: got one input ('", a.merge_in.empty() ? "" : a.merge_in[0],
                      "'); merging needs the trace of every rank of an mpirun job, two or more t.rank<N>.json files (",
                      example, "). A single trace opens as it is in Perfetto or `tinyddp trace-view`.");
  for (const std::string& in : a.merge_in)
    TINYDDP_USAGE_CHECK(!same_file(a.merge_out, in), "trace-merge: the output -o '", a.merge_out,
                        "' is also an input ('", in, "'); writing it would destroy that rank's trace. Choose a new "
                        "name (", example, ").");
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  TINYDDP_CHECK(f.good(), "cannot write '", path, "'.");
  f << text;
  TINYDDP_CHECK(f.good(), "writing '", path, "' failed.");
}

// The trace commands run nothing but read and write the files they are given: each of their errors (an input
// that is missing or not a trace, an iteration it lacks, an output that cannot be written) is a usage error.
template <typename Run>
void as_usage(Run run) {
  try {
    run();
  } catch (const UsageError&) {
    throw;
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
}

void run_merge(const TraceArgs& a) {
  check_merge_args(a);
  std::vector<nlohmann::json> traces;
  for (const std::string& in : a.merge_in) traces.push_back(dist::read_trace(in));
  const nlohmann::json merged = dist::merge_traces(traces, a.merge_in);
  write_file(a.merge_out, merged.dump() + "\n");
  std::cerr << "tinyddp: merged " << traces.size() << " files (" << merged["otherData"]["ranks"] << " ranks) into "
            << a.merge_out << "; clock offsets (us): " << merged["otherData"]["clock_offsets_us"].dump() << "\n";
}

void run_view(const TraceArgs& a) {
  write_file(a.view_svg, render_trace_svg(dist::read_trace(a.view_in), a.view));
  std::cerr << "tinyddp: wrote " << a.view_svg << " (open it in a browser)\n";
}

}  // namespace

void add_trace_commands(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<TraceArgs>();
  CLI::App* merge = app.add_subcommand(
      "trace-merge", "Join the per-rank trace files of an mpirun job into one, on one clock");
  merge->add_option("-o,--out", args->merge_out, "The merged trace to write (never one of the inputs)");
  merge->add_option("inputs", args->merge_in, "The per-rank traces of one mpirun job, t.rank<N>.json for t.json (two or more)");
  merge->footer("Each file's timestamps are shifted so that the barrier every rank passed when it started tracing "
                "lands at the same instant.\nExample: tinyddp trace-merge -o t.json t.rank0.json t.rank1.json");
  merge->callback([args, exit_code] {
    as_usage([&] { run_merge(*args); });
    *exit_code = 0;
  });

  CLI::App* view = app.add_subcommand("trace-view", "Draw one iteration of a trace as a timeline SVG");
  view->add_option("file", args->view_in, "A trace written by --trace (or trace-merge)")->required();
  view->add_option("--svg", args->view_svg, "The SVG to write")->required();
  view->add_option("--iteration", args->view.iteration, "Which iteration (from 1)")
      ->check(at_least(1))
      ->capture_default_str();
  view->add_option("--width", args->view.width_px, "Width in pixels")
      ->check(at_least(1))
      ->capture_default_str();
  view->footer("Rows: ranks. Lanes: calls, autograd nodes, reducer hooks, reducer (buckets, finalize), comm.\n"
               "Example: tinyddp repro two-backward --trace t.json && tinyddp trace-view t.json --svg t.svg");
  view->callback([args, exit_code] {
    as_usage([&] { run_view(*args); });
    *exit_code = 0;
  });
}

}  // namespace tinyddp::app
