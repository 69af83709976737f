// tinyddp: learn, reproduce and measure how data-parallel training works.
//   tinyddp demo        what a new user runs first: the two-backward DDP error and its fix
//   tinyddp repro ...   any DDP pattern, deterministically, with PyTorch 1.13's errors
//   tinyddp autograd    a walkthrough of the autograd engine
//   tinyddp train ...   multi-task training with fixed, uncertainty or GradNorm weighting, on DDP ranks too
//   tinyddp trace-merge / trace-view   the traces of --trace
// Exit codes and the error format: cli_errors.h. Under mpirun: cli_launch.h.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>

#include "apps/tinyddp/cli_errors.h"
#include "apps/tinyddp/cli_launch.h"
#include "apps/tinyddp/commands.h"
#include "base/version.h"
#include "dist/mpi_process_group.h"

namespace {

using namespace tinyddp::app;

// The subcommands' names, comma-separated, for "unknown command".
std::string command_names(CLI::App& app) {
  std::string names;
  for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; }))
    names += (names.empty() ? "" : ", ") + sub->get_name();
  return names;
}

// The first argument that is not an option names the command: refuse one that is none of them, before
// CLI11 would call it an unexpected positional argument.
void check_command(CLI::App& app, const std::vector<std::string>& args) {
  const auto first = std::find_if(args.begin(), args.end(), [](const std::string& a) { return !a.starts_with("-"); });
  if (first == args.end()) return;
  const auto subs = app.get_subcommands([](CLI::App*) { return true; });
  const bool known = std::any_of(subs.begin(), subs.end(), [&](CLI::App* sub) { return sub->check_name(*first); });
  TINYDDP_USAGE_CHECK(known, "unknown command '", *first, "'. The commands: ",
                      command_names(app), ". Run `tinyddp --help` for what each does, `tinyddp COMMAND --help` for its "
                      "options.");
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  // --json anywhere asks for machine-readable output, errors included (even a parse error of the command line).
  const bool json = std::find(args.begin(), args.end(), "--json") != args.end();
  CLI::App app{"tinyddp: a from-scratch autograd engine and DDP reducer that behave like PyTorch 1.13"};
  app.require_subcommand(0, 1);
  app.set_version_flag("--version", "tinyddp " TINYDDP_VERSION);
  app.footer("Exit codes: 0 ok, 1 the run raised (repro: the reproduced program raised), 2 usage error, 3 a "
             "collective timed out or a rank failed, 4 train: ranks ended with different weights or replicas.");
  int exit_code = 0;
  auto* demo = app.add_subcommand("demo", "The two-backward DDP error, reproduced on 2 ranks, and the fix that works");
  auto* autograd = app.add_subcommand("autograd", "Walk through the autograd engine: graph, order, retain_graph, create_graph");
  add_repro_command(app, &exit_code);
  add_train_command(app, &exit_code);
  add_trace_commands(app, &exit_code);
  default_backend_to_mpi_under_mpirun(app);
  // After parsing, before the chosen subcommand's callback runs.
  app.parse_complete_callback([&] { check_launch(app, args); });
  try {
    check_command(app, args);
    app.parse(argc, argv);
    if (app.get_subcommands().empty()) {
      std::cout << app.help();
      return kExitOk;
    }
    if (*demo) return run_demo(std::cout);
    if (*autograd) return run_autograd_demo(std::cout);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);   // --help, --version
    return print_error(classify_error(e), json, std::cout, std::cerr);
  } catch (const std::exception& e) {
    const int code = print_error(classify_error(e), json, std::cout, std::cerr);
    // Under mpirun a rank that stops must not leave the others waiting in a collective.
    if (tinyddp::dist::launched_by_mpirun()) tinyddp::dist::mpi_abort(code);
    return code;
  }
  return exit_code;
}
