// The plan language of `tinyddp repro`: one training iteration as a list of steps, run by every rank.
//
//   forward; backward(a, retain); backward(b+t); step
//   no_sync{ forward; backward(a+b+t) }; forward; backward(a+b+t); step
//   rank(0){ forward; backward(a+b+t) }; rank(1){ forward(no_text); backward(a+b) }; step
//   iter(2+){ freeze(head_b) }; forward(ckpt); backward(a+b+t); step
//
//   forward | forward(FLAG, ...)       a DDP forward on a fresh micro-batch. FLAGs, in any order:
//                                      no_text | drop_text | detach   (the text decoder's mode, at most one)
//                                      ckpt | ckpt_nr   trunk.2 under checkpoint (reentrant | non-reentrant)
//                                      reuse            trunk.2 applied twice (shared weights)
//                                      features         also return the trunk features h
//   backward(EXPR[, retain][, create_graph])   retain: retain_graph=True; create_graph: create_graph=True
//                                      (retain_graph then defaults to True, as in PyTorch)
//   grad(EXPR[, retain][, create_graph])   autograd::grad over every parameter that requires grad, then
//                                      .grad = the result by hand (gradient penalties, MAML)
//   step                               an SGD step
//   no_sync{ STEPS }                   the steps run inside ddp.no_sync()
//   freeze(M) | unfreeze(M)            M.requires_grad_(false | true); M: trunk, trunk.0, trunk.2, head_a,
//                                      head_b, text_decoder
//   rank(R){ STEPS }                   only rank R runs the steps
//   iter(N){ STEPS } | iter(N+){ STEPS }   only in iteration N (from 1) | in N and every later one
//   disc(real) | disc(fake) | disc(fake_detached)   with --gan: the discriminator's own DDP forward on the
//                                      latest batch's yt | the latest forward's t | t.detach()
//   disc_step                          the discriminator's SGD step; freeze(disc) / unfreeze(disc) freeze it
//
//   EXPR: terms joined by '+', each [SCALE*]NAME[@K]: NAME is a, b, t, dummy or t_outside (the text decoder
//   applied outside DDP's forward to the features of a forward(features)); @K binds the term to forward #K
//   of this iteration (default: the latest forward). With --gan also d_real, d_fake (the discriminator's
//   MSE to 1 on the latest disc(real), to 0 on the latest disc(fake...)) and g_adv (to 1 on disc(fake...)).
#pragma once

#include <string>
#include <vector>

#include "apps/tinyddp/cli_errors.h"
#include "models/scenario/scenario_model.h"

namespace tinyddp::app {

struct LossTerm {
  double scale = 1.0;
  std::string name;   // "a", "b", "t", "t_outside", "dummy", or the discriminator's "d_real", "d_fake", "g_adv"
  int forward = 0;    // 1-based forward of this iteration whose outputs it reads; 0: the latest
};

struct PlanStep {
  enum class Kind { forward, backward, grad, step, no_sync, freeze, unfreeze, rank, iteration, disc, disc_step } kind;
  models::ScenarioForward forward;   // forward
  std::vector<LossTerm> terms;       // backward, grad
  bool retain = false;               // backward, grad: retain_graph=True (else PyTorch's default)
  bool create_graph = false;         // backward, grad
  std::string module;                // freeze, unfreeze
  std::string disc_input;            // disc: "real", "fake" or "fake_detached"
  int rank = 0;                      // rank
  int iteration = 0;                 // iteration: from 1
  bool and_later = false;            // iteration: iter(N+)
  std::vector<PlanStep> body;        // no_sync, rank, iteration
  size_t pos = 0;                    // where the step starts in the plan as written (for a caret under it)
  std::string text() const;          // as written, normalized ("backward(a, retain)")
  // The call kind counted in "<kind> #n of iteration i" ("forward", "backward", "grad", "step", "freeze",
  // "unfreeze", "disc", "disc_step"); empty for blocks.
  std::string call_kind() const;
};

// Parses a plan; throws a PlanError naming the position, what was expected and, for a misspelt word, the
// word meant ("did you mean 'backward'?"), with the plan and a caret under the position.
std::vector<PlanStep> parse_plan(const std::string& plan);
// A mistake in the plan itself (a usage error of `tinyddp repro`, exit code 2), not an error of the program
// it reproduces.
class PlanError : public UsageError {
 public:
  using UsageError::UsageError;
};
// "plan: MESSAGE", the plan, a caret line under [pos, pos + width), and the pointer to the plan language.
std::string plan_error_text(const std::string& message, const std::string& plan, size_t pos, size_t width = 1);
// The candidate closest to `word` by edit distance when it is close enough to be a typo; else empty.
std::string closest_word(const std::string& word, const std::vector<std::string>& candidates);
std::string plan_text(const std::vector<PlanStep>& steps);

// The modules freeze(...) accepts, in the order --help lists them.
const std::vector<std::string>& freezable_modules();

}  // namespace tinyddp::app
