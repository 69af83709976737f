#include "apps/tinyddp/cli_launch.h"

#include <CLI/CLI.hpp>
#include <algorithm>

#include "apps/tinyddp/cli_errors.h"
#include "dist/mpi_process_group.h"
#include "engine/tinyddp.h"

namespace tinyddp::app {

namespace {

// The command line as one string, arguments separated by NUL (which no argument contains).
std::string join(const std::vector<std::string>& args) {
  std::string s;
  for (const std::string& a : args) s += a + '\0';
  return s;
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  size_t pos = 0;
  for (size_t nul; (nul = s.find('\0', pos)) != std::string::npos; pos = nul + 1) out.push_back(s.substr(pos, nul - pos));
  return out;
}

std::string shown(const std::vector<std::string>& args) {
  std::string s = "tinyddp";
  for (const std::string& a : args) s += " " + (a.find(' ') == std::string::npos ? a : "'" + a + "'");
  return s;
}

// The chosen subcommand of `app`, or null.
CLI::App* chosen(CLI::App& app) {
  const auto subs = app.get_subcommands();
  return subs.empty() ? nullptr : subs.front();
}

}  // namespace

void default_backend_to_mpi_under_mpirun(CLI::App& app) {
  if (!dist::launched_by_mpirun()) return;
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; }))
    if (CLI::Option* backend = sub->get_option_no_throw("--backend"))
      backend->run_callback_for_default()->default_val("mpi");
}

void check_launch(CLI::App& app, const std::vector<std::string>& args) {
  CLI::App* sub = chosen(app);
  if (!sub) return;
  CLI::Option* backend = sub->get_option_no_throw("--backend");
  if (!backend || backend->as<std::string>() != "mpi" || !dist::mpi_available()) return;
  auto pg = dist::mpi_world();
  if (CLI::Option* ranks = sub->get_option_no_throw("--ranks"); ranks && ranks->count() > 0) {
    const int asked = ranks->as<int>();
    TINYDDP_USAGE_CHECK(asked == pg->size(), sub->get_name(), ": --ranks ", asked, " with the mpi backend, but ",
                        dist::launched_by_mpirun() ? "mpirun started " : "without mpirun there is ", pg->size(),
                        " process", pg->size() == 1 ? "" : "es", ": under mpi the ranks are the processes. Drop "
                        "--ranks, or launch `mpirun -np ", asked, " tinyddp ", sub->get_name(), " ...`, or simulate ",
                        asked, " ranks in one process with --backend thread --ranks ", asked, ".");
  }
  if (CLI::Option* timeout = sub->get_option_no_throw("--timeout-ms"))
    pg->set_timeout(std::chrono::milliseconds(std::max(1, timeout->as<int>())));
  check_same_command_line(*pg, args);
}

void check_same_command_line(dist::ProcessGroup& pg, const std::vector<std::string>& args) {
  if (pg.size() == 1) return;
  const std::string mine = join(args);
  const std::vector<std::string> every = dist::allgather_strings(pg, mine);
  for (int r = 0; r < pg.size(); ++r) {
    const std::string& theirs = every[static_cast<size_t>(r)];
    if (theirs == mine) continue;
    const std::vector<std::string> a = split(theirs);
    size_t k = 0;
    while (k < a.size() && k < args.size() && a[k] == args[k]) ++k;
    const auto at = [&](const std::vector<std::string>& x) { return k < x.size() ? "'" + x[k] + "'" : "(nothing)"; };
    throw UsageError("the ranks of this mpirun job run different command lines: rank " + std::to_string(r) + " runs `" +
                     shown(a) + "` but rank " + std::to_string(pg.rank()) + " runs `" + shown(args) +
                     "` (argument " + std::to_string(k + 1) + ": " + at(a) + " vs " + at(args) +
                     "). Every rank must run the same options, or their collectives differ; launch one command: "
                     "`mpirun -np N tinyddp ...`.");
  }
}

}  // namespace tinyddp::app
