#include "apps/tinyddp/repro/repro.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <ostream>

#include "base/warning.h"
#include "dist/comm_trace.h"
#include "dist/join.h"
#include "engine/autograd/functional.h"
#include "dist/mpi_process_group.h"
#include "dist/replica_sync.h"
#include "dist/thread_process_group.h"
#include "models/nn/nn.h"
#include "models/optim/sgd.h"
#include "models/scenario/scenario_model.h"

namespace tinyddp::app {

namespace {

// One forward of the plan as a later term reads it: its outputs, its micro-batch, and how it ran.
struct ForwardRecord {
  std::vector<Tensor> outputs;
  models::ScenarioBatch batch;
  models::ScenarioForward how;
};

// A GAN's discriminator (PlanOptions::gan): scores a (B, 5) text output or target.
std::shared_ptr<nn::Sequential> make_discriminator() {
  return std::make_shared<nn::Sequential>(nn::Linear(5, 8), nn::ReLU(), nn::Linear(8, 1));
}

nn::Module& module_named(models::ScenarioModel& model, nn::Module* disc, const std::string& name) {
  if (name == "disc") {
    if (!disc) throw std::invalid_argument("plan: freeze(disc) and unfreeze(disc) need the discriminator (--gan)");
    return *disc;
  }
  if (name == "trunk") return *model.trunk;
  if (name == "trunk.0") return *(*model.trunk)[0];
  if (name == "trunk.2") return *(*model.trunk)[2];
  if (name == "head_a") return *model.head_a;
  if (name == "head_b") return *model.head_b;
  TINYDDP_INTERNAL_ASSERT(name == "text_decoder", "the plan parser let through module ", name);
  return *model.text_decoder;
}

// Runs the plan as one rank; never throws for what the plan does (errors are recorded).
RankResult run_rank(std::shared_ptr<dist::ProcessGroup> pg, const std::vector<PlanStep>& plan, const ReproOptions& o) {
  RankResult rr;
  rr.rank = pg->rank();
  trace::RankScope trace_rank(pg->rank());   // this thread's trace events belong to this rank
  // Warnings the engine gives on this thread (checkpointing's), in order, with DDP's after them.
  WarningHandlerGuard engine_warnings([&](const std::string& w) { rr.warnings.push_back(w); });
  // Each rank starts from different weights; DDP's construction broadcasts rank 0's.
  manual_seed(o.seed + 17 * static_cast<uint64_t>(pg->rank() + 1));
  models::ScenarioModel model({.extra_unused_parameter = o.extra_unused_parameter, .buffer = o.buffer});
  optim::SGD sgd(model.parameters(), {.lr = 0.1});
  const std::shared_ptr<nn::Sequential> disc = o.gan ? make_discriminator() : nullptr;
  std::optional<optim::SGD> disc_sgd;
  if (disc) disc_sgd.emplace(disc->parameters(), optim::SGDOptions{.lr = 0.1});
  dist::DDPOptions ddp_options;
  ddp_options.bucket_cap_mb = o.bucket_cap_mb;
  ddp_options.find_unused_parameters = o.find_unused_parameters;
  ddp_options.static_graph = o.static_graph;
  ddp_options.broadcast_buffers = o.broadcast_buffers;
  ddp_options.debug_level = o.debug;
  pg->set_detail_fingerprints(o.debug == dist::DebugLevel::detail);
  ddp_options.unsynced_grads = o.unsynced_grads;
  ddp_options.print_warnings = false;
  CallRecord* current = nullptr;
  const PlanStep* running = nullptr;   // the step of the latest call
  bool in_call = false;   // the last call record is the call an error belongs to (else `where` names it)
  std::optional<dist::DistributedDataParallel> ddp, disc_ddp;
  Tensor disc_real, disc_fake;   // the latest disc(real) and disc(fake...) outputs, (B, 1)
  std::optional<ForwardRecord> latest;           // the last forward, whatever its iteration
  std::vector<ForwardRecord> forwards;           // this iteration's, in order: term@K reads forwards[K-1]
  int64_t draws = 0;
  std::vector<Tensor> params = model.parameters();   // the main model's, then the discriminator's
  if (disc)
    for (const Tensor& p : disc->parameters()) params.push_back(p);
  auto grad_hashes = [&] {
    std::vector<uint64_t> h;
    for (const Tensor& p : params) h.push_back(dist::replica_hash(p.grad()));
    return h;
  };
  auto loss_of = [&](const std::vector<LossTerm>& terms, int it) {
    Tensor loss;
    for (const LossTerm& term : terms) {
      if (term.name == "dummy") {   // 0 * the parameters' sums: it reads no forward (the PyTorch script ignores @K)
        Tensor v = models::scenario_loss(model, "dummy", {}, {});
        if (term.scale != 1.0) v = v * term.scale;
        loss = loss.defined() ? loss + v : v;
        continue;
      }
      if (term.forward > static_cast<int>(forwards.size()))
        throw std::invalid_argument("plan: term " + term.name + "@" + std::to_string(term.forward) +
                                    " reads forward #" + std::to_string(term.forward) + " of iteration " +
                                    std::to_string(it) + ", but this rank has run " + std::to_string(forwards.size()) +
                                    " forward(s) in it so far");
      if (!term.forward && !latest) throw std::invalid_argument(
            "plan: a loss term before any forward: put a forward before the backward or grad that reads it");
      Tensor v;
      if (term.name == "d_real" || term.name == "d_fake" || term.name == "g_adv") {
        const Tensor& scored = term.name == "d_real" ? disc_real : disc_fake;
        if (!scored.defined())
          throw std::invalid_argument("plan: term " + term.name + " needs a " +
                                      (term.name == "d_real" ? "disc(real)" : "disc(fake) or disc(fake_detached)") +
                                      " before it");
        v = mse_loss(scored, full(scored.shape(), term.name == "d_fake" ? 0.0 : 1.0, scored.dtype()));
      } else {
        const ForwardRecord& f = term.forward ? forwards[term.forward - 1] : *latest;
        v = models::scenario_loss(model, term.name, f.outputs, f.batch, f.how);
      }
      if (term.scale != 1.0) v = v * term.scale;
      loss = loss.defined() ? loss + v : v;
    }
    return loss;
  };

  std::function<void(const std::vector<PlanStep>&, int, std::map<std::string, int>&, bool)> run_steps;
  run_steps = [&](const std::vector<PlanStep>& steps, int it, std::map<std::string, int>& counts, bool in_no_sync) {
    for (const PlanStep& step : steps) {
      switch (step.kind) {
        case PlanStep::Kind::no_sync: {
          auto guard = ddp->no_sync();
          run_steps(step.body, it, counts, true);
          continue;
        }
        case PlanStep::Kind::rank:
          if (pg->rank() == step.rank) run_steps(step.body, it, counts, in_no_sync);
          continue;
        case PlanStep::Kind::iteration:
          if (it == step.iteration || (step.and_later && it > step.iteration)) run_steps(step.body, it, counts, in_no_sync);
          continue;
        default: break;
      }
      const std::string kind = step.call_kind();
      running = &step;
      CallRecord& rec = rr.calls.emplace_back();
      in_call = true;   // an error from here on was raised by this call
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
        switch (step.kind) {
          case PlanStep::Kind::forward: {
            ForwardRecord f{{}, models::scenario_batch(o.seed, pg->rank(), draws++, o.same_data), step.forward};
            f.outputs = ddp->forward([&] { return model.forward(f.batch.x, f.how); });
            forwards.push_back(f);
            latest = std::move(f);
            break;
          }
          case PlanStep::Kind::backward:
          case PlanStep::Kind::grad: {
            const Tensor loss = loss_of(step.terms, it);
            const std::optional<bool> retain_graph = step.retain ? std::optional<bool>(true) : std::nullopt;
            if (step.kind == PlanStep::Kind::backward) {
              // retain_graph unset unless `retain`: it then defaults to create_graph, as PyTorch's None does.
              loss.backward({}, {.retain_graph = retain_graph, .create_graph = step.create_graph});
            } else {
              // autograd::grad never runs AccumulateGrad, so DDP's hooks do not fire: nothing is averaged. Over
              // the main model's parameters only (model.parameters() in the PyTorch script), not the
              // discriminator's.
              std::vector<Tensor> wanted;
              for (const Tensor& p : model.parameters())
                if (p.requires_grad()) wanted.push_back(p);
              const auto grads = autograd::grad(
                  {loss}, wanted, {},
                  {.retain_graph = retain_graph, .create_graph = step.create_graph, .allow_unused = true});
              for (size_t i = 0; i < wanted.size(); ++i)
                if (grads[i].defined()) wanted[i].set_grad(grads[i]);
            }
            rec.grad_hashes = grad_hashes();
            break;
          }
          case PlanStep::Kind::freeze:
          case PlanStep::Kind::unfreeze:
            module_named(model, disc.get(), step.module).requires_grad_(step.kind == PlanStep::Kind::unfreeze);
            break;
          case PlanStep::Kind::disc: {
            if (!disc) throw std::invalid_argument("plan: disc(...) needs the discriminator (--gan)");
            if (!latest) throw std::invalid_argument("plan: disc(...) before any forward");
            const bool has_t = latest->how.text == models::TextMode::normal || latest->how.text == models::TextMode::detach;
            if (step.disc_input != "real" && !has_t)
              throw std::invalid_argument("plan: disc(" + step.disc_input + ") needs a forward that returned t");
            const Tensor input = step.disc_input == "real" ? latest->batch.yt
                                 : step.disc_input == "fake" ? latest->outputs[2]
                                                             : latest->outputs[2].detach();
            const Tensor out = disc_ddp->forward([&] { return std::vector<Tensor>{(*disc)(input)}; })[0];
            (step.disc_input == "real" ? disc_real : disc_fake) = out;
            break;
          }
          case PlanStep::Kind::disc_step:
            if (!disc) throw std::invalid_argument("plan: disc_step needs the discriminator (--gan)");
            disc_ddp->check_before_step();
            disc_sgd->step();
            break;
          case PlanStep::Kind::step:
            ddp->check_before_step();
            sgd.step();
            break;
          default: TINYDDP_INTERNAL_ASSERT(false, "blocks are run above");
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
    ddp.emplace(model.named_parameters(), pg, ddp_options, model.named_buffers());
    if (disc) disc_ddp.emplace(disc->named_parameters(), pg, ddp_options);   // its own reducer, the same group
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
    // Python's `with ddp.join(...):` around the loop; finish() is its exit without an exception.
    std::optional<dist::Join> join;
    if (o.join)
      join.emplace(std::vector<dist::Joinable*>{&*ddp},
                   dist::JoinOptions{.enable = true,
                                     .throw_on_early_termination = o.join_throw_on_early_termination,
                                     .divide_by_initial_world_size = o.join_divide_by_initial_world_size});
    for (int it = 1; it <= iterations_of(o, pg->rank()); ++it) {
      auto iteration_span =
          trace::span([&] { return trace::What{"iteration", "iteration " + std::to_string(it), {{"iteration", it}}}; });
      where = "zero_grad of iteration " + std::to_string(it);   // the PyTorch script's optimizer.zero_grad()
      in_call = false;
      sgd.zero_grad();
      if (disc_sgd) disc_sgd->zero_grad();
      forwards.clear();
      std::map<std::string, int> counts;
      run_steps(plan, it, counts, false);
    }
    if (join) {
      where = "join exit";
      in_call = false;
      join->finish();
      rr.warnings.insert(rr.warnings.end(), join->warnings().begin(), join->warnings().end());
    }
  } catch (const std::exception& e) {
    ReproError err;
    err.type = dynamic_cast<const std::invalid_argument*>(&e) ? "ValueError" : "RuntimeError";
    err.message = e.what();
    err.raised_at = in_call ? rr.calls.back().at : where;
    err.rank = pg->rank();
    err.peer_left = dynamic_cast<const dist::PeerLeftError*>(&e) != nullptr;
    // The checks of the plan itself (here and in models::scenario_loss) throw invalid_argument("plan: ...").
    err.plan_mistake = dynamic_cast<const std::invalid_argument*>(&e) && err.message.rfind("plan: ", 0) == 0;
    if (err.plan_mistake && in_call && running) err.plan_pos = running->pos;
    if (in_call) rr.calls.back().error = err.message;
    trace::instant(
        [&] { return trace::What{"error", err.type, {{"message", err.message}, {"raised_at", err.raised_at}}}; });
    rr.error = err;
  }
  for (const auto* d : {&ddp, &disc_ddp})
    if (*d) rr.warnings.insert(rr.warnings.end(), (*d)->warnings().begin(), (*d)->warnings().end());
  for (const Tensor& p : params) rr.param_hashes.push_back(dist::replica_hash(p));
  // After backward(create_graph), a parameter's .grad holds the graph that saved the parameter: the reference
  // cycle PyTorch warns about ("Using backward() with create_graph=True will create a reference cycle between the
  // parameter and its gradient"). The program ends as PyTorch's advice has it, with .grad = None.
  for (const Tensor& p : params) p.set_grad(Tensor());
  return rr;
}

// ---- moving rank results between processes (mpi) ----
nlohmann::json rank_to_json(const RankResult& r) {
  nlohmann::json j;
  j["rank"] = r.rank;
  j["warnings"] = r.warnings;
  j["param_hashes"] = r.param_hashes;
  if (r.error)
    j["error"] = {{"type", r.error->type},           {"message", r.error->message},
                  {"raised_at", r.error->raised_at}, {"peer_left", r.error->peer_left},
                  {"plan_mistake", r.error->plan_mistake}, {"plan_pos", r.error->plan_pos}};
  nlohmann::json calls = nlohmann::json::array();
  for (const CallRecord& c : r.calls)
    calls.push_back({{"iteration", c.iteration}, {"at", c.at}, {"label", c.label}, {"in_no_sync", c.in_no_sync},
                     {"hooks", c.hooks}, {"hooks_ignored", c.hooks_ignored}, {"marked_unused", c.marked_unused},
                     {"launched", c.launched}, {"finalized", c.finalized}, {"rebuilt", c.rebuilt}, {"armed", c.armed},
                     {"require_finalize", c.require_finalize}, {"ready", c.ready}, {"num_params", c.num_params},
                     {"buckets", c.buckets}, {"pending", c.pending}, {"grad_hashes", c.grad_hashes},
                     {"error", c.error}});
  j["calls"] = calls;
  return j;
}

RankResult rank_from_json(const nlohmann::json& j) {
  RankResult r;
  r.rank = j["rank"];
  r.warnings = j["warnings"].get<std::vector<std::string>>();
  r.param_hashes = j["param_hashes"].get<std::vector<uint64_t>>();
  if (j.contains("error"))
    r.error = ReproError{j["error"]["type"],      j["error"]["message"],      j["error"]["raised_at"], r.rank,
                         j["error"]["peer_left"], j["error"]["plan_mistake"], j["error"]["plan_pos"]};
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
    rec.grad_hashes = c["grad_hashes"].get<std::vector<uint64_t>>();
    rec.error = c["error"];
    r.calls.push_back(std::move(rec));
  }
  return r;
}

// Every rank's result on every rank: each serializes its own and the strings are allgathered.
std::vector<RankResult> gather_results(dist::ProcessGroup& pg, const RankResult& mine) {
  std::vector<RankResult> out;
  for (const std::string& s : dist::allgather_strings(pg, rank_to_json(mine).dump()))
    out.push_back(rank_from_json(nlohmann::json::parse(s)));
  return out;
}

// One warning however often it recurs: `w` with "rank R" (R = the rank that gave it) written "rank <r>" and
// "iteration N" written "iteration <i>".
std::string warning_key(const std::string& w, int rank) {
  const std::string own = "rank " + std::to_string(rank), iteration = "iteration ";
  auto digit = [&](size_t at) { return at < w.size() && std::isdigit(static_cast<unsigned char>(w[at])); };
  std::string out;
  for (size_t pos = 0; pos < w.size();) {
    if (w.compare(pos, own.size(), own) == 0 && !digit(pos + own.size())) {
      out += "rank <r>";
      pos += own.size();
    } else if (w.compare(pos, iteration.size(), iteration) == 0 && digit(pos + iteration.size())) {
      out += "iteration <i>";
      for (pos += iteration.size(); digit(pos);) ++pos;
    } else {
      out += w[pos++];
    }
  }
  return out;
}

bool is_drift_warning(const std::string& w) {
  return w.rfind("tinyddp: ", 0) == 0 &&
         (w.find("unsynchronized gradients") != std::string::npos || w.find("not averaged") != std::string::npos);
}

// PyTorch 1.13 ends some runs without an error while the ranks' gradients were never averaged: tinyddp says so,
// from what the run measured (the gradients per iteration, the replicas at the end). The reducer's warnings during
// the run are diagnoses of a hazard; in a run that ends in sync (a term that adds exact zeros, a step after a
// forward whose gradients were averaged already) they are dropped, and a run that drifted without one gets one.
// A run that raised keeps its warnings as they are.
void report_drift(ReproResult& result) {
  if (result.error) return;
  bool drift = !result.replicas_in_sync;
  for (const auto& g : result.grads_in_sync_per_iteration) drift |= g.has_value() && !*g;
  const bool warned = std::any_of(result.warnings.begin(), result.warnings.end(), is_drift_warning);
  if (!drift && warned) {
    std::erase_if(result.warnings, is_drift_warning);
    std::erase_if(result.warning_counts, [](const ReproResult::WarningCount& c) { return is_drift_warning(c.text); });
  } else if (drift && !warned) {
    const std::string w =
        "tinyddp: unsynchronized gradients: the run ends without an error, but the gradients were not averaged "
        "across ranks" +
        (result.replicas_in_sync ? std::string(" (the replicas happen to end in sync)")
                                 : " and the replicas drift apart (" + std::to_string(result.params_out_of_sync.size()) +
                                       " parameter(s) differ at the end)");
    result.warnings.push_back(w);
    result.warning_counts.push_back(ReproResult::WarningCount{w, 1, {}});
  }
}

// Note [Gradients in sync per iteration]
// The summary PyTorch's runs are recorded with (tests/golden/gen_ddp_scenarios.py), so that the two compare
// iteration by iteration. A call is named "backward #k of iteration i" (or grad) on each rank that completed it;
// among an iteration's backward and grad calls that every rank completed, the last one (in the order the ranks
// finished them: the earliest position over the ranks) decides: in sync when every rank's gradients agree
// bitwise after it (a .grad that is None everywhere agrees). No such call: null. An iteration in which no rank
// ran a backward or grad call and no step was completed by every rank is left out of the list, so the entries
// after it move up.
std::vector<std::optional<bool>> grads_in_sync_per_iteration(const std::vector<RankResult>& ranks,
                                                             const ReproOptions& o) {
  int iterations = 0;
  for (const RankResult& r : ranks) iterations = std::max(iterations, iterations_of(o, r.rank));
  // Each rank's completed calls by name, with their position in the rank's order.
  std::vector<std::map<std::string, size_t>> position(ranks.size());
  for (size_t r = 0; r < ranks.size(); ++r)
    for (size_t i = 0; i < ranks[r].calls.size(); ++i)
      if (ranks[r].calls[i].error.empty()) position[r].emplace(ranks[r].calls[i].at, i);
  auto completed_on = [&](const std::string& at) {
    size_t n = 0;
    for (const auto& p : position) n += p.count(at);
    return n;
  };
  auto call_of = [&](size_t r, const std::string& at) -> const CallRecord& {
    return ranks[r].calls[position[r].at(at)];
  };
  std::vector<std::optional<bool>> out;
  for (int it = 1; it <= iterations; ++it) {
    const std::string of = " of iteration " + std::to_string(it);
    bool any_call = false;
    std::optional<std::pair<size_t, std::string>> last;   // (position, name) of the deciding call
    for (const std::string kind : {"backward", "grad"})
      for (int k = 1;; ++k) {
        const std::string at = kind + " #" + std::to_string(k) + of;
        const size_t n = completed_on(at);
        if (n == 0) break;
        any_call = true;
        if (n != ranks.size()) continue;
        size_t first = SIZE_MAX;
        for (const auto& p : position) first = std::min(first, p.at(at));
        if (!last || first > last->first) last = std::make_pair(first, at);
      }
    // The iteration's steps, by name in text order as the generator sorts them: the last one, if every rank
    // completed it, keeps the iteration in the list.
    std::string last_step;
    for (const auto& p : position)
      for (const auto& [at, i] : p)
        if (at.rfind("step #", 0) == 0 && at.size() > of.size() && at.compare(at.size() - of.size(), of.size(), of) == 0)
          last_step = std::max(last_step, at);
    const bool common_step = !last_step.empty() && completed_on(last_step) == ranks.size();
    if (!any_call && !common_step) continue;
    if (!last) {
      out.push_back(std::nullopt);
      continue;
    }
    bool same = true;
    for (size_t r = 1; r < ranks.size(); ++r) same &= call_of(r, last->second).grad_hashes == call_of(0, last->second).grad_hashes;
    out.push_back(same);
  }
  return out;
}

}  // namespace

std::string PlanOptions::summary() const {
  std::vector<std::string> parts;
  if (find_unused_parameters) parts.push_back("find_unused_parameters");
  if (static_graph) parts.push_back("static_graph");
  if (extra_unused_parameter) parts.push_back("extra unused parameter");
  if (buffer) parts.push_back("buffer");
  if (!broadcast_buffers) parts.push_back("broadcast_buffers=False");
  if (!rank_iterations.empty()) {
    std::string counts;
    for (size_t i = 0; i < rank_iterations.size(); ++i) counts += (i ? "," : "") + std::to_string(rank_iterations[i]);
    parts.push_back("iterations " + counts);
  }
  if (gan) parts.push_back("gan");
  if (join) {
    parts.push_back("join");
    if (!join_divide_by_initial_world_size) parts.push_back("divide_by_initial_world_size=False");
    if (join_throw_on_early_termination) parts.push_back("throw_on_early_termination");
  }
  std::string s;
  for (size_t i = 0; i < parts.size(); ++i) s += (i ? ", " : "") + parts[i];
  return s;
}

int iterations_of(const ReproOptions& o, int rank) {
  return o.rank_iterations.empty() ? o.iterations : o.rank_iterations.at(static_cast<size_t>(rank));
}

ReproResult run_repro(const std::string& scenario, const std::string& plan_string, const ReproOptions& o) {
  const std::vector<PlanStep> plan = parse_plan(plan_string);
  TINYDDP_CHECK(o.iterations >= 1, "repro: --iterations must be at least 1, got ", o.iterations, ".");
  for (int n : o.rank_iterations)
    TINYDDP_CHECK(n >= 1, "repro: every rank's iteration count must be at least 1, got ", n, ".");
  TINYDDP_CHECK(o.bucket_cap_mb >= 0, "repro: --bucket-cap-mb must be 0 or more, got ", o.bucket_cap_mb, ".");
  ReproResult result;
  result.scenario = scenario;
  result.plan = plan_text(plan);
  result.options = o;
  result.param_names = [&] {
    std::vector<std::string> names;
    for (const auto& [name, p] : models::ScenarioModel(o.extra_unused_parameter).named_parameters()) names.push_back(name);
    if (o.gan)
      for (const auto& [name, p] : make_discriminator()->named_parameters()) names.push_back("disc." + name);
    return names;
  }();

  if (o.backend == "thread") {
    TINYDDP_CHECK(o.ranks >= 1 && o.ranks <= 64, "repro: --ranks must be between 1 and 64 for the thread backend, got ",
                  o.ranks, ".");
    TINYDDP_CHECK(o.rank_iterations.empty() || static_cast<int>(o.rank_iterations.size()) == o.ranks,
                  "repro: --iterations gives ", o.rank_iterations.size(), " per-rank counts for ", o.ranks,
                  " ranks; give one count per rank (--iterations 3,2 for 2 ranks) or a single count.");
    result.ranks.resize(o.ranks);
    auto world = std::make_shared<dist::ThreadWorld>(o.ranks, std::chrono::milliseconds(o.timeout_ms));
    std::vector<std::thread> threads;
    for (int r = 0; r < o.ranks; ++r)
      threads.emplace_back([&, r] {
        result.ranks[r] = run_rank(world->group(r), plan, o);
        // Its program has ended: a peer still waiting for it in a collective is released with an error naming
        // it, as a process's exit releases its gloo peers.
        const RankResult& mine = result.ranks[r];
        world->leave(r, mine.error ? "it raised " + mine.error->type + " at " + mine.error->raised_at
                                   : "it finished its " + std::to_string(iterations_of(o, r)) + " iterations");
      });
    for (auto& t : threads) t.join();
  } else if (o.backend == "mpi") {
    TINYDDP_CHECK(dist::mpi_available(), "repro: this tinyddp was built without Open MPI; install libopenmpi-dev and "
                                         "openmpi-bin, rebuild, and launch with mpirun -np 2.");
    auto pg = dist::mpi_world();
    pg->set_timeout(std::chrono::milliseconds(o.timeout_ms));
    result.options.ranks = pg->size();
    TINYDDP_CHECK(o.rank_iterations.empty() || static_cast<int>(o.rank_iterations.size()) == pg->size(),
                  "repro: --iterations gives ", o.rank_iterations.size(), " per-rank counts for ", pg->size(),
                  " ranks; give one count per rank or a single count.");
    RankResult mine = run_rank(pg, plan, o);
    trace::RankScope trace_rank(pg->rank());
    auto gather_span = trace::span([] { return trace::What{"call", "gather the ranks' reports (repro)", {}}; });
    trace::CommLabel gather_label([] { return trace::What{"call", "(repro reports)", {}}; });
    result.ranks = gather_results(*pg, mine);
  } else {
    throw Error("repro: unknown backend '" + o.backend + "'; expected thread or mpi.");
  }

  // A mistake in the plan is the command line's, whatever the ranks did after it.
  for (const RankResult& r : result.ranks)
    if (r.error && r.error->plan_mistake)
      throw PlanError(plan_error_text(r.error->message.substr(6) + " (" + r.error->raised_at + " on rank " +
                                          std::to_string(r.rank) + ")",
                                      plan_string, r.error->plan_pos));
  // The outcome as PyTorch reports it: the first rank that raised, a rank released by a peer's exit last.
  for (bool peer_left : {false, true})
    for (const RankResult& r : result.ranks)
      if (r.error && r.error->peer_left == peer_left && !result.error) result.error = r.error;
  result.outcome = result.error ? "error" : "ok";
  // Every rank's warnings counted the same way, rank 0's first, each in the order of first appearance. A
  // warning that names its rank or iteration is one warning, given on several ranks or iterations.
  for (const RankResult& r : result.ranks)
    for (const std::string& w : r.warnings) {
      if (std::find(result.warnings.begin(), result.warnings.end(), w) == result.warnings.end())
        result.warnings.push_back(w);
      const std::string text = warning_key(w, r.rank);
      auto it = std::find_if(result.warning_counts.begin(), result.warning_counts.end(),
                             [&](const ReproResult::WarningCount& c) { return c.text == text; });
      if (it == result.warning_counts.end()) it = result.warning_counts.insert(result.warning_counts.end(), ReproResult::WarningCount{text, 0, {}});
      ++it->count;
      if (it->ranks.empty() || it->ranks.back() != r.rank) it->ranks.push_back(r.rank);
    }
  for (size_t p = 0; p < result.param_names.size(); ++p) {
    bool same = true;
    for (const RankResult& r : result.ranks) same &= r.param_hashes[p] == result.ranks[0].param_hashes[p];
    if (!same) result.params_out_of_sync.push_back(result.param_names[p]);
  }
  result.replicas_in_sync = result.params_out_of_sync.empty();
  result.grads_in_sync_per_iteration = grads_in_sync_per_iteration(result.ranks, o);
  report_drift(result);
  return result;
}

std::string outcome_summary(const ReproResult& r) {
  auto one = [](const RankResult& rank) {
    return rank.error ? rank.error->type + " at " + rank.error->raised_at : std::string("ok");
  };
  bool same = true;
  for (const RankResult& rank : r.ranks) same &= one(rank) == one(r.ranks.front());
  if (!same) {
    std::string s;
    for (const RankResult& rank : r.ranks) s += (s.empty() ? "" : "; ") + ("rank " + std::to_string(rank.rank) + ": " + one(rank));
    return s;
  }
  if (r.error) return one(r.ranks.front());
  return r.replicas_in_sync ? "ok, replicas in sync" : "ok, replicas drift apart";
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
                  {"iterations", r.options.rank_iterations.empty() ? nlohmann::json(r.options.iterations)
                                                                   : nlohmann::json(r.options.rank_iterations)},
                  {"bucket_cap_mb", r.options.bucket_cap_mb},
                  {"buffer", r.options.buffer},
                  {"broadcast_buffers", r.options.broadcast_buffers},
                  {"join", r.options.join},
                  {"join_divide_by_initial_world_size", r.options.join_divide_by_initial_world_size},
                  {"join_throw_on_early_termination", r.options.join_throw_on_early_termination},
                  {"gan", r.options.gan}};
  j["outcome"] = r.outcome;
  j["error"] = r.error ? nlohmann::json{{"type", r.error->type}, {"message", r.error->message},
                                        {"raised_at", r.error->raised_at}, {"rank", r.error->rank}}
                       : nlohmann::json(nullptr);
  // Each rank's own outcome: ranks may end differently (one raises, the other is released from a collective).
  nlohmann::json outcomes = nlohmann::json::array();
  for (const RankResult& rank : r.ranks) {
    nlohmann::json e = {{"rank", rank.rank}, {"outcome", rank.error ? "error" : "ok"}};
    e["type"] = rank.error ? nlohmann::json(rank.error->type) : nlohmann::json(nullptr);
    e["message"] = rank.error ? nlohmann::json(rank.error->message) : nlohmann::json(nullptr);
    e["raised_at"] = rank.error ? nlohmann::json(rank.error->raised_at) : nlohmann::json(nullptr);
    e["peer_left"] = rank.error && rank.error->peer_left;   // released because a peer's program ended
    outcomes.push_back(e);
  }
  j["rank_outcomes"] = outcomes;
  j["warnings"] = r.warnings;
  nlohmann::json counts = nlohmann::json::array();
  for (const auto& c : r.warning_counts) counts.push_back({{"message", c.text}, {"count", c.count}, {"ranks", c.ranks}});
  j["warning_counts"] = counts;
  j["replicas_in_sync"] = r.replicas_in_sync;
  j["params_out_of_sync"] = r.params_out_of_sync;
  nlohmann::json per_iteration = nlohmann::json::array();
  for (const auto& g : r.grads_in_sync_per_iteration) per_iteration.push_back(g ? nlohmann::json(*g) : nlohmann::json(nullptr));
  j["grads_in_sync_per_iteration"] = per_iteration;
  j["param_names"] = r.param_names;
  nlohmann::json ranks = nlohmann::json::array();
  for (const RankResult& rank : r.ranks) ranks.push_back(rank_to_json(rank)["calls"]);
  j["timeline"] = ranks;
  return j;
}

}  // namespace tinyddp::app
