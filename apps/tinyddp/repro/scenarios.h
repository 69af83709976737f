// The named scenarios of `tinyddp repro`: the patterns users hit when training multi-task models with
// DDP, each with what PyTorch 1.13 does, why, and the fix that works. Outcomes are checked against real
// PyTorch 1.13.1 in tests/apps (golden data: tests/golden/ddp_scenarios.json and ddp_patterns.json).
#pragma once

#include <string>
#include <vector>

#include "apps/tinyddp/repro/repro.h"

namespace tinyddp::app {

struct Scenario {
  std::string name;
  std::string plan;
  PlanOptions options;
  std::string story;   // what the user wrote
  std::string why;     // what happens inside DDP
  std::string fix;     // what works, with the command that shows it (empty when the pattern is right)
  std::string outcome;   // PyTorch 1.13's outcome in a few words, for --list (tests check it against the goldens)
};

const std::vector<Scenario>& scenarios();
const Scenario* find_scenario(const std::string& name);   // null when unknown

}  // namespace tinyddp::app
