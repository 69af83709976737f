// Why a repro run ended as it did, derived from what happened (the per-call timeline), for any plan:
// which parameters were marked ready twice or never, in which call, which gradients were never averaged,
// and which DDP option changes the outcome (found by running the plan again with it). A named scenario's
// written explanation is used only where it holds: the same plan and options, and the outcome it describes.
#pragma once

#include <string>
#include <vector>

#include "apps/tinyddp/repro/repro.h"

namespace tinyddp::app {

struct Explanation {
  // The named scenario whose written why/fix apply (same plan, same options, the outcome it describes);
  // empty when the why below is derived.
  std::string scenario;
  std::string why;
  std::string fix;                    // empty when the run is ok with the replicas in sync
  // A custom plan that is a named scenario: "this plan and options are the named scenario 'X'" (or its plan
  // with other options); a named scenario whose outcome changed: what changed it.
  std::string note;
  // What each alternative gave (re-run on the thread backend): "--find-unused-parameters: ok, replicas in sync".
  std::vector<std::string> alternatives;
};

// `try_alternatives`: run the plan again with each DDP option toggled (thread backend only; a few ms each).
Explanation explain(const ReproResult& result, bool try_alternatives = true);

// The derived why alone (no re-runs): its first sentence states the outcome.
std::string derived_why(const ReproResult& result);

}  // namespace tinyddp::app
