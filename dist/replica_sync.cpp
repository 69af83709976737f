#include "dist/replica_sync.h"

#include <cstring>

#include "engine/hash.h"

namespace tinyddp::dist {

uint64_t replica_hash(const Tensor& t) {
  if (!t.defined()) return 0;
  return fnv1a_values(t) | 1;   // odd, so never the 0 of "undefined"
}

uint64_t replica_hash(const std::vector<Tensor>& tensors) {
  uint64_t h = kFnv1aBasis;
  for (const Tensor& t : tensors) h = fnv1a_values(t, h);
  return h;
}

bool same_on_all_ranks(ProcessGroup& pg, uint64_t h) {
  std::vector<Tensor> all;
  for (int r = 0; r < pg.size(); ++r) all.push_back(zeros({1}, DType::i64));
  int64_t v;
  std::memcpy(&v, &h, sizeof v);   // the hash's bits in an i64 tensor
  pg.allgather(all, from_vector(std::vector<int64_t>{v}, {1}, DType::i64))->wait();
  for (const Tensor& t : all)
    if (t.item<int64_t>() != v) return false;
  return true;
}

}  // namespace tinyddp::dist
