#include "dist/process_group.h"

#include <algorithm>
#include <sstream>

namespace tinyddp::dist {

// A tensor that requires grad is reduced in place like any other, as 1.13's c10d does (`dist.all_reduce(loss)`
// for logging): a collective is not recorded by autograd and does not bump the version counter.
void check_collective_tensors(const std::vector<Tensor>& tensors, const char* collective) {
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    TINYDDP_CHECK(t.defined(), collective, ": tensor ", i, " is undefined.");
    TINYDDP_CHECK(t.dtype() == tensors[0].dtype(), collective, ": tensor ", i, " is ", dtype_name(t.dtype()),
                  " but tensor 0 is ", dtype_name(tensors[0].dtype()),
                  "; one call reduces one dtype (pack tensors of each dtype into their own call).");
    TINYDDP_CHECK(t.dtype() != DType::b8, collective, ": tensor ", i, " is bool; collectives reduce numbers. "
                  "Convert it first (t.to(DType::i64)) and compare the result.");
    TINYDDP_CHECK(t.is_contiguous(), collective, ": tensor ", i, " of shape ", shape_str(t.shape()),
                  " is not contiguous; collectives work on flat buffers. Pass t.contiguous() and copy back.");
  }
}

Tensor ProcessGroup::allocate_bucket(int64_t numel, DType dtype, Device device) {
  return zeros({numel}, dtype, device);
}

void check_host_tensors(const std::vector<Tensor>& tensors, const char* collective, const char* backend) {
  for (size_t i = 0; i < tensors.size(); ++i)
    TINYDDP_CHECK(tensors[i].device().is_cpu(), collective, " on the ", backend, " backend: tensor ", i, " is on ",
                  tensors[i].device().str(), ", but this backend reduces host memory. Use the nccl backend for GPU "
                  "tensors, or move them with .to(Device::cpu()).");
}

namespace {
std::string describe(const Tensor& t) {
  std::ostringstream os;
  os << dtype_name(t.dtype()) << "[" << t.numel() << "]";
  return os.str();
}
}  // namespace

const char* reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum: return "sum";
    case ReduceOp::product: return "product";
    case ReduceOp::min: return "min";
    case ReduceOp::max: return "max";
  }
  return "?";
}

// ThreadWorld::Arrival::same_signature compares exactly the fields printed here: a field added here goes there.
std::string collective_signature(const std::string& kind, const std::vector<Tensor>& tensors, const Tensor& input,
                                 ReduceOp op, int root) {
  std::ostringstream os;
  os << kind << "(";
  for (size_t i = 0; i < tensors.size(); ++i) os << (i ? ", " : "") << describe(tensors[i]);
  if (input.defined()) os << (tensors.empty() ? "" : ", ") << "input " << describe(input);
  if (kind == "broadcast") os << ", root " << root;
  if (kind == "allreduce") os << ", " << reduce_op_name(op);
  os << ")";
  return os.str();
}

std::string collective_mismatch_message(uint64_t seq, int other, const std::string& theirs, int rank,
                                        const std::string& mine) {
  return "collective #" + std::to_string(seq) + " does not match across ranks: rank " + std::to_string(other) +
         " called " + theirs + " but rank " + std::to_string(rank) + " called " + mine +
         ". Every rank must issue the same collectives in the same order with the same sizes.";
}

std::string collective_timeout_message(int rank, const std::string& kind, uint64_t seq,
                                       std::chrono::milliseconds timeout, const std::string& missing) {
  return "[Rank " + std::to_string(rank) + "] " + kind + " (collective #" + std::to_string(seq) + ") timed out after " +
         std::to_string(timeout.count()) + " ms waiting for rank(s) " + missing + ". A rank may have died, hung, or "
         "skipped this collective; check that every rank runs the same sequence of collectives.";
}

std::shared_ptr<Work> ProcessGroup::send(Tensor, int, int) {
  TINYDDP_CHECK(false, "send: the ", backend(), " backend has no point-to-point messages; the thread backend has them.");
  return nullptr;
}

std::shared_ptr<Work> ProcessGroup::recv(Tensor, int, int) {
  TINYDDP_CHECK(false, "recv: the ", backend(), " backend has no point-to-point messages; the thread backend has them.");
  return nullptr;
}

std::shared_ptr<ProcessGroup> ProcessGroup::subgroup(const std::vector<int>&) {
  TINYDDP_CHECK(false, "new_group: the ", backend(), " backend has no subgroups; the thread backend has them.");
  return nullptr;
}

std::vector<std::string> allgather_strings(ProcessGroup& pg, const std::string& mine) {
  std::vector<Tensor> lengths;
  for (int r = 0; r < pg.size(); ++r) lengths.push_back(zeros({1}, DType::i64));
  pg.allgather(lengths, full({1}, static_cast<double>(mine.size()), DType::i64))->wait();
  int64_t longest = 0;
  for (const Tensor& l : lengths) longest = std::max(longest, l.item<int64_t>());
  std::vector<int64_t> bytes(static_cast<size_t>(longest), 0);
  for (size_t i = 0; i < mine.size(); ++i) bytes[i] = static_cast<unsigned char>(mine[i]);
  std::vector<Tensor> all;
  for (int r = 0; r < pg.size(); ++r) all.push_back(zeros({longest}, DType::i64));
  pg.allgather(all, from_vector(bytes, {longest}))->wait();
  std::vector<std::string> out;
  for (int r = 0; r < pg.size(); ++r) {
    const auto v = all[r].to_vector<int64_t>();
    std::string s(static_cast<size_t>(lengths[r].item<int64_t>()), '\0');
    for (size_t i = 0; i < s.size(); ++i) s[i] = static_cast<char>(v[i]);
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace tinyddp::dist
