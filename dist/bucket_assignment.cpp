#include "dist/bucket_assignment.h"

#include <algorithm>

#include "engine/ops/ops.h"

namespace tinyddp::dist {

BucketAssignment compute_bucket_assignment_by_size(const std::vector<Tensor>& tensors,
                                                   const std::vector<size_t>& bucket_size_limits,
                                                   const std::vector<size_t>& tensor_indices) {
  TINYDDP_CHECK(!tensors.empty(), "compute_bucket_assignment_by_size: no tensors to assign.");
  TINYDDP_CHECK(!bucket_size_limits.empty(), "compute_bucket_assignment_by_size: no bucket size limits given.");
  TINYDDP_CHECK(tensor_indices.empty() || tensor_indices.size() == tensors.size(),
                "compute_bucket_assignment_by_size: ", tensor_indices.size(), " indices for ", tensors.size(),
                " tensors.");
  // One open bucket and one position in the limits per (dtype, device), kept in first-seen order.
  struct Open {
    DType dtype;
    Device device;
    std::vector<size_t> indices;
    size_t bytes = 0;
    size_t limit_pos = 0;
  };
  std::vector<Open> open;
  BucketAssignment out;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    const size_t index = tensor_indices.empty() ? i : tensor_indices[i];
    auto it = std::find_if(open.begin(), open.end(),
                           [&](const Open& o) { return o.dtype == t.dtype() && o.device == t.device(); });
    if (it == open.end()) it = open.insert(open.end(), Open{t.dtype(), t.device()});
    it->indices.push_back(index);
    it->bytes += static_cast<size_t>(t.numel()) * element_size(t.dtype());
    const size_t limit = bucket_size_limits[it->limit_pos];
    if (it->bytes >= limit) {
      out.buckets.push_back(std::move(it->indices));
      out.size_limits.push_back(limit);
      it->indices.clear();
      it->bytes = 0;
      if (it->limit_pos + 1 < bucket_size_limits.size()) ++it->limit_pos;
    }
  }
  for (Open& o : open) {
    if (o.indices.empty()) continue;
    out.buckets.push_back(std::move(o.indices));
    out.size_limits.push_back(bucket_size_limits[o.limit_pos]);
  }
  if (tensor_indices.empty()) {
    // Order buckets by the smallest parameter index they hold (stable, so the limits follow).
    std::vector<size_t> order(out.buckets.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return *std::min_element(out.buckets[a].begin(), out.buckets[a].end()) <
             *std::min_element(out.buckets[b].begin(), out.buckets[b].end());
    });
    BucketAssignment sorted;
    for (size_t i : order) {
      sorted.buckets.push_back(out.buckets[i]);
      sorted.size_limits.push_back(out.size_limits[i]);
    }
    return sorted;
  }
  return out;
}

std::vector<std::vector<size_t>> sync_bucket_indices(ProcessGroup& pg, const std::vector<std::vector<size_t>>& buckets,
                                                     Device device) {
  // Broadcast 1: every index, bucket after bucket, then the number of buckets. Broadcast 2: each bucket's size.
  std::vector<int64_t> flat;
  for (const auto& b : buckets)
    for (size_t i : b) flat.push_back(static_cast<int64_t>(i));
  flat.push_back(static_cast<int64_t>(buckets.size()));
  Tensor indices = from_vector(flat, {static_cast<int64_t>(flat.size())}).to(device);
  pg.broadcast({indices}, 0)->wait();
  const auto got = indices.to_vector<int64_t>();
  const size_t num_buckets = static_cast<size_t>(got.back());
  std::vector<int64_t> sizes;
  for (size_t b = 0; b < num_buckets; ++b)   // off rank 0 overwritten; the min only keeps the index in range
    sizes.push_back(static_cast<int64_t>(buckets[std::min(b, buckets.size() - 1)].size()));
  Tensor sizes_t = from_vector(sizes, {static_cast<int64_t>(num_buckets)}).to(device);
  pg.broadcast({sizes_t}, 0)->wait();
  const auto got_sizes = sizes_t.to_vector<int64_t>();
  std::vector<std::vector<size_t>> synced;
  size_t pos = 0;
  for (size_t b = 0; b < num_buckets; ++b) {
    std::vector<size_t> bucket;
    for (int64_t k = 0; k < got_sizes[b]; ++k) bucket.push_back(static_cast<size_t>(got[pos++]));
    synced.push_back(std::move(bucket));
  }
  return synced;
}

}  // namespace tinyddp::dist
