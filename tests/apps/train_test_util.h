// Shared by the `tinyddp train` tests: running the command through its real command-line registration.
#pragma once

#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <string>
#include <utility>
#include <vector>

#include "apps/tinyddp/commands.h"

namespace tinyddp::app::test {

// Runs `tinyddp train ARGS` (args start with "train") and returns (exit code, stdout).
inline std::pair<int, std::string> run_cli(std::vector<std::string> args) {
  CLI::App app;
  int exit_code = -1;
  add_train_command(app, &exit_code);
  args.insert(args.begin(), "tinyddp");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  ::testing::internal::CaptureStdout();
  app.parse(static_cast<int>(argv.size()), argv.data());
  return {exit_code, ::testing::internal::GetCapturedStdout()};
}

}  // namespace tinyddp::app::test
