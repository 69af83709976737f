#include "dist/join.h"

#include <exception>
#include <iostream>
#include <mutex>

namespace tinyddp::dist {

namespace {

// 1.13's WARN_THRESHOLD: iterations a joined rank may shadow before it warns about the skew.
constexpr int kUnevenSkewWarnIterations = 1000;

}  // namespace

Join::Join(std::vector<Joinable*> joinables, JoinOptions options)
    : joinables_(std::move(joinables)), options_(options), uncaught_at_construction_(std::uncaught_exceptions()) {
  TINYDDP_CHECK(!joinables_.empty(), "The join context manager requires at least one joinable");
  for (Joinable* j : joinables_) {
    TINYDDP_CHECK(j != nullptr, "Join: joinable is null.");
    hooks_.push_back(j->join_hook(options_));
  }
  bool first = true;
  for (Joinable* j : joinables_) {
    j->join_config_ = {options_.enable, options_.throw_on_early_termination, first};
    first = false;
  }
  pg_ = joinables_[0]->join_process_group();
  device_ = joinables_[0]->join_device();
  for (Joinable* j : joinables_)
    TINYDDP_CHECK(j->join_process_group() == pg_, "Using join context manager with multiple process groups");
  TINYDDP_CHECK(pg_ != nullptr, "Join: the first joinable has no process group.");
}

Join::~Join() {
  // Python's __exit__ with an exception does nothing; a Join left without an exception and without finish()
  // is a bug in the caller that leaves the other ranks waiting in their next collective: say so.
  if (finished_ || !options_.enable || std::uncaught_exceptions() > uncaught_at_construction_) return;
  std::cerr << "[W join rank " + std::to_string(pg_->rank()) + "] tinyddp: a Join was destroyed without finish(): "
               "this rank shadows none of the other ranks' collectives, so a rank with more inputs waits for it. "
               "Call join.finish() after this rank's last iteration, inside the scope of the Join.\n";
}

float Join::count_nonjoined_ranks() {
  Tensor count = zeros({1}, DType::f32, device_);
  pg_->allreduce({count})->wait();
  return count.item<float>();
}

void Join::notify_ranks_to_terminate() {
  Tensor ones_t = ones({1}, DType::f32, device_);
  pg_->allreduce({ones_t})->wait();
  throw Error("Rank " + std::to_string(pg_->rank()) + " exhausted all inputs.");
}

void Join::finish() {
  TINYDDP_CHECK(!finished_, "Join::finish() was already called; call it once, after this rank's last iteration.");
  finished_ = true;
  if (!options_.enable) return;
  bool is_last_joiner = true;
  for (int i = 0;; ++i) {
    if (i > kUnevenSkewWarnIterations && warnings_.empty()) {   // Python's warnings filter "once"
      const std::string n = std::to_string(kUnevenSkewWarnIterations);
      warnings_.push_back("Detected uneven input skew of greater than " + n + ". This means that rank " +
                          std::to_string(pg_->rank()) + " has at least " + n + " fewer inputs than other "
                          "currently-active ranks. This level of skew could lead to performance degradation during "
                          "training.");
      static std::mutex print_mu;   // one write per warning: thread ranks don't interleave their lines
      std::lock_guard<std::mutex> lock(print_mu);
      std::cerr << "[W join rank " + std::to_string(pg_->rank()) + "] " + warnings_.back() + "\n";
    }
    if (count_nonjoined_ranks() == 0) break;
    if (options_.throw_on_early_termination) notify_ranks_to_terminate();
    for (auto& hook : hooks_) hook->main_hook();
    is_last_joiner = false;
  }
  for (auto& hook : hooks_) hook->post_hook(is_last_joiner);
}

std::optional<JoinNotice> Join::notify_join_context(Joinable& joinable) {
  const JoinConfig& config = joinable.join_config();
  if (!config.is_first_joinable || !config.enable) return std::nullopt;
  const Device device = joinable.join_device();
  const std::shared_ptr<ProcessGroup> pg = joinable.join_process_group();
  JoinNotice notice{nullptr, ones({1}, DType::f32, device)};
  notice.work = pg->allreduce({notice.count});
  if (config.throw_on_early_termination) {
    // A joined rank adds 1 here (notify_ranks_to_terminate) instead of shadowing this iteration.
    Tensor should_throw = zeros({1}, DType::f32, device);
    pg->allreduce({should_throw})->wait();
    if (should_throw.item<float>() != 0)
      throw Error("Detected at least one rank that exhausted inputs. Throwing across all ranks.");
  }
  return notice;
}

}  // namespace tinyddp::dist
