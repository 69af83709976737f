// Whether DDP replicas still hold the same values: hashes of their tensors (engine/hash.h), compared
// across the ranks of a process group. Equal hashes mean, with overwhelming odds, bitwise-equal values.
//
//   uint64_t h = replica_hash(model.parameters());
//   bool in_sync = same_on_all_ranks(*pg, h);          // a collective: every rank calls it
#pragma once

#include <cstdint>
#include <vector>

#include "dist/process_group.h"
#include "engine/core/tensor.h"

namespace tinyddp::dist {

// One tensor: 0 when it is undefined (a gradient that was never written), never 0 otherwise.
uint64_t replica_hash(const Tensor& t);

// Every tensor's values, in order, folded into one hash.
uint64_t replica_hash(const std::vector<Tensor>& tensors);

// Whether every rank passed the same `h` (one allgather on `pg`).
bool same_on_all_ranks(ProcessGroup& pg, uint64_t h);

}  // namespace tinyddp::dist
