// Collectives composed from a backend's allreduce, broadcast and allgather, so that every backend (thread, mpi,
// nccl) has them with that backend's deadlines, mismatch errors and determinism:
//
//   reduce(pg, t, dst, op)                 t on rank dst = op over every rank's t (Note [What reduce leaves elsewhere])
//   gather(pg, input, outputs, dst)        on dst, outputs[r] = rank r's input; the other ranks pass no outputs
//   scatter(pg, output, inputs, src)       output = rank src's inputs[this rank]; the other ranks pass no inputs
//   reduce_scatter(pg, output, inputs, op) output = op over ranks of their inputs[this rank]
//   alltoall(pg, outputs, inputs)          outputs[r] = rank r's inputs[this rank]
//
// Each starts one collective of the backend on a staging buffer and returns at once; wait() (or a poll that
// finds it done) copies this rank's part out of the staging buffer. Every rank must call the same one with the
// same sizes; a rank that does not is caught by the underlying collective (its mismatch error or timeout), except
// that two of these built on the same collective with equal sizes (gather and reduce: an allgather) look alike.
// Cost: gather, reduce and alltoall move every rank's input to every rank (an allgather), n times the bytes a
// dedicated tree or pairwise algorithm moves; they serve correctness and the Python API, not the reducer.
#pragma once

#include <memory>
#include <vector>

#include "dist/process_group.h"

namespace tinyddp::dist {

std::shared_ptr<Work> reduce(ProcessGroup& pg, Tensor tensor, int dst, ReduceOp op = ReduceOp::sum);
std::shared_ptr<Work> gather(ProcessGroup& pg, Tensor input, std::vector<Tensor> outputs, int dst);
std::shared_ptr<Work> scatter(ProcessGroup& pg, Tensor output, std::vector<Tensor> inputs, int src);
std::shared_ptr<Work> reduce_scatter(ProcessGroup& pg, Tensor output, std::vector<Tensor> inputs,
                                     ReduceOp op = ReduceOp::sum);
std::shared_ptr<Work> alltoall(ProcessGroup& pg, std::vector<Tensor> outputs, std::vector<Tensor> inputs);

}  // namespace tinyddp::dist
