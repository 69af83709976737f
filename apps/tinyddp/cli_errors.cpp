#include "apps/tinyddp/cli_errors.h"

#include <CLI/CLI.hpp>
#include <iostream>
#include <nlohmann/json.hpp>

#include "dist/mpi_process_group.h"
#include "dist/process_group.h"

namespace tinyddp::app {

ErrorReport classify_error(const std::exception& e) {
  if (dynamic_cast<const CLI::ParseError*>(&e) || dynamic_cast<const UsageError*>(&e))
    return {kExitUsage, "usage", e.what()};
  if (dynamic_cast<const dist::CollectiveFailedError*>(&e) || dynamic_cast<const dist::PeerLeftError*>(&e))
    return {kExitCollectiveFailed, "collective", e.what()};
  return {kExitRaised, "error", e.what()};
}

int print_error(const ErrorReport& report, bool json, std::ostream& out, std::ostream& err) {
  err << "tinyddp: error: " << report.message << "\n";
  if (report.type == "usage" && report.message.find("--help") == std::string::npos)
    err << "Run with --help for more information.\n";
  const bool mpirun = dist::launched_by_mpirun();
  if (json && (!mpirun || dist::mpirun_rank() == 0)) {
    nlohmann::json e = {{"type", report.type}, {"message", report.message}, {"exit_code", report.exit_code}};
    if (mpirun) e["rank"] = dist::mpirun_rank();
    out << nlohmann::json{{"error", e}}.dump(1) << std::endl;
  }
  return report.exit_code;
}

}  // namespace tinyddp::app
