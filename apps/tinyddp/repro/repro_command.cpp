// `tinyddp repro`: the command line around run_repro.
#include <CLI/CLI.hpp>
#include <iomanip>
#include <iostream>

#include "apps/tinyddp/cli_checks.h"
#include "apps/tinyddp/cli_errors.h"
#include "apps/tinyddp/cli_scenarios.h"
#include "apps/tinyddp/commands.h"
#include "apps/tinyddp/repro/repro.h"
#include "apps/tinyddp/repro/repro_explain.h"
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
  bool find_unused = false, static_graph = false, extra_unused = false, buffer = false, broadcast_buffers = true,
       join = false, divide_by_current = false, throw_on_early_termination = false, gan = false;
  CLI::Option *find_unused_opt = nullptr, *static_graph_opt = nullptr, *extra_unused_opt = nullptr,
              *buffer_opt = nullptr, *broadcast_buffers_opt = nullptr, *join_opt = nullptr, *divide_opt = nullptr,
              *throw_opt = nullptr, *iterations_opt = nullptr, *gan_opt = nullptr;
  std::string iterations = "3";   // N, or one count per rank: 3,2
  ReproOptions options;
};

void list_scenarios(std::ostream& out) {
  out << "Named scenarios (tinyddp repro NAME):\n";
  for (const Scenario& s : scenarios()) {
    out << "  " << std::left << std::setw(30) << s.name << s.plan;
    const std::string options = s.options.summary();
    if (!options.empty()) out << "  [" << options << "]";
    out << "\n";
    if (!s.outcome.empty()) out << "  " << std::string(30, ' ') << "-> " << s.outcome << "\n";
  }
  out << "Or any plan: tinyddp repro --plan \"forward; backward(a, retain); backward(b+t); step\"\n";
}

// "3" or "3,2" (one count per rank).
std::vector<int> parse_iterations(const std::string& text) {
  std::vector<int> counts;
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t comma = std::min(text.find(',', pos), text.size());
    const std::string item = text.substr(pos, comma - pos);
    size_t used = 0;
    int n = 0;
    try {
      n = std::stoi(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    TINYDDP_USAGE_CHECK(used == item.size() && !item.empty() && n >= 1, "repro: --iterations takes a count of at least 1, or one "
                        "count per rank separated by commas (uneven inputs: --iterations 3,2), got '", text, "'.");
    counts.push_back(n);
    pos = comma + 1;
  }
  return counts;
}

int run(ReproArgs& a) {
  if (a.list) {
    if (a.json) std::cout << scenarios_to_json().dump(1) << "\n";
    else list_scenarios(std::cout);
    return kExitOk;
  }
  TINYDDP_USAGE_CHECK(a.name.empty() != a.plan.empty(), "repro: give a scenario NAME or --plan \"...\" (not both); "
                                                         "`tinyddp repro --list` shows the scenarios.");
  ReproOptions o = a.options;
  std::string plan = a.plan, scenario = "custom";
  if (!a.name.empty()) {
    const Scenario* s = find_scenario(a.name);
    if (!s) {
      std::string names;
      for (const Scenario& known : scenarios()) names += (names.empty() ? "" : ", ") + known.name;
      throw UsageError("unknown scenario '" + a.name + "'. The named scenarios: " + names +
                       "; `tinyddp repro --list` shows each one's plan and outcome.");
    }
    plan = s->plan;
    scenario = s->name;
    static_cast<PlanOptions&>(o) = s->options;
  }
  if (a.find_unused_opt->count() > 0) o.find_unused_parameters = a.find_unused;
  if (a.static_graph_opt->count() > 0) o.static_graph = a.static_graph;
  if (a.extra_unused_opt->count() > 0) o.extra_unused_parameter = a.extra_unused;
  if (a.buffer_opt->count() > 0) o.buffer = a.buffer;
  if (a.broadcast_buffers_opt->count() > 0) o.broadcast_buffers = a.broadcast_buffers;
  if (a.join_opt->count() > 0) o.join = a.join;
  if (a.divide_opt->count() > 0) o.join_divide_by_initial_world_size = !a.divide_by_current;
  if (a.throw_opt->count() > 0) o.join_throw_on_early_termination = a.throw_on_early_termination;
  if (a.gan_opt->count() > 0) o.gan = a.gan;
  if (a.iterations_opt->count() > 0) {
    const std::vector<int> counts = parse_iterations(a.iterations);
    o.rank_iterations.clear();
    if (counts.size() == 1) o.iterations = counts[0];
    else o.rank_iterations = counts;
  }
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
    if (const std::string more = o.summary(); !more.empty()) flags += ", " + more;
    recording.emplace(a.trace, o.backend, nlohmann::json{{"command", "tinyddp repro"}, {"scenario", scenario},
                                                         {"plan", plan}, {"options", flags}});
  }
  const ReproResult result = run_repro(scenario, plan, o);
  if (recording) recording->finish();
  // Under mpirun every rank holds the whole result; rank 0 prints it.
  const bool printer = o.backend != "mpi" || dist::mpi_world()->rank() == 0;
  if (printer) {
    if (a.json) {
      nlohmann::json j = to_json(result);
      const Explanation x = explain(result);
      j["explanation"] = {{"scenario", x.scenario}, {"why", x.why}, {"fix", x.fix}, {"note", x.note},
                          {"tried", x.alternatives}};
      std::cout << j.dump(1) << "\n";
    } else {
      print_report(std::cout, result);
    }
  }
  return result.outcome == "error" ? kExitRaised : kExitOk;
}

}  // namespace

