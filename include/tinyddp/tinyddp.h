// tinyddp, installed: one include for a program built against the package (cmake --install, then
// find_package(tinyddp) and target_link_libraries(app PRIVATE tinyddp::tinyddp)).
//
//   #include <tinyddp/tinyddp.h>
//   tinyddp::Tensor w = tinyddp::ones({3}).requires_grad_();
//   tinyddp::sum(w * w).backward();                                  // w.grad() == 2 * w
//   tinyddp::dist::ThreadWorld::run(2, [](tinyddp::dist::ProcessGroup& pg) { ... });   // 2 ranks, DDP
//
// The layers keep their own paths below include/tinyddp/ (engine/..., dist/..., models/...), the same paths
// the sources use, so any single header can be included on its own too.
#pragma once

#include "base/version.h"                // TINYDDP_VERSION
#include "dist/ddp.h"                     // dist::DistributedDataParallel, the Reducer
#include "dist/process_group.h"           // dist::ProcessGroup
#include "dist/thread_process_group.h"    // dist::ThreadWorld: N ranks as threads
#include "engine/tinyddp.h"               // Tensor, ops, autograd (the engine API)
#include "models/nn/nn.h"                 // nn::Module, Linear, Sequential, losses
#include "models/optim/adam.h"            // optim::Adam
#include "models/optim/sgd.h"             // optim::SGD
