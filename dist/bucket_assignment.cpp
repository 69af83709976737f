#include "dist/bucket_assignment.h"

#include <algorithm>

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

}  // namespace tinyddp::dist
