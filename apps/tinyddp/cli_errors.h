// How `tinyddp` ends: one exit code per kind of ending, the same on every subcommand and backend (README,
// "Exit codes"), and what it prints for an error: `tinyddp: error: MESSAGE` on stderr and, with --json, one
// JSON object on stdout that a script can read instead of the report:
//   {"error": {"type": "usage", "message": "...", "exit_code": 2}}            ("rank": R under mpirun)
//
//   0  ok
//   1  the run raised: for repro, the reproduced program raised (the report says where), as PyTorch would
//   2  usage error: unknown command or option, a bad value, a command line the ranks do not share
//   3  a collective timed out or a rank failed (under mpirun the job is aborted at once)
//   4  train: the task weights or replicas differ across ranks at the end
#pragma once

#include <exception>
#include <iosfwd>
#include <string>

#include "base/error.h"

namespace tinyddp::app {

constexpr int kExitOk = 0;
constexpr int kExitRaised = 1;
constexpr int kExitUsage = 2;
constexpr int kExitCollectiveFailed = 3;
constexpr int kExitReplicasDiverged = 4;

// A command line that cannot run: exit code 2. Throw it (or TINYDDP_USAGE_CHECK) for a bad argument that
// CLI11's own validators cannot see (a combination of options, a file that must not be overwritten).
class UsageError : public Error {
 public:
  using Error::Error;
};

// One error, classified: its exit code and the "type" of the JSON error object.
struct ErrorReport {
  int exit_code = kExitRaised;
  std::string type;      // "usage", "collective" or "error"
  std::string message;
};

// CLI11's parse errors and UsageError: usage; dist::CollectiveFailedError and dist::PeerLeftError:
// collective; anything else: error (the run raised).
ErrorReport classify_error(const std::exception& e);

// Prints the error (text on `err`; with json also the JSON object on `out`, flushed, on rank 0 only under
// mpirun, so that stdout holds one object) and returns its exit code.
int print_error(const ErrorReport& report, bool json, std::ostream& out, std::ostream& err);

}  // namespace tinyddp::app

#define TINYDDP_USAGE_CHECK(cond, ...)                                                       \
  do {                                                                                       \
    if (!(cond)) throw ::tinyddp::app::UsageError(::tinyddp::detail::concat(__VA_ARGS__));   \
  } while (0)