void add_repro_command(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<ReproArgs>();
  CLI::App* cmd = app.add_subcommand(
      "repro", "Reproduce DDP's multi-task errors and silent drift, deterministically, as PyTorch 1.13 behaves");
  cmd->footer(
      "Plan language (one iteration, run by every rank; every iteration starts with zero_grad; steps separated by ';').\n"
      "Steps:\n"
      "  forward | forward(FLAG, ...)     a DDP forward on a fresh micro-batch; it returns a, b, t (the 3 task outputs)\n"
      "  backward(EXPR[, retain][, create_graph])   loss.backward(retain_graph=True, create_graph=True); retain\n"
      "                                   defaults to create_graph, as in PyTorch\n"
      "  grad(EXPR[, retain][, create_graph])  autograd.grad over the parameters, then .grad = result by hand\n"
      "  step                             an SGD step\n"
      "  no_sync{ STEPS }                 the steps inside ddp.no_sync()\n"
      "  freeze(M) | unfreeze(M)          M.requires_grad_(False | True); M: trunk, trunk.0, trunk.2, head_a, head_b,\n"
      "                                   text_decoder (disc with --gan)\n"
      "  rank(R){ STEPS }                 only rank R runs the steps (ranks whose graphs differ)\n"
      "  iter(N){ STEPS } | iter(N+){ STEPS }   only in iteration N | from iteration N on (from 1)\n"
      "  disc(real | fake | fake_detached)   with --gan: the discriminator's DDP forward on yt | t | t.detach()\n"
      "  disc_step                        with --gan: the discriminator's SGD step\n"
      "Forward flags (at most one of the first three):\n"
      "  no_text                          the text decoder is not called; the forward returns only a and b\n"
      "  drop_text                        the text decoder runs but its output t is not returned\n"
      "  detach                           head_b and the text decoder read the trunk's output detached\n"
      "  ckpt                             trunk.2 under checkpoint(use_reentrant=True)\n"
      "  ckpt_nr                          trunk.2 under checkpoint(use_reentrant=False)\n"
      "  reuse                            trunk.2 applied twice (shared weights)\n"
      "  features                         also return the trunk features h (for t_outside)\n"
      "Loss terms: EXPR is TERM + TERM ..., each [SCALE*]NAME[@K] (SCALE a number > 0, e.g. 0.5*b):\n"
      "  a                                task a's loss: MSE of head_a's output (regression)\n"
      "  b                                task b's loss: cross-entropy of head_b's output (3 classes)\n"
      "  t                                the text decoder's MSE (needs a forward that returns t)\n"
      "  dummy                            0 * the sum of every parameter: reaches every parameter, adds nothing\n"
      "  t_outside                        the text decoder applied outside DDP's forward to forward(features)'s h\n"
      "  d_real, d_fake, g_adv            with --gan: the discriminator's MSE to 1, 0, 1 on disc(real), disc(fake)\n"
      "  @K                               read forward #K of this iteration (default: the latest forward)\n"
      "Examples:\n"
      "  tinyddp repro --plan \"forward; backward(a, retain); backward(b+t); step\"\n"
      "  tinyddp repro --plan \"forward(ckpt); backward(a+b+t); step\" --find-unused-parameters\n"
      "  tinyddp repro --plan \"forward; backward(a+b+t); step\" --iterations 3,2 --join\n"
      "A mistake in the plan (a misspelt word, backward before any forward, t after forward(no_text)) is a usage\n"
      "error (exit code 2). The plan language in full: docs/the-runtime-error.md, \"Writing your own plan\";\n"
      "every named scenario explained: the same file.");
  cmd->add_option("name", args->name, "Scenario to run (see --list)");
  cmd->add_flag("--list", args->list, "List the named scenarios");
  cmd->add_option("--plan", args->plan, "Run this plan instead of a named scenario");
  cmd->add_option("--ranks", args->options.ranks, "Number of ranks (thread backend)")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  cmd->add_option("--backend", args->options.backend, "thread or mpi (under mpirun)")
      ->check(CLI::IsMember({"thread", "mpi"}))
      ->capture_default_str();
  args->iterations_opt = cmd->add_option("--iterations", args->iterations,
                                         "Iterations of the plan, or one count per rank (uneven inputs): 3,2")
                             ->capture_default_str();
  args->find_unused_opt = cmd->add_flag("--find-unused-parameters,!--no-find-unused-parameters", args->find_unused,
                                        "DDP(find_unused_parameters=True)");
  args->static_graph_opt = cmd->add_flag("--static-graph,!--no-static-graph", args->static_graph, "DDP(static_graph=True)");
  args->extra_unused_opt = cmd->add_flag("--extra-unused-parameter,!--no-extra-unused-parameter", args->extra_unused,
                                         "Register `unused_scale` first (index 0), never used");
  args->buffer_opt = cmd->add_flag("--buffer,!--no-buffer", args->buffer,
                                   "The model registers a buffer (feature_scale) that every forward reads");
  args->broadcast_buffers_opt = cmd->add_flag("--broadcast-buffers,!--no-broadcast-buffers", args->broadcast_buffers,
                                              "DDP(broadcast_buffers=...), default True");
  args->join_opt = cmd->add_flag("--join,!--no-join", args->join,
                                 "Run the iterations inside `with ddp.join():` (uneven inputs)");
  args->divide_opt = cmd->add_flag("--join-divide-by-current-world-size", args->divide_by_current,
                                   "ddp.join(divide_by_initial_world_size=False)");
  args->throw_opt = cmd->add_flag("--join-throw-on-early-termination", args->throw_on_early_termination,
                                  "ddp.join(throw_on_early_termination=True)");
  args->gan_opt = cmd->add_flag("--gan,!--no-gan", args->gan,
                                "Add a GAN's discriminator with its own DDP and SGD (disc(...), disc_step, d_real, d_fake, "
                                "g_adv)");
  cmd->add_option("--debug", args->debug, "TORCH_DISTRIBUTED_DEBUG level (default: the environment variable)")
      ->check(CLI::IsMember({"OFF", "INFO", "DETAIL"}));
  cmd->add_option("--bucket-cap-mb", args->options.bucket_cap_mb, "DDP bucket_cap_mb")
      ->check(at_least(0))
      ->capture_default_str();
  cmd->add_flag("--same-data", args->options.same_data, "Every rank draws the same micro-batches");
  cmd->add_option("--unsynced-grads", args->unsynced,
                  "Gradients that arrive after DDP finalized: warn, error or ignore (tinyddp's check)")
      ->check(CLI::IsMember({"warn", "error", "ignore"}))
      ->capture_default_str();
  cmd->add_option("--timeout-ms", args->options.timeout_ms, "Timeout of every collective")
      ->check(at_least(1))
      ->capture_default_str();
  cmd->add_flag("--json", args->json, "Print one JSON object");
  cmd->add_option("--trace", args->trace,
                  "Record a Chrome trace (Perfetto, chrome://tracing) in FILE; under mpirun one file per rank, "
                  "FILE less .json + .rank<N>.json (t.json: t.rank0.json, t.rank1.json; join them with trace-merge)");
  cmd->callback([args, exit_code] { *exit_code = run(*args); });
}

}  // namespace tinyddp::app
