// `tinyddp trace-merge` and `tinyddp trace-view`: the command line around dist/trace_file.h and trace_view.h.
#include <CLI/CLI.hpp>
#include <fstream>
#include <iostream>

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

void write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  TINYDDP_CHECK(f.good(), "cannot write '", path, "'.");
  f << text;
  TINYDDP_CHECK(f.good(), "writing '", path, "' failed.");
}

}  // namespace

void add_trace_commands(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<TraceArgs>();
  CLI::App* merge = app.add_subcommand(
      "trace-merge", "Join the per-rank trace files of an mpirun job into one, on one clock");
  merge->add_option("out", args->merge_out, "The merged trace to write")->required();
  merge->add_option("inputs", args->merge_in, "FILE.rank<N>.json of every rank")->required();
  merge->footer("Each file's timestamps are shifted so that the barrier every rank passed when it started tracing "
                "lands at the same instant.\nExample: tinyddp trace-merge t.json t.rank0.json t.rank1.json");
  merge->callback([args, exit_code] {
    std::vector<nlohmann::json> traces;
    for (const std::string& in : args->merge_in) traces.push_back(dist::read_trace(in));
    const nlohmann::json merged = dist::merge_traces(traces, args->merge_in);
    write_file(args->merge_out, merged.dump() + "\n");
    std::cerr << "tinyddp: merged " << traces.size() << " files (" << merged["otherData"]["ranks"] << " ranks) into "
              << args->merge_out << "; clock offsets (us): " << merged["otherData"]["clock_offsets_us"].dump() << "\n";
    *exit_code = 0;
  });

  CLI::App* view = app.add_subcommand("trace-view", "Draw one iteration of a trace as a timeline SVG");
  view->add_option("file", args->view_in, "A trace written by --trace (or trace-merge)")->required();
  view->add_option("--svg", args->view_svg, "The SVG to write")->required();
  view->add_option("--iteration", args->view.iteration, "Which iteration (from 1)")->capture_default_str();
  view->add_option("--width", args->view.width_px, "Width in pixels")->capture_default_str();
  view->footer("Rows: ranks. Lanes: calls, autograd nodes, reducer hooks, reducer (buckets, finalize), comm.\n"
               "Example: tinyddp repro two-backward --trace t.json && tinyddp trace-view t.json --svg t.svg");
  view->callback([args, exit_code] {
    write_file(args->view_svg, render_trace_svg(dist::read_trace(args->view_in), args->view));
    std::cerr << "tinyddp: wrote " << args->view_svg << " (open it in a browser)\n";
    *exit_code = 0;
  });
}

}  // namespace tinyddp::app
