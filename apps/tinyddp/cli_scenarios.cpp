#include "apps/tinyddp/cli_scenarios.h"

#include "apps/tinyddp/repro/scenarios.h"

namespace tinyddp::app {

nlohmann::json scenarios_to_json() {
  nlohmann::json list = nlohmann::json::array();
  for (const Scenario& s : scenarios())
    list.push_back({{"name", s.name}, {"plan", s.plan}, {"options", s.options.summary()}, {"outcome", s.outcome},
                    {"story", s.story}});
  return {{"scenarios", list}};
}

}  // namespace tinyddp::app
