// The subcommands of `tinyddp`, one function each.
#pragma once

#include <iosfwd>

namespace tinyddp::app {

// A guided tour of the autograd engine: the graph, the engine's order, retain_graph, create_graph.
int run_autograd_demo(std::ostream& out);

}  // namespace tinyddp::app
