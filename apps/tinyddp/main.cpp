// tinyddp: learn, reproduce and measure how data-parallel training works.
//   tinyddp demo        what a new user runs first: the two-backward DDP error and its fix
//   tinyddp repro ...   any DDP pattern, deterministically, with PyTorch 1.13's errors
//   tinyddp autograd    a walkthrough of the autograd engine
//   tinyddp train ...   multi-task training with fixed, uncertainty or GradNorm weighting, on DDP ranks too
#include <CLI/CLI.hpp>
#include <iostream>

#include "apps/tinyddp/commands.h"
#include "base/error.h"
#include "dist/mpi_process_group.h"

int main(int argc, char** argv) {
  CLI::App app{"tinyddp: a from-scratch autograd engine and DDP reducer that behave like PyTorch 1.13"};
  app.require_subcommand(1);
  int exit_code = 0;
  auto* demo = app.add_subcommand("demo", "The two-backward DDP error, reproduced on 2 ranks, and the fix that works");
  auto* autograd = app.add_subcommand("autograd", "Walk through the autograd engine: graph, order, retain_graph, create_graph");
  tinyddp::app::add_repro_command(app, &exit_code);
  tinyddp::app::add_train_command(app, &exit_code);
  tinyddp::app::add_trace_commands(app, &exit_code);
  try {
    app.parse(argc, argv);
    if (*demo) return tinyddp::app::run_demo(std::cout);
    if (*autograd) return tinyddp::app::run_autograd_demo(std::cout);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    std::cerr << "tinyddp: error: " << e.what() << "\n";
    // Under mpirun a rank that stops must not leave the others waiting in a collective.
    if (tinyddp::dist::launched_by_mpirun()) tinyddp::dist::mpi_abort(1);
    return 1;
  }
  return exit_code;
}
