// `tinyddp repro`: the command line around run_repro.
#include <CLI/CLI.hpp>
#include <iomanip>
#include <iostream>

#include "apps/tinyddp/commands.h"
#include "apps/tinyddp/repro/repro.h"
#include "apps/tinyddp/repro/scenarios.h"
#include "dist/mpi_process_group.h"
#include "dist/trace_file.h"

namespace tinyddp::app {

namespace {

struct ReproArgs {
  std::string name;
  std::string plan;
  bool list = false;
  bool json = false;
  std::string debug;
  std::string unsynced = "warn";
  std::string trace;   // --trace FILE
  // Tri-state flags: given (on or off) overrides the named scenario; absent keeps it. CLI11 writes false
  // into an unset optional<bool>, so presence is read from the option's count.
  bool find_unused = false, static_graph = false, extra_unused = false;
  CLI::Option *find_unused_opt = nullptr, *static_graph_opt = nullptr, *extra_unused_opt = nullptr;
  ReproOptions options;
};

void list_scenarios(std::ostream& out) {
  out << "Named scenarios (tinyddp repro NAME):\n";
  for (const Scenario& s : scenarios()) {
    out << "  " << std::left << std::setw(22) << s.name << s.plan;
    if (s.find_unused_parameters) out << "  [find_unused_parameters]";
    if (s.static_graph) out << "  [static_graph]";
    if (s.extra_unused_parameter) out << "  [extra unused parameter]";
    out << "\n";
  }
  out << "Or any plan: tinyddp repro --plan \"forward; backward(a, retain); backward(b+t); step\"\n";
}

int run(ReproArgs& a) {
  if (a.list) {
    list_scenarios(std::cout);
    return 0;
  }
  TINYDDP_CHECK(a.name.empty() != a.plan.empty(), "repro: give a scenario NAME or --plan \"...\" (not both); "
                                                   "`tinyddp repro --list` shows the scenarios.");
  ReproOptions o = a.options;
  std::string plan = a.plan, scenario = "custom";
  if (!a.name.empty()) {
    const Scenario* s = find_scenario(a.name);
    if (!s) {
      std::cerr << "tinyddp: error: unknown scenario '" << a.name << "'.\n";
      list_scenarios(std::cerr);
      return 2;
    }
    plan = s->plan;
    scenario = s->name;
    o.find_unused_parameters = s->find_unused_parameters;
    o.static_graph = s->static_graph;
    o.extra_unused_parameter = s->extra_unused_parameter;
  }
  if (a.find_unused_opt->count() > 0) o.find_unused_parameters = a.find_unused;
  if (a.static_graph_opt->count() > 0) o.static_graph = a.static_graph;
  if (a.extra_unused_opt->count() > 0) o.extra_unused_parameter = a.extra_unused;
  o.debug = a.debug.empty() ? dist::debug_level_from_env()
            : a.debug == "OFF" ? dist::DebugLevel::off
            : a.debug == "INFO" ? dist::DebugLevel::info
                                : dist::DebugLevel::detail;
  o.unsynced_grads = a.unsynced == "error" ? dist::UnsyncedGradPolicy::error
                     : a.unsynced == "ignore" ? dist::UnsyncedGradPolicy::ignore
                                              : dist::UnsyncedGradPolicy::warn;
  if (o.backend == "mpi" && !dist::launched_by_mpirun())
    std::cerr << "tinyddp: note: --backend mpi without mpirun runs a single rank; launch with "
                 "`mpirun -np 2 tinyddp repro ... --backend mpi`.\n";
  std::optional<dist::TraceRecording> recording;
  if (!a.trace.empty()) {
    std::string flags = "ranks " + std::to_string(o.ranks);
    if (o.find_unused_parameters) flags += ", find_unused_parameters";
    if (o.static_graph) flags += ", static_graph";
    if (o.extra_unused_parameter) flags += ", extra unused parameter";
    recording.emplace(a.trace, o.backend, nlohmann::json{{"command", "tinyddp repro"}, {"scenario", scenario},
                                                         {"plan", plan}, {"options", flags}});
  }
  const ReproResult result = run_repro(scenario, plan, o);
  if (recording) recording->finish();
  // Under mpirun every rank holds the whole result; rank 0 prints it.
  const bool printer = o.backend != "mpi" || dist::mpi_world()->rank() == 0;
  if (printer) {
    if (a.json) std::cout << to_json(result).dump(1) << "\n";
    else print_report(std::cout, result);
  }
  return 0;
}

}  // namespace

void add_repro_command(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<ReproArgs>();
  CLI::App* cmd = app.add_subcommand(
      "repro", "Reproduce DDP's multi-task errors and silent drift, deterministically, as PyTorch 1.13 behaves");
  cmd->footer(
      "Plan language (one iteration; every iteration starts with zero_grad):\n"
      "  forward | forward(no_text) | forward(drop_text) | forward(detach)\n"
      "  backward(EXPR) | backward(EXPR, retain)   EXPR: a, b, t, dummy, e.g. a+0.5*b+0.5*t\n"
      "  no_sync{ STEPS } | step                   steps are separated by ';'\n"
      "Example: tinyddp repro --plan \"forward; backward(a, retain); backward(b+t); step\"");
  cmd->add_option("name", args->name, "Scenario to run (see --list)");
  cmd->add_flag("--list", args->list, "List the named scenarios");
  cmd->add_option("--plan", args->plan, "Run this plan instead of a named scenario");
  cmd->add_option("--ranks", args->options.ranks, "Number of ranks (thread backend)")->capture_default_str();
  cmd->add_option("--backend", args->options.backend, "thread or mpi (under mpirun)")
      ->check(CLI::IsMember({"thread", "mpi"}))
      ->capture_default_str();
  cmd->add_option("--iterations", args->options.iterations, "Iterations of the plan")->capture_default_str();
  args->find_unused_opt = cmd->add_flag("--find-unused-parameters,!--no-find-unused-parameters", args->find_unused,
                                        "DDP(find_unused_parameters=True)");
  args->static_graph_opt = cmd->add_flag("--static-graph,!--no-static-graph", args->static_graph, "DDP(static_graph=True)");
  args->extra_unused_opt = cmd->add_flag("--extra-unused-parameter,!--no-extra-unused-parameter", args->extra_unused,
                                         "Register `unused_scale` first (index 0), never used");
  cmd->add_option("--debug", args->debug, "TORCH_DISTRIBUTED_DEBUG level (default: the environment variable)")
      ->check(CLI::IsMember({"OFF", "INFO", "DETAIL"}));
  cmd->add_option("--bucket-cap-mb", args->options.bucket_cap_mb, "DDP bucket_cap_mb")->capture_default_str();
  cmd->add_flag("--same-data", args->options.same_data, "Every rank draws the same micro-batches");
  cmd->add_option("--unsynced-grads", args->unsynced,
                  "Gradients that arrive after DDP finalized: warn, error or ignore (tinyddp's check)")
      ->check(CLI::IsMember({"warn", "error", "ignore"}))
      ->capture_default_str();
  cmd->add_option("--timeout-ms", args->options.timeout_ms, "Timeout of every collective")->capture_default_str();
  cmd->add_flag("--json", args->json, "Print one JSON object");
  cmd->add_option("--trace", args->trace,
                  "Record a Chrome trace (Perfetto, chrome://tracing) in FILE; under mpirun, FILE.rank<N>.json");
  cmd->callback([args, exit_code] { *exit_code = run(*args); });
}

}  // namespace tinyddp::app
