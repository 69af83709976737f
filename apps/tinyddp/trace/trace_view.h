// `tinyddp trace-view`: one iteration of a trace (dist/trace_file.h) drawn as a timeline SVG, for docs and for a
// first look without Perfetto. One row per rank on one time axis; in each row, lanes:
//   calls      forward / backward(...) / optimizer step, as the program called them
//   autograd   every node the engine ran (AccumulateGrad in a darker shade)
//   hooks      the reducer's hook per parameter (its index); hollow: no gradient; grey: ignored (fired while
//              the reducer expected none); red outline: the hook raised
//   reducer    bucket ready (diamond) and launched (triangle), finalize with its waits, unused marks
//   comm       each collective from launch to completion (never completed: red, open-ended)
// and vertical markers for errors (red) and warnings (orange), numbered and listed under the legend.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace tinyddp::app {

struct TraceViewOptions {
  int iteration = 1;     // the "iteration" spans' number; a trace without them is drawn whole
  int width_px = 1400;
};

// Throws when the iteration is not in the trace (naming the ones that are).
std::string render_trace_svg(const nlohmann::json& trace, const TraceViewOptions& options);

}  // namespace tinyddp::app
