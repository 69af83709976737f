// The mean over ranks of a list of tensors, as the callback that models/weighting's WeightingOptions and
// GradReportOptions take for `allreduce_mean` (dist sits beside models, so the callback is the seam), and
// every rank's rows stacked, for WeightingOptions::allgather_rows:
//
//   wo.allreduce_mean = allreduce_mean_over(pg);   // GradNorm's G_i from the global gradient, not a local one
//   wo.allgather_rows = allgather_rows_over(pg);   // the same with grad_norm = gram
//
// Tensors without history are overwritten in place. A tensor with history (a create_graph gradient, as the
// squared GradNorm variant may pass) cannot be changed in place without breaking its graph; it is replaced by
// t + (mean - t).detach(): the global mean's value, with t's local derivative.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "dist/process_group.h"
#include "engine/core/tensor.h"

namespace tinyddp::dist {

// Each call allreduces (sum) copies of the tensors on `pg`, then divides by the world size: a collective,
// so every rank calls it with tensors of the same shapes in the same order.
std::function<void(std::vector<Tensor>&)> allreduce_mean_over(std::shared_ptr<ProcessGroup> pg);

// Each call returns cat(every rank's tensor, dim 0) in rank order, without history: a collective, so every
// rank calls it at the same point. The shapes are compared first (a tiny allgather), so a rank whose shape
// differs makes every rank throw the same error instead of a collective on mismatched buffers.
std::function<Tensor(const Tensor&)> allgather_rows_over(std::shared_ptr<ProcessGroup> pg);

}  // namespace tinyddp::dist
