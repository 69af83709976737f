// tinyddp: learn, reproduce and measure how data-parallel training works.
//   tinyddp demo        what a new user runs first
//   tinyddp autograd    a walkthrough of the autograd engine
#include <CLI/CLI.hpp>
#include <iostream>

#include "apps/tinyddp/commands.h"
#include "engine/core/error.h"

int main(int argc, char** argv) {
  CLI::App app{"tinyddp: a from-scratch autograd engine and DDP reducer that behave like PyTorch 1.13"};
  app.require_subcommand(1);
  auto* demo = app.add_subcommand("demo", "Run the guided demo (currently: the autograd walkthrough)");
  auto* autograd = app.add_subcommand("autograd", "Walk through the autograd engine: graph, order, retain_graph, create_graph");
  CLI11_PARSE(app, argc, argv);
  try {
    if (*demo || *autograd) return tinyddp::app::run_autograd_demo(std::cout);
  } catch (const tinyddp::Error& e) {
    std::cerr << "tinyddp: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
