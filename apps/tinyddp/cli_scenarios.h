// `tinyddp repro --list --json`: the named scenarios as one JSON object, for scripts.
//   {"scenarios": [{"name": "two-backward", "plan": "...", "options": "", "outcome": "...", "story": "..."}, ...]}
#pragma once

#include <nlohmann/json.hpp>

namespace tinyddp::app {

// Every named scenario, in --list's order; "options": PlanOptions::summary() (empty: the defaults).
nlohmann::json scenarios_to_json();

}  // namespace tinyddp::app
