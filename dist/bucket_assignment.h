// How DDP groups gradients into buckets (PyTorch 1.13's compute_bucket_assignment_by_size).
//
// Walk the tensors in the given order; add each to the open bucket of its (dtype, device); when that
// bucket's size reaches the current limit, close it and move to the next limit (the last limit repeats).
// With limits {1 MiB, 25 MiB} the first bucket is small, so the first allreduce starts early.
//   - At construction DDP passes the parameters in order and sorts the resulting buckets by their
//     smallest index; it then reverses the bucket list, since gradients arrive roughly in reverse order.
//   - At the rebuild after the first iteration it passes the parameters in the order their gradients
//     became ready (tensor_indices) and keeps that order.
#pragma once

#include <cstddef>
#include <vector>

#include "dist/process_group.h"
#include "engine/core/tensor.h"

namespace tinyddp::dist {

// PyTorch's values: a 1 MiB first bucket ("experiments showed 1MB is a reasonable value") and a 25 MiB cap.
constexpr size_t kDefaultFirstBucketBytes = 1024 * 1024;
constexpr size_t kDefaultBucketBytesCap = 25 * 1024 * 1024;
// "No limit": what 1.13 passes for the first iteration when find_unused_parameters is off (one bucket).
constexpr size_t kNoBucketSizeLimit = static_cast<size_t>(-1) >> 1;   // sys.maxsize

struct BucketAssignment {
  std::vector<std::vector<size_t>> buckets;   // parameter indices per bucket
  std::vector<size_t> size_limits;            // the limit each bucket was cut at
};

// tensor_indices (optional) gives the parameter index of each tensor; when given, the tensors are taken to
// be in gradient-ready order and the buckets are not sorted.
BucketAssignment compute_bucket_assignment_by_size(const std::vector<Tensor>& tensors,
                                                   const std::vector<size_t>& bucket_size_limits,
                                                   const std::vector<size_t>& tensor_indices = {});

// Rank 0's buckets, on every rank (PyTorch's sync_bucket_indices): the rebuild's gradient order can differ across
// ranks, and every rank must build the same buckets. `device`: where pg's collectives run (the parameters').
std::vector<std::vector<size_t>> sync_bucket_indices(ProcessGroup& pg, const std::vector<std::vector<size_t>>& buckets,
                                                     Device device);

}  // namespace tinyddp::dist
