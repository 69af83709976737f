// `tinyddp demo`: the classic multi-task DDP error, reproduced, explained and fixed.
#include <ostream>

#include "apps/tinyddp/commands.h"
#include "apps/tinyddp/repro/repro.h"
#include "apps/tinyddp/repro/scenarios.h"

namespace tinyddp::app {

int run_demo(std::ostream& out) {
  out << "tinyddp demo: two task losses, two backward() calls, DDP on 2 ranks (threads)\n"
      << "==========================================================================\n\n";
  ReproOptions options;
  const Scenario& broken = *find_scenario("two-backward");
  const ReproResult failing = run_repro(broken.name, broken.plan, options);
  print_report(out, failing);
  out << "\n==========================================================================\n"
      << "The popular fix, find_unused_parameters=True: no error, but watch replicas_in_sync\n\n";
  const Scenario& popular = *find_scenario("find-unused");
  ReproOptions fu = options;
  fu.find_unused_parameters = true;
  print_report(out, run_repro(popular.name, popular.plan, fu));
  out << "\n==========================================================================\n"
      << "The fix that works: one backward of the summed losses\n\n";
  const Scenario& fixed = *find_scenario("combined-loss");
  const ReproResult ok = run_repro(fixed.name, fixed.plan, options);
  print_report(out, ok);
  out << "\nMore: tinyddp repro --list; docs/the-runtime-error.md; tinyddp autograd (the engine underneath)\n";
  // The demo is also a check: the broken pattern must fail and the fix must keep replicas in sync.
  return failing.outcome == "error" && ok.outcome == "ok" && ok.replicas_in_sync ? 0 : 1;
}

}  // namespace tinyddp::app
