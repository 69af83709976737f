#include "apps/tinyddp/repro/repro.h"

#include <map>
#include <ostream>

#include "dist/comm_trace.h"
#include "dist/mpi_process_group.h"
#include "dist/replica_sync.h"
#include "dist/thread_process_group.h"
#include "models/nn/nn.h"
#include "models/optim/sgd.h"
#include "models/scenario/scenario_model.h"

namespace tinyddp::app {

namespace {

// Runs the plan as one rank; never throws for what the plan does (errors are recorded).
RankResult run_rank(std::shared_ptr<dist::ProcessGroup> pg, const std::vector<PlanStep>& plan, const ReproOptions& o) {
  RankResult rr;
  rr.rank = pg->rank();
  trace::RankScope trace_rank(pg->rank());   // this thread's trace events belong to this rank
  // Each rank starts from different weights; DDP's construction broadcasts rank 0's.
  manual_seed(o.seed + 17 * static_cast<uint64_t>(pg->rank() + 1));
  models::ScenarioModel model(o.extra_unused_parameter);
  optim::SGD sgd(model.parameters(), {.lr = 0.1});
  dist::DDPOptions ddp_options;
  ddp_options.bucket_cap_mb = o.bucket_cap_mb;
  ddp_options.find_unused_parameters = o.find_unused_parameters;
  ddp_options.static_graph = o.static_graph;
  ddp_options.debug_level = o.debug;
  ddp_options.unsynced_grads = o.unsynced_grads;
  ddp_options.print_warnings = false;
  CallRecord* current = nullptr;
  std::optional<dist::DistributedDataParallel> ddp;
  std::vector<Tensor> outputs;
  models::ScenarioBatch batch;
  int64_t draws = 0;
  const auto params = model.parameters();
  auto grad_hashes = [&] {
    std::vector<uint64_t> h;
    for (const Tensor& p : params) h.push_back(dist::replica_hash(p.grad()));
    return h;
  };

  std::function<void(const std::vector<PlanStep>&, int, std::map<std::string, int>&, bool)> run_steps;
  run_steps = [&](const std::vector<PlanStep>& steps, int it, std::map<std::string, int>& counts, bool in_no_sync) {
    for (const PlanStep& step : steps) {
      if (step.kind == PlanStep::Kind::no_sync) {
        auto guard = ddp->no_sync();
        run_steps(step.body, it, counts, true);
        continue;
      }
      const std::string kind = step.kind == PlanStep::Kind::forward ? "forward"
                               : step.kind == PlanStep::Kind::backward ? "backward" : "step";
      CallRecord& rec = rr.calls.emplace_back();
      rec.iteration = it;
      rec.at = kind + " #" + std::to_string(++counts[kind]) + " of iteration " + std::to_string(it);
      rec.label = step.text();
      rec.in_no_sync = in_no_sync;
      current = &rec;
      auto call_span = trace::span([&] {
        return trace::What{"call", step.kind == PlanStep::Kind::step ? "optimizer step" : rec.label,
                           {{"at", rec.at}, {"iteration", it}, {"no_sync", in_no_sync}}};
      });
      try {
        if (step.kind == PlanStep::Kind::forward) {
          batch = models::scenario_batch(o.seed, pg->rank(), draws++, o.same_data);
          outputs = ddp->forward([&] { return model.forward(batch.x, step.mode); });
        } else if (step.kind == PlanStep::Kind::backward) {
          if (outputs.empty()) throw std::invalid_argument("plan: backward(...) before any forward");
          Tensor loss;
          for (const LossTerm& term : step.terms) {
            Tensor v = models::scenario_loss(model, term.name, outputs, batch);
            if (term.scale != 1.0) v = v * term.scale;
            loss = loss.defined() ? loss + v : v;
          }
          loss.backward({}, {.retain_graph = step.retain});
          while (rr.grad_hashes_per_iteration.size() < static_cast<size_t>(it)) rr.grad_hashes_per_iteration.emplace_back();
          rr.grad_hashes_per_iteration[it - 1] = grad_hashes();
        } else {
          ddp->check_before_step();
          sgd.step();
        }
      } catch (...) {
        current = nullptr;
        throw;
      }
      const dist::Reducer& r = ddp->reducer();
      rec.armed = r.expect_autograd_hooks();
      rec.require_finalize = r.require_finalize();
      rec.ready = r.ready_parameters().size();
      rec.num_params = params.size();
      rec.buckets = r.bucket_indices();
      rec.pending = r.bucket_pending();
      current = nullptr;
    }
  };

  std::string where = "DistributedDataParallel construction";
  try {
    ddp.emplace(model.named_parameters(), pg, ddp_options);
    ddp->reducer().set_event_observer([&](const dist::ReducerEvent& e) {
      if (!current) return;
      using K = dist::ReducerEvent::Kind;
      switch (e.kind) {
        case K::hook:
          if (ddp->reducer().expect_autograd_hooks()) current->hooks.push_back(e.index);
          break;
        case K::hook_ignored: current->hooks_ignored.push_back(e.index); break;
        case K::marked_unused: current->marked_unused.push_back(e.index); break;
        case K::bucket_launched: current->launched.push_back(e.index); break;
        case K::finalized: current->finalized = true; break;
        case K::rebuilt: current->rebuilt = true; break;
        case K::marked_ready: break;
      }
    });
    for (int it = 1; it <= o.iterations; ++it) {
      auto iteration_span =
          trace::span([&] { return trace::What{"iteration", "iteration " + std::to_string(it), {{"iteration", it}}}; });
      sgd.zero_grad();
      std::map<std::string, int> counts;
      run_steps(plan, it, counts, false);
    }
  } catch (const std::exception& e) {
    ReproError err;
    err.type = dynamic_cast<const std::invalid_argument*>(&e) ? "ValueError" : "RuntimeError";
    err.message = e.what();
    err.raised_at = rr.calls.empty() ? where : rr.calls.back().at;
    err.rank = pg->rank();
    if (!rr.calls.empty()) rr.calls.back().error = err.message;
    trace::instant(
        [&] { return trace::What{"error", err.type, {{"message", err.message}, {"raised_at", err.raised_at}}}; });
    rr.error = err;
  }
  if (ddp) rr.warnings = ddp->warnings();
  for (const Tensor& p : params) rr.param_hashes.push_back(dist::replica_hash(p));
  return rr;
}

// ---- moving rank results between processes (mpi) ----
nlohmann::json rank_to_json(const RankResult& r) {
  nlohmann::json j;
  j["rank"] = r.rank;
  j["warnings"] = r.warnings;
  j["param_hashes"] = r.param_hashes;
  j["grad_hashes"] = r.grad_hashes_per_iteration;
  if (r.error) j["error"] = {{"type", r.error->type}, {"message", r.error->message}, {"raised_at", r.error->raised_at}};
  nlohmann::json calls = nlohmann::json::array();
  for (const CallRecord& c : r.calls)
    calls.push_back({{"iteration", c.iteration}, {"at", c.at}, {"label", c.label}, {"in_no_sync", c.in_no_sync},
                     {"hooks", c.hooks}, {"hooks_ignored", c.hooks_ignored}, {"marked_unused", c.marked_unused},
                     {"launched", c.launched}, {"finalized", c.finalized}, {"rebuilt", c.rebuilt}, {"armed", c.armed},
                     {"require_finalize", c.require_finalize}, {"ready", c.ready}, {"num_params", c.num_params},
                     {"buckets", c.buckets}, {"pending", c.pending}, {"error", c.error}});
  j["calls"] = calls;
  return j;
}

RankResult rank_from_json(const nlohmann::json& j) {
  RankResult r;
  r.rank = j["rank"];
  r.warnings = j["warnings"].get<std::vector<std::string>>();
  r.param_hashes = j["param_hashes"].get<std::vector<uint64_t>>();
  r.grad_hashes_per_iteration = j["grad_hashes"].get<std::vector<std::vector<uint64_t>>>();
  if (j.contains("error")) r.error = ReproError{j["error"]["type"], j["error"]["message"], j["error"]["raised_at"], r.rank};
  for (const auto& c : j["calls"]) {
    CallRecord rec;
    rec.iteration = c["iteration"];
    rec.at = c["at"];
    rec.label = c["label"];
    rec.in_no_sync = c["in_no_sync"];
    rec.hooks = c["hooks"].get<std::vector<size_t>>();
    rec.hooks_ignored = c["hooks_ignored"].get<std::vector<size_t>>();
    rec.marked_unused = c["marked_unused"].get<std::vector<size_t>>();
    rec.launched = c["launched"].get<std::vector<size_t>>();
    rec.finalized = c["finalized"];
    rec.rebuilt = c["rebuilt"];
    rec.armed = c["armed"];
    rec.require_finalize = c["require_finalize"];
    rec.ready = c["ready"];
    rec.num_params = c["num_params"];
    rec.buckets = c["buckets"].get<std::vector<std::vector<size_t>>>();
    rec.pending = c["pending"].get<std::vector<size_t>>();
    rec.error = c["error"];
    r.calls.push_back(std::move(rec));
  }
  return r;
}

// Every rank's result on every rank: each serializes its own and the strings are allgathered.
std::vector<RankResult> gather_results(dist::ProcessGroup& pg, const RankResult& mine) {
  const std::string text = rank_to_json(mine).dump();
  std::vector<Tensor> lengths;
  for (int r = 0; r < pg.size(); ++r) lengths.push_back(zeros({1}, DType::i64));
  pg.allgather(lengths, full({1}, static_cast<double>(text.size()), DType::i64))->wait();
  int64_t longest = 0;
  for (const Tensor& l : lengths) longest = std::max(longest, l.item<int64_t>());
  std::vector<int64_t> bytes(static_cast<size_t>(longest), 0);
  for (size_t i = 0; i < text.size(); ++i) bytes[i] = static_cast<unsigned char>(text[i]);
  std::vector<Tensor> all;
  for (int r = 0; r < pg.size(); ++r) all.push_back(zeros({longest}, DType::i64));
  pg.allgather(all, from_vector(bytes, {longest}))->wait();
  std::vector<RankResult> out;
  for (int r = 0; r < pg.size(); ++r) {
    const auto v = all[r].to_vector<int64_t>();
    std::string s(static_cast<size_t>(lengths[r].item<int64_t>()), '\0');
    for (size_t i = 0; i < s.size(); ++i) s[i] = static_cast<char>(v[i]);
    out.push_back(rank_from_json(nlohmann::json::parse(s)));
  }
  return out;
}

}  // namespace

ReproResult run_repro(const std::string& scenario, const std::string& plan_string, const ReproOptions& o) {
  const std::vector<PlanStep> plan = parse_plan(plan_string);
  TINYDDP_CHECK(o.iterations >= 1, "repro: --iterations must be at least 1, got ", o.iterations, ".");
  TINYDDP_CHECK(o.bucket_cap_mb > 0, "repro: --bucket-cap-mb must be positive, got ", o.bucket_cap_mb, ".");
  ReproResult result;
  result.scenario = scenario;
  result.plan = plan_text(plan);
  result.options = o;
  result.param_names = [&] {
    std::vector<std::string> names;
    for (const auto& [name, p] : models::ScenarioModel(o.extra_unused_parameter).named_parameters()) names.push_back(name);
    return names;
  }();

  if (o.backend == "thread") {
    TINYDDP_CHECK(o.ranks >= 1 && o.ranks <= 64, "repro: --ranks must be between 1 and 64 for the thread backend, got ",
                  o.ranks, ".");
    result.ranks.resize(o.ranks);
    auto world = std::make_shared<dist::ThreadWorld>(o.ranks, std::chrono::milliseconds(o.timeout_ms));
    std::vector<std::thread> threads;
    for (int r = 0; r < o.ranks; ++r)
      threads.emplace_back([&, r] { result.ranks[r] = run_rank(world->group(r), plan, o); });
    for (auto& t : threads) t.join();
  } else if (o.backend == "mpi") {
    TINYDDP_CHECK(dist::mpi_available(), "repro: this tinyddp was built without Open MPI; install libopenmpi-dev and "
                                         "openmpi-bin, rebuild, and launch with mpirun -np 2.");
    auto pg = dist::mpi_world();
    pg->set_timeout(std::chrono::milliseconds(o.timeout_ms));
    result.options.ranks = pg->size();
    RankResult mine = run_rank(pg, plan, o);
    trace::RankScope trace_rank(pg->rank());
    auto gather_span = trace::span([] { return trace::What{"call", "gather the ranks' reports (repro)", {}}; });
    trace::CommLabel gather_label([] { return trace::What{"call", "(repro reports)", {}}; });
    result.ranks = gather_results(*pg, mine);
  } else {
    throw Error("repro: unknown backend '" + o.backend + "'; expected thread or mpi.");
  }

  // The outcome as PyTorch reports it: the first rank that raised.
  for (const RankResult& r : result.ranks)
    if (r.error && !result.error) result.error = r.error;
  result.outcome = result.error ? "error" : "ok";
  result.warnings = result.ranks[0].warnings;
  for (size_t r = 1; r < result.ranks.size(); ++r)
    for (const std::string& w : result.ranks[r].warnings)
      if (std::find(result.warnings.begin(), result.warnings.end(), w) == result.warnings.end()) result.warnings.push_back(w);
  for (size_t p = 0; p < result.param_names.size(); ++p) {
    bool same = true;
    for (const RankResult& r : result.ranks) same &= r.param_hashes[p] == result.ranks[0].param_hashes[p];
    if (!same) result.params_out_of_sync.push_back(result.param_names[p]);
  }
  result.replicas_in_sync = result.params_out_of_sync.empty();
  size_t iterations = 0;
  for (const RankResult& r : result.ranks) iterations = std::max(iterations, r.grad_hashes_per_iteration.size());
  for (size_t it = 0; it < iterations; ++it) {
    bool same = true;
    for (const RankResult& r : result.ranks)
      same &= it < r.grad_hashes_per_iteration.size() && !r.grad_hashes_per_iteration[it].empty() &&
              r.grad_hashes_per_iteration[it] == result.ranks[0].grad_hashes_per_iteration[it];
    result.grads_in_sync_per_iteration.push_back(same);
  }
  return result;
}

nlohmann::json to_json(const ReproResult& r) {
  nlohmann::json j;
  j["scenario"] = r.scenario;
  j["plan"] = r.plan;
  j["ranks"] = r.options.ranks;
  j["backend"] = r.options.backend;
  j["options"] = {{"find_unused_parameters", r.options.find_unused_parameters},
                  {"static_graph", r.options.static_graph},
                  {"debug", dist::debug_level_name(r.options.debug)},
                  {"extra_unused_parameter", r.options.extra_unused_parameter},
                  {"same_data", r.options.same_data},
                  {"iterations", r.options.iterations},
                  {"bucket_cap_mb", r.options.bucket_cap_mb}};
  j["outcome"] = r.outcome;
  j["error"] = r.error ? nlohmann::json{{"type", r.error->type}, {"message", r.error->message},
                                        {"raised_at", r.error->raised_at}, {"rank", r.error->rank}}
                       : nlohmann::json(nullptr);
  j["warnings"] = r.warnings;
  j["replicas_in_sync"] = r.replicas_in_sync;
  j["params_out_of_sync"] = r.params_out_of_sync;
  j["grads_in_sync_per_iteration"] = r.grads_in_sync_per_iteration;
  j["param_names"] = r.param_names;
  nlohmann::json ranks = nlohmann::json::array();
  for (const RankResult& rank : r.ranks) ranks.push_back(rank_to_json(rank)["calls"]);
  j["timeline"] = ranks;
  return j;
}

}  // namespace tinyddp::app
