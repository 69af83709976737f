// The subcommands of `tinyddp`, each registered on the command line by its own file.
#pragma once

#include <iosfwd>

namespace CLI {
class App;
}

namespace tinyddp::app {

// A guided tour of the autograd engine: the graph, the engine's order, retain_graph, create_graph.
int run_autograd_demo(std::ostream& out);

// `tinyddp repro`: registers the subcommand (repro/repro_command.cpp); the callback runs it and sets *exit_code.
void add_repro_command(CLI::App& app, int* exit_code);

// `tinyddp train`: registers the subcommand (train/train_command.cpp); the callback runs it and sets *exit_code.
void add_train_command(CLI::App& app, int* exit_code);

// `tinyddp trace-merge -o OUT IN IN...` and `tinyddp trace-view FILE --svg OUT [--iteration K]`
// (trace/trace_command.cpp).
void add_trace_commands(CLI::App& app, int* exit_code);

// What a new user runs first: the two-backward error and the fix that works.
int run_demo(std::ostream& out);

}  // namespace tinyddp::app
