// The plan language of `tinyddp repro`: one training iteration as a list of steps.
//
//   forward; backward(a, retain); backward(b+t); step
//   no_sync{ forward; backward(a+b+t) }; forward; backward(a+b+t); step
//
//   forward | forward(no_text) | forward(drop_text) | forward(detach)     a DDP forward; draws a micro-batch
//   backward(EXPR) | backward(EXPR, retain)                                EXPR: terms a, b, t, dummy joined by
//                                                                          '+', each optionally scaled: 0.5*b
//   no_sync{ STEPS }                                                       the steps run inside ddp.no_sync()
//   step                                                                   an SGD step
#pragma once

#include <string>
#include <vector>

#include "models/scenario/scenario_model.h"

namespace tinyddp::app {

struct LossTerm {
  double scale = 1.0;
  std::string name;   // "a", "b", "t" or "dummy"
};

struct PlanStep {
  enum class Kind { forward, backward, no_sync, step } kind;
  models::TextMode mode = models::TextMode::normal;   // forward
  std::vector<LossTerm> terms;                         // backward
  bool retain = false;                                 // backward
  std::vector<PlanStep> body;                          // no_sync
  std::string text() const;                            // as written, normalized ("backward(a, retain)")
};

// Parses a plan; throws an Error naming the position and what was expected.
std::vector<PlanStep> parse_plan(const std::string& plan);
std::string plan_text(const std::vector<PlanStep>& steps);

}  // namespace tinyddp::app
